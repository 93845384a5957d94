package io.github.vertxdedup.kafka.impl;

/**
 * The rule of a rebuild from the source topic, as pure arithmetic: which offsets a newly assigned partition reads
 * before its first record is handled, and until when each id read is remembered. {@link PartitionRebuild} applies it.
 *
 * <h2>What is read</h2>
 * The part of the window the local store does not cover: from the later of the store's last recorded offset commit
 * (the next offset to read; the journal holds the ids of every record before it) and the first offset whose
 * timestamp is at or after {@code now - W - lookBack} (Kafka's {@code offsetsForTimes}), up to, not including,
 * Kafka's committed offset for the group (the records before it were handled by some owner; those from it on are
 * read by the main consumer and decided as usual). Nothing is read when Kafka has no committed offset, when no
 * record is that recent, or when the store covers the committed offset already. Reading records the store holds is
 * harmless: their ids are duplicates.
 *
 * <h2>Until when</h2>
 * The old owner remembered an id for {@code W} from when it accepted the record, which this machine cannot know; the
 * record's timestamp is the nearest instant the topic keeps. A record read is remembered until
 * {@code min(t + lookBack + W, now + W)}, where {@code t} is its timestamp, or now for a timestamp in the future or
 * none ({@code -1}). A consumer that ran up to {@code lookBack} behind its topic accepted the record at most
 * {@code lookBack} after {@code t}, so with lag {@code L <= lookBack} the rebuilt window forgets no id earlier than
 * the old owner would have (it may remember one up to {@code lookBack - L} longer); with {@code L > lookBack} it
 * forgets an id up to {@code L - lookBack} earlier. An id whose remembered time would end less than
 * {@link #MIN_REMAINING_MS} from now is not restored: the window refuses a remember-until that has passed, and the
 * check restoring it reaches the window a moment after this rule was applied.
 *
 * <h2>From when the window covers</h2>
 * After a rebuild the window holds every id of a record stamped at or after the cutoff {@code now - W - lookBack}
 * that some owner handled (the store's, and those read), unless the topic no longer has some of them: retention or
 * {@code Admin.deleteRecords} removed records the store does not hold. Kafka does not say when a removed record was
 * stamped, so the rule is conservative ({@link #coverageStartMs}): when the first record at or after the cutoff is
 * the first record left (its offset is the log start offset), the log start is above 0 and the store's offsets do
 * not reach it, the records removed before it may have been inside the window, and the window covers only event
 * times after the first record left ({@code its timestamp + 1}: a removed record may carry the same millisecond);
 * an empty log whose start is above 0 covers from now. Otherwise it covers from the cutoff. Coverage never starts
 * after now, so a removed record stamped in the rebuild's own millisecond, or in the future, is taken as covered.
 *
 * <p>The rule can warn when nothing inside the window was lost: a partition that had no traffic from before the
 * cutoff until its first record left (a quiet night longer than the retention) looks exactly like one whose recent
 * records were removed, since Kafka keeps no trace of what it removed. It errs that way because a false warning
 * costs a few records taken as uncovered (their event time is older than the first record left), while a missed
 * gap would answer a re-published id as new. It trusts record timestamps to follow offsets; records whose create
 * times go back (a producer that stamps them itself, out of order) may make it cover a little too early.
 *
 * <p>Stateless; any thread.
 */
final class RebuildRule {

  /** Least remaining memory for an id to be restored, in milliseconds. */
  static final long MIN_REMAINING_MS = 100;
  /** Returned by {@link #rememberUntilMs} for a record not to restore. */
  static final long SKIP = Long.MIN_VALUE;

  private RebuildRule() {}

  /**
   * @param nowMs now, epoch milliseconds
   * @param windowMs the window {@code W}, milliseconds
   * @param lookBackMs how much further back to read, milliseconds
   * @return the earliest record timestamp read, {@code now - W - lookBack}, epoch milliseconds (at least 0)
   */
  static long cutoffMs(long nowMs, long windowMs, long lookBackMs) {
    return Math.max(0, nowMs - windowMs - lookBackMs);
  }

  /**
   * @param storeNextOffset the local store's last recorded offset commit (the next offset to read), or -1 if none
   * @param firstRecentOffset the first offset whose timestamp is at or after {@link #cutoffMs}, or -1 if there is
   *     none ({@code offsetsForTimes} answered null)
   * @param committedOffset Kafka's committed offset for the group, or -1 if none
   * @return the first offset to read; the rebuild reads {@code [start, committedOffset)}, nothing when
   *     {@code start >= committedOffset}
   */
  static long startOffset(long storeNextOffset, long firstRecentOffset, long committedOffset) {
    if (committedOffset < 0 || firstRecentOffset < 0) {
      return Math.max(committedOffset, 0);
    }
    return Math.min(committedOffset, Math.max(storeNextOffset, firstRecentOffset));
  }

  /**
   * @param storeNextOffset the local store's last recorded offset commit, or -1 if none
   * @param committedOffset Kafka's committed offset for the group, or -1 if none
   * @return true if the partition may need a rebuild: Kafka has a committed offset past what the store covers
   */
  static boolean needed(long storeNextOffset, long committedOffset) {
    return committedOffset > 0 && storeNextOffset < committedOffset;
  }

  /**
   * @param cutoffMs {@link #cutoffMs}, epoch milliseconds
   * @param storeNextOffset the local store's last recorded offset commit (the next offset to read), or -1 if none
   * @param logStartOffset the partition's log start offset ({@code beginningOffsets}): every record before it was
   *     removed
   * @param logEndOffset the partition's log end offset ({@code endOffsets})
   * @param firstRecentOffset the first offset whose timestamp is at or after the cutoff, or -1 if there is none
   * @param firstRecentTimestampMs that record's timestamp, epoch milliseconds (ignored without one)
   * @param nowMs now, epoch milliseconds
   * @return the earliest event time the rebuilt window covers, epoch milliseconds, in {@code cutoffMs..nowMs}
   *     (see the type comment)
   */
  static long coverageStartMs(long cutoffMs, long storeNextOffset, long logStartOffset, long logEndOffset,
      long firstRecentOffset, long firstRecentTimestampMs, long nowMs) {
    if (!lostRecentRecords(storeNextOffset, logStartOffset, logEndOffset, firstRecentOffset)) {
      return Math.min(cutoffMs, nowMs);
    }
    if (firstRecentOffset < 0) {
      return nowMs; // nothing left at all: whatever was removed may have been stamped up to now
    }
    return Math.min(nowMs, Math.max(cutoffMs, firstRecentTimestampMs + 1));
  }

  /**
   * @return true if records removed from the log (before its start) may have been inside the window while the store
   *     does not hold them: see {@link #coverageStartMs}
   */
  static boolean lostRecentRecords(long storeNextOffset, long logStartOffset, long logEndOffset,
      long firstRecentOffset) {
    if (logStartOffset <= 0 || storeNextOffset >= logStartOffset) {
      return false;
    }
    return firstRecentOffset < 0 ? logStartOffset >= logEndOffset : firstRecentOffset == logStartOffset;
  }

  /**
   * @param timestampMs the record's timestamp, epoch milliseconds, or -1 if it has none
   * @param nowMs now, epoch milliseconds
   * @param windowMs the window {@code W}, milliseconds
   * @param lookBackMs {@code lookBackMs}
   * @return until when the record's id is remembered, epoch milliseconds, or {@link #SKIP} if it would be forgotten
   *     within {@link #MIN_REMAINING_MS}
   */
  static long rememberUntilMs(long timestampMs, long nowMs, long windowMs, long lookBackMs) {
    long anchor = timestampMs < 0 || timestampMs > nowMs ? nowMs : timestampMs;
    long until = Math.min(anchor + lookBackMs + windowMs, nowMs + windowMs);
    return until - nowMs < MIN_REMAINING_MS ? SKIP : until;
  }
}
