package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.inbox.DedupInbox;
import io.github.vertxdedup.inbox.InboxEntry;
import io.github.vertxdedup.inbox.InboxResult;
import io.github.vertxdedup.inbox.InboxRow;
import io.github.vertxdedup.kafka.InboxRecordHandler;
import io.github.vertxdedup.kafka.RecordHandler;
import io.github.vertxdedup.kafka.RecordIdentity;
import io.github.vertxdedup.time.DedupClock;
import io.vertx.core.Future;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.common.TopicPartition;

/**
 * {@link io.github.vertxdedup.kafka.AtomicityMode#INBOX}: how a {@link PartitionOwner} runs an accepted record's
 * effect. The owner claims the id in its window exactly as in effect-first mode; where effect-first calls the
 * record handler, it calls {@link #run}: one inbox transaction (the record's row, the application's writes, the
 * commit). Its outcome goes through the owner's effect-first path: applied, or a duplicate the inbox knew and the
 * window did not, and the claim is committed (the window remembers the id from then on); failed, and the claim is given
 * back and the record retried with backoff, then dead-lettered; a conflict, and the claim is given back (the window
 * must not remember this payload under the id) and the record dead-lettered.
 *
 * <p>Immutable; {@link #run} is called on the owner's event loop.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class InboxCalls<K, V> {

  /** The inbox holds the record's id (or business key) with another payload hash: dead-letter it. */
  static final class Conflict extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Conflict(String message) {
      super(message, null, false, false);
    }
  }

  private final DedupInbox inbox;
  private final InboxRecordHandler<K, V> handler;
  private final String group;
  private final long windowMs;
  private final DedupClock clock;

  /**
   * @param inbox the inbox
   * @param handler the application's writes
   * @param group the consumer group, the rows' {@code consumer_group}
   * @param windowMs the window {@code W}: a row is remembered until the transaction's start plus {@code W}
   * @param clock the clock of the windows (the remember-until instants)
   */
  InboxCalls(DedupInbox inbox, InboxRecordHandler<K, V> handler, String group, long windowMs, DedupClock clock) {
    this.inbox = Objects.requireNonNull(inbox, "inbox");
    this.handler = Objects.requireNonNull(handler, "handler");
    this.group = Objects.requireNonNull(group, "group");
    this.windowMs = windowMs;
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * Runs the record's transaction.
   *
   * @param tp the record's topic-partition
   * @param pending the record, with an identity
   * @return the inbox's verdict; fails as {@link DedupInbox#execute} (the handler's failure, or the database's)
   */
  Future<InboxResult<Void>> run(TopicPartition tp, PendingRecord<K, V> pending) {
    RecordIdentity id = pending.identity;
    InboxEntry entry = new InboxEntry(group, tp.topic(), tp.partition(), id.id(), id.key(), id.payloadHash(),
        clock.nowMs() + windowMs);
    return inbox.execute(entry, conn -> handler.handle(pending.record, conn));
  }

  /**
   * Reads a page of the partition's live inbox rows, for {@link InboxRebuild}.
   *
   * @param tp the partition
   * @param after the last row of the previous page, or null
   * @param limit rows per page
   * @return the rows
   */
  Future<List<InboxRow>> liveRows(TopicPartition tp, InboxRow after, int limit) {
    return inbox.liveRows(group, tp.topic(), tp.partition(), after, limit);
  }

  /**
   * @param result the inbox's {@link io.github.vertxdedup.inbox.InboxVerdict#CONFLICT}
   * @param pending the record
   * @return the detail of its dead letter: the stored row's times, in milliseconds
   */
  static String conflictDetail(InboxResult<?> result, PendingRecord<?, ?> pending) {
    return "id '" + pending.identity.id() + "' is in the inbox with another payload hash (first seen at "
        + result.firstSeenMs() + " ms, remembered until " + result.rememberUntilMs() + " ms)";
  }

  /** @return the record handler of the owner configuration in INBOX mode, where {@link #run} is called instead */
  static <K, V> RecordHandler<K, V> notCalled() {
    return record -> Future.failedFuture(new IllegalStateException("mode INBOX runs the inbox handler"));
  }
}
