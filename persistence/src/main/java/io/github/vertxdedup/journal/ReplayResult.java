package io.github.vertxdedup.journal;

import java.time.Duration;

/**
 * What a replay read.
 *
 * @param startCycle the roll cycle the replay started from (the oldest that may hold a live entry), or -1 if the
 *     journal was empty
 * @param cyclesRead cycles read
 * @param cyclesSkipped older cycles not read because every entry in them had expired
 * @param recordsRead records (queue excerpts) read, torn ones included
 * @param accepts accept entries delivered
 * @param claims claim entries delivered (carried-over ones included)
 * @param commits commit entries delivered
 * @param releases release entries delivered
 * @param offsetCommits offset entries delivered (carried-over ones included)
 * @param liveIds accepts whose {@code expiresAtMs} was after the replay's start time
 * @param tornRecords records skipped because their length or checksum was wrong (a torn tail after a crash, or
 *     damage); each was logged as a warning
 * @param elapsed how long the replay took
 * @param snapshotIndex the journal index up to which a snapshot stood for the records
 *     ({@link Journal#replayFromSnapshot}), or {@link Journal#NO_INDEX} if no snapshot was used; the counts above
 *     are then those of the records after it
 * @param snapshotEntries the live entries the snapshot held (delivered as accepts, or taken in place by the visitor:
 *     {@link JournalVisitor#onSnapshotEntriesInPlace}), 0 without a snapshot
 */
public record ReplayResult(int startCycle, int cyclesRead, int cyclesSkipped, long recordsRead, long accepts,
    long claims, long commits, long releases, long offsetCommits, long liveIds, long tornRecords,
    Duration elapsed, long snapshotIndex, long snapshotEntries) {

  /**
   * Returns every entry delivered to the visitor.
   *
   * @return accepts + claims + commits + releases + offset commits
   */
  public long entries() {
    return accepts + claims + commits + releases + offsetCommits;
  }

  /**
   * Returns the replay rate.
   *
   * @return entries per second, or 0 if nothing was read
   */
  public double entriesPerSecond() {
    long nanos = elapsed.toNanos();
    return nanos == 0 ? 0 : entries() * 1e9 / nanos;
  }
}
