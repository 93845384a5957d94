package io.github.vertxdedup.kafka.impl;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rebuilds from the source topic of the poll loop's newly assigned partitions ({@link PartitionRebuild}), or,
 * with the changelog on, from the changelog topic and the source topic for what it does not cover
 * ({@link ChangelogRebuild}, also where the store recorded nothing: {@link ChangelogRebuild#needed}), and
 * the pause that holds each partition's records back until its window is whole. {@link PartitionAssignment} starts
 * one when Kafka's committed offset for the group lies past what the window store covers
 * ({@link RebuildRule#needed}), right after it seeked the partition, and the partition is paused on the main consumer
 * inside {@code onPartitionsAssigned}, before any of its records can be returned. The poll loop goes on meanwhile
 * (the group sees a live member, the other partitions flow) and, before each poll, {@link #collect}s the rebuilds
 * that ended: the partition is resumed then. A revocation {@link #cancel}s the rebuilds of the revoked partitions
 * and waits for them to end before their windows are handed back.
 *
 * <h2>A rebuild that fails</h2>
 * A rebuild fails when the source topic cannot be read (no ACL, a deleted topic, a record the deserializer rejects,
 * the broker unreachable for longer than the rebuild's retry budget). Its partition is left unhandled: it stays
 * paused, none of its records reaches its owner, and it is rebuilt again {@code retryMs} later, and again after
 * each failure, for as long as it stays assigned here, so that a fixed ACL heals it without a restart. The other
 * partitions keep flowing, and the consumer stays in the group. The first failure of each episode (until a rebuild of
 * the partition succeeds or the partition leaves) is logged at ERROR and handed to {@code report} (the consumer's
 * exception handler); each failure counts in {@code dedup.kafka.rebuild.failures}. This differs from a window that
 * cannot be opened, which stops the consumer: a window store that fails is this machine's fault, which another
 * member may not have, while a topic this consumer cannot read is the same for every member of the group, so
 * handing the partition on would only move the fault.
 *
 * <p>Poll thread only; the rebuilds' threads only add to {@code ended}.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class Rebuilds<K, V> {

  private static final Logger LOG = LoggerFactory.getLogger(DedupKafkaConsumerImpl.class);

  private final Map<String, Object> kafkaConfig;
  private final OwnerConfig<K, V> ownerConfig;
  private final long lookBackMs;
  private final Pauses<K, V> pauses;
  private final long retryMs;
  private final Consumer<Throwable> report;
  private final Map<TopicPartition, WindowRebuild<?>> running = new HashMap<>();
  /** Partitions whose rebuild failed, waiting for the next attempt. */
  private final Map<TopicPartition, Retry<K, V>> waiting = new HashMap<>();
  /** What is needed to start a partition's rebuild again, and its failures in a row. */
  private final Map<TopicPartition, Retry<K, V>> started = new HashMap<>();
  private final Queue<WindowRebuild<?>> ended = new ConcurrentLinkedQueue<>();

  /** A rebuild's arguments, the failures in a row, and when to try again ({@link System#nanoTime}). */
  private static final class Retry<K, V> {
    final AssignedPartition<K, V> assigned;
    final long committedOffset;
    final KafkaMetrics metrics;
    int failures;
    long dueNs;

    Retry(AssignedPartition<K, V> assigned, long committedOffset, KafkaMetrics metrics) {
      this.assigned = assigned;
      this.committedOffset = committedOffset;
      this.metrics = metrics;
    }
  }

  /**
   * @param kafkaConfig the main consumer's config (the rebuilds read with the same settings, without the group)
   * @param ownerConfig what the owners share: the identity extractor, the clock, the window, the poll's wake-up
   * @param lookBackMs {@code lookBackMs}
   * @param pauses the paused partitions
   * @param retryMs how long after a failed rebuild its partition is rebuilt again, milliseconds
   *     ({@code backoffMaxMs})
   * @param report receives the first failure of each episode (the consumer's exception handler); poll thread
   */
  Rebuilds(Map<String, Object> kafkaConfig, OwnerConfig<K, V> ownerConfig, long lookBackMs, Pauses<K, V> pauses,
      long retryMs, Consumer<Throwable> report) {
    this.kafkaConfig = kafkaConfig;
    this.ownerConfig = ownerConfig;
    this.lookBackMs = lookBackMs;
    this.pauses = pauses;
    this.retryMs = retryMs;
    this.report = report;
  }

  /**
   * Starts the rebuild of a newly assigned partition if the store does not cover Kafka's committed offset, and
   * pauses the partition until it ends. Inside {@code onPartitionsAssigned}, after the seek.
   *
   * @param tp the partition
   * @param assigned its owner and window
   * @param committedOffset Kafka's committed offset for the group, or -1 if none
   * @param metrics the partition's meters
   */
  void startIfNeeded(TopicPartition tp, AssignedPartition<K, V> assigned, long committedOffset,
      KafkaMetrics metrics) {
    WindowRebuild<?> r = create(tp, kafkaConfig, ownerConfig, lookBackMs, assigned.lease, committedOffset, metrics);
    if (r == null) {
      return;
    }
    started.put(tp, new Retry<>(assigned, committedOffset, metrics));
    pauses.rebuilding(tp);
    start(tp, r);
  }

  /**
   * The rebuild a newly assigned partition needs, not started: in INBOX mode from the inbox table's live rows of the
   * partition ({@link InboxRebuild}), always; else from the changelog and the source topic with the
   * changelog on ({@link ChangelogRebuild#needed}), else from the source topic when Kafka's committed offset lies past
   * what the window store covers ({@link RebuildRule#needed}). Shared by both drivers: the poll loop's
   * ({@link #startIfNeeded}) and a wrapped Vert.x consumer's ({@link WrappedAssignment}), which hold the partition
   * back each with their own fence until the rebuild ends.
   *
   * @param tp the partition
   * @param kafkaConfig the consumer's config (the rebuild reads with it, without the group)
   * @param ownerConfig what the owners share: the identity extractor, the clock, the window, {@code maxBatch}
   * @param lookBackMs {@code lookBackMs}
   * @param lease the partition's window, ready
   * @param committedOffset Kafka's committed offset for the group, or -1 if none
   * @param metrics the partition's meters
   * @return the rebuild, or null if none is needed
   */
  static <K, V> WindowRebuild<?> create(TopicPartition tp, Map<String, Object> kafkaConfig,
      OwnerConfig<K, V> ownerConfig, long lookBackMs, PartitionWindows.Lease lease, long committedOffset,
      KafkaMetrics metrics) {
    // The store's offset is read at each attempt: a failed attempt may have journaled some ids (being checks), but
    // never an offset, so it is the same as at the first attempt.
    if (ownerConfig.inbox != null) {
      // INBOX: the inbox table is the durable memory; its live rows are exactly the ids whose effects committed.
      return new InboxRebuild<>(tp, ownerConfig.inbox, lease.partition(), ownerConfig.clock, ownerConfig.maxBatch,
          metrics);
    }
    long storeNext = lease.resumeOffset();
    if (ownerConfig.changelog && ChangelogRebuild.needed(storeNext, committedOffset)) {
      // The changelog first, the source topic for what it does not cover (docs/kafka.md, "Changelog topic").
      return new ChangelogRebuild<>(tp, ChangelogTopics.name((String) kafkaConfig.get(ConsumerConfig.GROUP_ID_CONFIG),
          tp.topic()), kafkaConfig, lease.partition(), ownerConfig.identity, ownerConfig.clock,
          ownerConfig.windowMs, lookBackMs, storeNext, committedOffset, ownerConfig.maxBatch, metrics);
    }
    if (RebuildRule.needed(storeNext, committedOffset)) {
      return new PartitionRebuild<>(tp, kafkaConfig, lease.partition(), ownerConfig.identity, ownerConfig.clock,
          ownerConfig.windowMs, lookBackMs, storeNext, committedOffset, ownerConfig.maxBatch, metrics, null);
    }
    return null;
  }

  private void start(TopicPartition tp, WindowRebuild<?> r) {
    r.onDone(() -> {
      ended.add(r);
      ownerConfig.wakePoll.run();
    });
    running.put(tp, r);
    r.start();
  }

  /**
   * @return true if the partition's window is being rebuilt, or waits to be rebuilt again after a failure: its
   *     records must not reach its owner
   */
  boolean rebuilding(TopicPartition tp) {
    return running.containsKey(tp) || waiting.containsKey(tp);
  }

  /**
   * Ends the rebuilds that finished: the partitions of those that succeeded may be resumed by the next
   * {@link Pauses#apply}; those that failed wait {@code retryMs} (see the type comment). Starts the retries that are
   * due.
   */
  void collect() {
    WindowRebuild<?> r;
    while ((r = ended.poll()) != null) {
      TopicPartition tp = r.partition();
      if (running.get(tp) != r) {
        continue; // cancelled by a revocation: nothing to resume
      }
      running.remove(tp);
      Retry<K, V> a = started.get(tp);
      try {
        r.done().get();
        if (a.failures > 0) {
          LOG.info("{}: window rebuilt after {} failed attempts; the partition is handled",
              tp, a.failures);
        }
        started.remove(tp);
        pauses.rebuilt(tp);
      } catch (ExecutionException e) {
        RuntimeException cause = e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e);
        a.failures++;
        a.dueNs = System.nanoTime() + retryMs * 1_000_000L;
        waiting.put(tp, a);
        if (a.failures == 1) {
          LOG.error("{}; the partition is left unhandled (paused, its records not handed to its owner) and rebuilt"
              + " again every {} ms (backoffMaxMs) while it stays assigned here", cause.getMessage(), retryMs,
              cause.getCause());
          report.accept(cause);
        } else {
          LOG.debug("{}; failed attempt {}, the next in {} ms", cause.getMessage(), a.failures, retryMs);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while ending the rebuild of " + tp, e);
      }
    }
    if (!waiting.isEmpty()) {
      long now = System.nanoTime();
      List<TopicPartition> due = new ArrayList<>();
      waiting.forEach((tp, a) -> {
        if (now - a.dueNs >= 0) {
          due.add(tp);
        }
      });
      for (TopicPartition tp : due) {
        Retry<K, V> a = waiting.remove(tp);
        WindowRebuild<?> again = create(tp, kafkaConfig, ownerConfig, lookBackMs, a.assigned.lease, a.committedOffset,
            a.metrics);
        if (again == null) {
          started.remove(tp);
          pauses.rebuilt(tp);
        } else {
          start(tp, again);
        }
      }
    }
  }

  /**
   * Cancels the rebuilds of these partitions and waits for them to end, so that none checks an id after the
   * partition's window was handed back.
   *
   * @param tps revoked partitions
   * @param timeoutMs the longest wait, in milliseconds
   */
  void cancel(Collection<TopicPartition> tps, long timeoutMs) {
    List<WindowRebuild<?>> cancelled = new ArrayList<>();
    for (TopicPartition tp : tps) {
      waiting.remove(tp);
      started.remove(tp);
      WindowRebuild<?> r = running.remove(tp);
      if (r != null) {
        r.cancel();
        cancelled.add(r);
      }
    }
    long deadlineNs = System.nanoTime() + timeoutMs * 1_000_000L;
    for (WindowRebuild<?> r : cancelled) {
      try {
        long leftMs = Math.max(1, (deadlineNs - System.nanoTime()) / 1_000_000L);
        if (!r.awaitEnd(leftMs)) {
          LOG.warn("the cancelled rebuild of {} did not end within {} ms", r.partition(), timeoutMs);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
