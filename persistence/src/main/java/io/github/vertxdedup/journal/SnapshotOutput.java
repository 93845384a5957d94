package io.github.vertxdedup.journal;

/**
 * Where a {@link SnapshotCompaction} writes what the journal's records up to a position amount to: the live entries,
 * the claims still open, the committed offsets and the instant from which the journal covers every accept. A restart
 * that loads the snapshot hands the same back to its visitor ({@link Journal#replayFromSnapshot}) in place of those
 * records: an entry as an accept without key, a claim as a claim, an offset as an offset commit.
 *
 * <p>Called on the thread that writes the snapshot, one call at a time; entries in the order they should be
 * restored (journal order). Each call may throw {@link java.io.UncheckedIOException} if the file cannot be written.
 */
public interface SnapshotOutput {

  /**
   * A live entry (an id or a key).
   *
   * @param fingerprint the fingerprint, not 0
   * @param payloadHash the payload hash, or 0
   * @param firstSeenMs when it was first seen, epoch milliseconds of the owner's clock
   * @param expiresAtMs when it may be forgotten, epoch milliseconds
   */
  void entry(long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs);

  /**
   * A claim neither committed nor released, written in the current layout.
   *
   * @param claim the claim
   */
  void claim(ClaimEntry claim);

  /**
   * A committed offset (the highest of its topic-partition).
   *
   * @param topic the topic, at most 255 UTF-8 bytes
   * @param partition the partition, {@code >= 0}
   * @param offset the offset, {@code >= 0}
   */
  void offset(String topic, int partition, long offset);

  /**
   * The earliest instant the records up to the snapshot's position speak of (an accept or claim time); a later
   * call keeps the earliest. Handed back through {@link JournalVisitor#onSnapshot}.
   *
   * @param earliestMs epoch milliseconds, or {@link Long#MAX_VALUE} if none
   */
  void coveredSince(long earliestMs);
}
