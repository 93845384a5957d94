package io.github.vertxdedup.journal;

import java.util.Arrays;

/**
 * A reusable buffer of accepted ids that {@link Journal#appendAccepts} writes as one record: the group-commit form
 * that amortises the per-record cost over many ids. Fill it with {@link #add}, append it, {@link #clear} it.
 *
 * <p>A batch holds at most {@value #MAX_SIZE} ids, so that it fits one record and is journaled all or nothing.
 * Not thread-safe: the owner's thread fills and appends it.
 */
public final class AcceptBatch {

  /** Most ids in one batch (and so in one record): 65,536 ids take at most 2.6 MB. */
  public static final int MAX_SIZE = 1 << 16;

  long[] fingerprints;
  long[] keyFingerprints;
  long[] payloadHashes;
  long[] acceptedAtMs;
  long[] expiresAtMs;
  int size;
  boolean anyKey;
  boolean anyPayload;

  /**
   * Creates an empty batch.
   *
   * @param initialCapacity ids it holds before it grows, {@code 1..}{@value #MAX_SIZE}
   * @throws IllegalArgumentException if {@code initialCapacity} is out of range
   */
  public AcceptBatch(int initialCapacity) {
    if (initialCapacity < 1 || initialCapacity > MAX_SIZE) {
      throw new IllegalArgumentException(
          "initialCapacity must be in [1, " + MAX_SIZE + "] but was " + initialCapacity);
    }
    fingerprints = new long[initialCapacity];
    keyFingerprints = new long[initialCapacity];
    payloadHashes = new long[initialCapacity];
    acceptedAtMs = new long[initialCapacity];
    expiresAtMs = new long[initialCapacity];
  }

  /**
   * Adds an accepted id. O(1) amortised.
   *
   * @param fingerprint the id's fingerprint, not 0
   * @param keyFingerprint the business key's fingerprint, or 0 if none
   * @param payloadHash the payload's hash, or 0 if none
   * @param acceptedAtMs when it was accepted, epoch milliseconds
   * @param expiresAtMs when it may be forgotten (remember-until), epoch milliseconds, {@code > acceptedAtMs}
   * @return this batch
   * @throws IllegalArgumentException if {@code fingerprint} is 0, {@code expiresAtMs <= acceptedAtMs}
   * @throws IllegalStateException if the batch already holds {@value #MAX_SIZE} ids
   */
  public AcceptBatch add(long fingerprint, long keyFingerprint, long payloadHash, long acceptedAtMs,
      long expiresAtMs) {
    JournalWriter.checkAccept(fingerprint, acceptedAtMs, expiresAtMs);
    if (size == fingerprints.length) {
      grow();
    }
    int i = size++;
    fingerprints[i] = fingerprint;
    keyFingerprints[i] = keyFingerprint;
    payloadHashes[i] = payloadHash;
    this.acceptedAtMs[i] = acceptedAtMs;
    this.expiresAtMs[i] = expiresAtMs;
    anyKey |= keyFingerprint != 0;
    anyPayload |= payloadHash != 0;
    return this;
  }

  /**
   * Returns the number of ids held.
   *
   * @return {@code 0..}{@value #MAX_SIZE}
   */
  public int size() {
    return size;
  }

  /**
   * Returns whether the batch holds no id.
   *
   * @return true if empty
   */
  public boolean isEmpty() {
    return size == 0;
  }

  /**
   * Empties the batch, keeping its capacity. O(1).
   *
   * @return this batch
   */
  public AcceptBatch clear() {
    size = 0;
    anyKey = false;
    anyPayload = false;
    return this;
  }

  private void grow() {
    if (size >= MAX_SIZE) {
      throw new IllegalStateException("an AcceptBatch holds at most " + MAX_SIZE + " ids; append it and clear it");
    }
    int capacity = Math.min(MAX_SIZE, fingerprints.length * 2);
    fingerprints = Arrays.copyOf(fingerprints, capacity);
    keyFingerprints = Arrays.copyOf(keyFingerprints, capacity);
    payloadHashes = Arrays.copyOf(payloadHashes, capacity);
    acceptedAtMs = Arrays.copyOf(acceptedAtMs, capacity);
    expiresAtMs = Arrays.copyOf(expiresAtMs, capacity);
  }
}
