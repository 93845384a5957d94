package io.github.vertxdedup.impl;

import java.util.Arrays;

/**
 * Claims in the order they were appended, which is lease-end order (the caller appends only a claim whose lease ends
 * no earlier than the last one's): a ring that grows by doubling, kept as parallel arrays, so that a committed claim
 * can be found by its lease end in O(log n) ({@link #findCommitted}) and a lapsed one by the sweep
 * ({@link #firstLeaseEndMs}, {@link #pollFirst}).
 *
 * <p>An entry keeps the claim object only while it may still lapse (the claim is live) or the caller still needs it
 * at lease end ({@link #detach} with {@code keepClaim}). Once a claim is committed, released or expired, its entry
 * keeps three numbers (lease end, id fingerprint, token) and a flag saying whether it was committed: 25 bytes, where
 * the claim object with its token text is about 140, for as long as the lease runs. A partition that claims at a high
 * rate keeps every claim of one lease (30 s by default) here, so this is most of what claims cost in memory, and
 * objects that short-lived entries no longer hold die young instead of being copied by each young collection.
 *
 * <p>Entries are named by a sequence number ({@link #addLast} returns it) that stays valid until the entry leaves the
 * queue. Confined to the partition's event loop (not thread-safe).
 */
final class ClaimQueue {

  private long[] leaseEnds = new long[16];
  private long[] idFps = new long[16];
  private long[] tokens = new long[16];
  private boolean[] committed = new boolean[16];
  /** The claim of an entry while it may lapse (or its owner asked to keep it), else null. */
  private Claim[] claims = new Claim[16];
  private int head;
  private int size;
  /** Sequence number of the entry at {@code head}. */
  private long headSeq;

  /** @return the entries queued */
  int size() {
    return size;
  }

  /** @return true if no entry is queued */
  boolean isEmpty() {
    return size == 0;
  }

  /** @return the lease end of the first entry, clock ms; {@link Long#MAX_VALUE} if empty */
  long firstLeaseEndMs() {
    return size == 0 ? Long.MAX_VALUE : leaseEnds[head];
  }

  /** @return the lease end of the last entry, clock ms; {@link Long#MIN_VALUE} if empty */
  long lastLeaseEndMs() {
    return size == 0 ? Long.MIN_VALUE : leaseEnds[index(size - 1)];
  }

  /**
   * Removes the first entry.
   *
   * @return its claim if the entry still held one (a live claim whose lease ended, or one kept with
   *     {@link #detach}), else null; also null if the queue is empty
   */
  Claim pollFirst() {
    if (size == 0) {
      return null;
    }
    Claim c = claims[head];
    claims[head] = null;
    head = (head + 1) & (claims.length - 1);
    size--;
    headSeq++;
    return c;
  }

  /**
   * Appends a claim. Amortized O(1).
   *
   * @param c a claim whose lease ends no earlier than the last one's (not checked)
   * @return the entry's sequence number, for {@link #detach}
   */
  long addLast(Claim c) {
    if (size == claims.length) {
      grow();
    }
    int i = index(size);
    leaseEnds[i] = c.leaseEndMs;
    idFps[i] = c.idFp;
    tokens[i] = c.tokenValue;
    committed[i] = false;
    claims[i] = c;
    size++;
    return headSeq + size - 1;
  }

  /**
   * The claim of an entry is no longer live: the entry drops it (unless {@code keepClaim}) and keeps its numbers
   * until its lease end. O(1). An entry that already left the queue (its lease ended) is ignored.
   *
   * @param seq the entry's sequence number, from {@link #addLast}
   * @param wasCommitted true if the claim was committed: {@link #findCommitted} then finds it until its lease ends
   * @param keepClaim true to keep the claim object for {@link #pollFirst} at lease end
   */
  void detach(long seq, boolean wasCommitted, boolean keepClaim) {
    long pos = seq - headSeq;
    if (pos < 0 || pos >= size) {
      return;
    }
    int i = index((int) pos);
    committed[i] = wasCommitted;
    if (!keepClaim) {
      claims[i] = null;
    }
  }

  /**
   * Finds a committed claim by its lease end, id and token: a binary search for the lease end, then a scan of the
   * entries that share it. O(log n + entries with that lease end).
   *
   * @param leaseEndMs the claim's lease end, clock milliseconds
   * @param idFp the claim's id fingerprint
   * @param token the claim's token value
   * @return true if an entry with these three was committed ({@link #detach} with {@code wasCommitted})
   */
  boolean findCommitted(long leaseEndMs, long idFp, long token) {
    int lo = 0;
    int hi = size;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (leaseEnds[index(mid)] < leaseEndMs) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    for (int k = lo; k < size; k++) {
      int i = index(k);
      if (leaseEnds[i] != leaseEndMs) {
        return false;
      }
      if (tokens[i] == token && idFps[i] == idFp) {
        return committed[i];
      }
    }
    return false;
  }

  /** @return the number of entries that still hold their claim object; for tests */
  int claimsHeld() {
    int n = 0;
    for (int k = 0; k < size; k++) {
      if (claims[index(k)] != null) {
        n++;
      }
    }
    return n;
  }

  private int index(int k) {
    return (head + k) & (claims.length - 1);
  }

  private void grow() {
    int n = claims.length * 2;
    long[] l = new long[n];
    long[] f = new long[n];
    long[] t = new long[n];
    boolean[] d = new boolean[n];
    Claim[] c = new Claim[n];
    for (int k = 0; k < size; k++) {
      int i = index(k);
      l[k] = leaseEnds[i];
      f[k] = idFps[i];
      t[k] = tokens[i];
      d[k] = committed[i];
      c[k] = claims[i];
    }
    Arrays.fill(claims, null);
    leaseEnds = l;
    idFps = f;
    tokens = t;
    committed = d;
    claims = c;
    head = 0;
  }
}
