package io.github.vertxdedup.journal;

/**
 * Where a {@link RollSnapshotSource} writes the state that a new cycle must carry: open claims and committed
 * offsets. Valid only during the {@link RollSnapshotSource#writeSnapshot} call that received it; single-threaded.
 * The journal batches the entries into records as they come.
 */
public interface RollSnapshotWriter {

  /**
   * Carries an open claim into the new cycle (written in the current format, whatever format it was read from).
   *
   * @param claim the claim
   * @throws NullPointerException if {@code claim} is null
   */
  void claim(ClaimEntry claim);

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
