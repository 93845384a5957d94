package io.github.vertxdedup.journal;

/**
 * Where a {@link RollSnapshotSource} writes the state that a new cycle must carry: open claims and committed
 * offsets. Valid only during the {@link RollSnapshotSource#writeSnapshot} call that received it; single-threaded.
 * The journal batches the entries into records as they come.
 */
public interface RollSnapshotWriter {

  /**
   * Carries an open claim into the new cycle.
   *
   * @param fingerprint the id's fingerprint, not 0
   * @param keyFingerprint the business key's fingerprint, or 0
   * @param token the claim token
   * @param claimerId who holds the claim; at most {@value Journal#MAX_CLAIMER_BYTES} bytes in UTF-8
   * @param leaseEndMs when the lease ends, epoch milliseconds
   * @throws IllegalArgumentException if {@code fingerprint} is 0 or {@code claimerId} is too long
   * @throws NullPointerException if {@code claimerId} is null
   */
  void claim(long fingerprint, long keyFingerprint, long token, String claimerId, long leaseEndMs);

  /**
   * Carries a committed offset into the new cycle.
   *
   * @param topic the topic; see {@link OffsetCommit}
   * @param partition the partition, {@code >= 0}
   * @param offset the committed offset, {@code >= 0}
   * @throws IllegalArgumentException if a component is invalid
   * @throws NullPointerException if {@code topic} is null
   */
  void offsetCommit(String topic, int partition, long offset);
}
