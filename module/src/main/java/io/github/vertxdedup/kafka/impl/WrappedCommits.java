package io.github.vertxdedup.kafka.impl;

import io.vertx.core.Future;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import io.vertx.kafka.client.consumer.OffsetAndMetadata;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The offset commits of a {@link WrappedConsumer}, through the application's Vert.x consumer
 * ({@link KafkaConsumer#commit(Map)}, a {@code commitSync} on the client's own thread). Each assigned partition commits
 * the offset after the last record of its owner's committable prefix ({@link PartitionOwner#committableNext}), never
 * past a record that is not done with, at most once per {@code commitIntervalMs} ({@link #commitMoved}), one commit in
 * flight at a time; a failed commit is sent again with the next one. Every offset Kafka accepted is handed to the
 * window store ({@link PartitionWindows#offsetsCommitted}), which journals it beside the accepted ids, and to the
 * owner ({@link PartitionOwner#committed}): a record-first owner runs a handler only once a commit past its record was
 * accepted, and asks for one by waking the context ({@link #commitWanted}).
 *
 * <p>Only the partitions the consumer holds now are committed: {@link WrappedAssignment} removes a revoked partition
 * from {@code owners} when the revocation reaches it, so nothing of it is sent after that, and the answer to a commit
 * sent before it is not journaled. A commit the Vert.x client runs after the rebalance it was sent before (its thread
 * runs tasks in order, and the rebalance happens inside a {@code poll}) names only records the old owner was done
 * with (in record-first mode, had decided, which its drain finishes): it can move the group's offset back over what
 * the next owner committed since (those records come back as duplicates after a later restart), never forward past a
 * record not done with (not decided).
 *
 * <p>The wrapped consumer's context only.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class WrappedCommits<K, V> {

  private static final Logger LOG = LoggerFactory.getLogger(WrappedConsumer.class);

  private final KafkaConsumer<K, V> consumer;
  /** The assigned partitions whose window is ready, shared with {@link WrappedAssignment}. */
  private final Map<TopicPartition, AssignedPartition<K, V>> owners;
  private final PartitionWindows windows;
  private final WrappedContext context;
  /** The latest commit sent; completes (never fails) once answered. */
  private Future<Void> inFlight = Future.succeededFuture();
  /** Commits failed in a row; 0 after one succeeded. */
  private int failuresInARow;

  /**
   * @param consumer the application's Vert.x consumer
   * @param owners the assigned partitions whose window is ready
   * @param windows the window store, told of every offset committed
   * @param context the wrapped consumer's context
   */
  WrappedCommits(KafkaConsumer<K, V> consumer, Map<TopicPartition, AssignedPartition<K, V>> owners,
      PartitionWindows windows, WrappedContext context) {
    this.consumer = consumer;
    this.owners = owners;
    this.windows = windows;
    this.context = context;
  }

  /** Commits the offsets that became committable since the last commit, unless a commit is still unanswered. */
  void commitMoved() {
    if (inFlight.isComplete()) {
      inFlight = commit(false);
    }
  }

  /**
   * Commits at once, unless a commit is still unanswered, if a record-first owner waits for a commit before its
   * handlers run ({@link OffsetGate}); called when an owner wakes the context. A commit asked for while another is
   * unanswered is sent once that one was accepted (after a failure, with the periodic one).
   */
  void commitWanted() {
    for (AssignedPartition<K, V> o : owners.values()) {
      if (o.owner.wantedNext() > o.committed) {
        commitMoved();
        return;
      }
    }
  }

  /**
   * Runs {@code action} on the context once the commit in flight (if any) is answered, after that answer has reached
   * the owners it covers.
   *
   * @param action what to run
   */
  void afterAnswered(Runnable action) {
    inFlight.onComplete(v -> action.run());
  }

  /**
   * Commits the offsets that became committable since the last commit, after the commit in flight is answered
   * (closing: the owners are drained).
   *
   * @return completes (never fails) once answered
   */
  Future<Void> commitAll() {
    inFlight = inFlight.compose(v -> commit(true));
    return inFlight;
  }

  /**
   * Sends the offsets that moved. A failed commit is logged at DEBUG the first time (a rebalance in progress fails
   * one, and the next commit sends the offsets again), at WARN naming the partitions and the cause from the second
   * failure in a row on (the 2nd, 4th, 8th, ...: one line per doubling, not one per {@code commitIntervalMs}), at
   * DEBUG in between, and at WARN at once when it is the last ({@code last}: the consumer is closing).
   */
  private Future<Void> commit(boolean last) {
    Map<io.vertx.kafka.client.common.TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    Map<TopicPartition, AssignedPartition<K, V>> sentTo = new HashMap<>();
    for (Map.Entry<TopicPartition, AssignedPartition<K, V>> e : owners.entrySet()) {
      AssignedPartition<K, V> o = e.getValue();
      long next = o.owner.committableNext();
      if (next > o.committed) {
        offsets.put(WrappedContext.vertx(e.getKey()), new OffsetAndMetadata(next, null));
        sentTo.put(e.getKey(), o);
      }
    }
    if (offsets.isEmpty()) {
      return Future.succeededFuture();
    }
    return context.here(consumer.commit(offsets)).transform(ar -> {
      if (ar.failed()) {
        failuresInARow++;
        if (last) {
          LOG.warn("{}: offset commit failed on close; the next owner reads the records since the last commit "
              + "again: {}", sentTo.keySet(), ar.cause().toString());
        } else if (failuresInARow >= 2 && Integer.bitCount(failuresInARow) == 1) {
          LOG.warn("{}: offset commit failed {} times in a row, sent again with the next one: {}", sentTo.keySet(),
              failuresInARow, ar.cause().toString());
        } else {
          // A rebalance in progress (a first failure), or a failure between two WARN lines: the next commit sends the
          // offsets again.
          LOG.debug("{}: offset commit failed, sent again with the next one: {}", sentTo.keySet(),
              ar.cause().toString());
        }
        return Future.succeededFuture();
      }
      failuresInARow = 0;
      sentTo.forEach((tp, o) -> {
        long offset = offsets.get(WrappedContext.vertx(tp)).getOffset();
        if (offset > o.committed) {
          o.committed = offset;
          // An owner revoked while this commit was in flight is told too: the group's offset passed these records,
          // so the next owner starts after them and a record-first owner must still handle them.
          o.owner.committed(offset);
          if (owners.get(tp) == o) {
            windows.offsetsCommitted(o.lease, offset);
          }
        }
      });
      if (!last) {
        // An owner may have asked for a commit while this one was in flight: send it once this one is done.
        context.context().runOnContext(x -> commitWanted());
      }
      return Future.succeededFuture();
    });
  }
}
