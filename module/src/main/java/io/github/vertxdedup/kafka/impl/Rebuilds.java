package io.github.vertxdedup.kafka.impl;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
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
 * that ended: the partition is resumed then, or the consumer stops on a rebuild that failed, as on a window that
 * cannot be opened. A revocation {@link #cancel}s the rebuilds of the revoked partitions and waits for them to end
 * before their windows are handed back.
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
  private final Map<TopicPartition, WindowRebuild> running = new HashMap<>();
  private final Queue<WindowRebuild> ended = new ConcurrentLinkedQueue<>();

  /**
   * @param kafkaConfig the main consumer's config (the rebuilds read with the same settings, without the group)
   * @param ownerConfig what the owners share: the identity extractor, the clock, the window, the poll's wake-up
   * @param lookBackMs {@code lookBackMs}
   * @param pauses the paused partitions
   */
  Rebuilds(Map<String, Object> kafkaConfig, OwnerConfig<K, V> ownerConfig, long lookBackMs, Pauses<K, V> pauses) {
    this.kafkaConfig = kafkaConfig;
    this.ownerConfig = ownerConfig;
    this.lookBackMs = lookBackMs;
    this.pauses = pauses;
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
    long storeNext = assigned.lease.resumeOffset();
    WindowRebuild r;
    if (ownerConfig.changelog && ChangelogRebuild.needed(storeNext, committedOffset)) {
      // The changelog first, the source topic for what it does not cover (docs/kafka.md, "Changelog topic").
      r = new ChangelogRebuild<>(tp, ChangelogTopics.name((String) kafkaConfig.get(ConsumerConfig.GROUP_ID_CONFIG),
          tp.topic()), kafkaConfig, assigned.lease.partition(), ownerConfig.identity, ownerConfig.clock,
          ownerConfig.windowMs, lookBackMs, storeNext, committedOffset, ownerConfig.maxBatch, metrics);
    } else if (RebuildRule.needed(storeNext, committedOffset)) {
      r = new PartitionRebuild<>(tp, kafkaConfig, assigned.lease.partition(), ownerConfig.identity,
          ownerConfig.clock, ownerConfig.windowMs, lookBackMs, storeNext, committedOffset, ownerConfig.maxBatch,
          metrics, null);
    } else {
      return;
    }
    r.onDone(() -> {
      ended.add(r);
      ownerConfig.wakePoll.run();
    });
    running.put(tp, r);
    pauses.rebuilding(tp);
    r.start();
  }

  /** @return true if the partition's window is being rebuilt: its records must not reach its owner */
  boolean rebuilding(TopicPartition tp) {
    return running.containsKey(tp);
  }

  /**
   * Ends the rebuilds that finished: their partitions may be resumed by the next {@link Pauses#apply}.
   *
   * @return the failure of a rebuild that failed (the consumer stops on it), or null
   */
  RuntimeException collect() {
    RuntimeException failure = null;
    WindowRebuild r;
    while ((r = ended.poll()) != null) {
      TopicPartition tp = r.partition();
      if (running.get(tp) != r) {
        continue; // cancelled by a revocation: nothing to resume
      }
      running.remove(tp);
      try {
        r.done().get();
        pauses.rebuilt(tp);
      } catch (ExecutionException e) {
        RuntimeException cause = e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e);
        LOG.error("{}; the consumer stops and leaves the group", cause.getMessage(), cause.getCause());
        if (failure == null) {
          failure = cause;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while ending the rebuild of " + tp, e);
      }
    }
    return failure;
  }

  /**
   * Cancels the rebuilds of these partitions and waits for them to end, so that none checks an id after the
   * partition's window was handed back.
   *
   * @param tps revoked partitions
   * @param timeoutMs the longest wait, in milliseconds
   */
  void cancel(Collection<TopicPartition> tps, long timeoutMs) {
    List<WindowRebuild> cancelled = new ArrayList<>();
    for (TopicPartition tp : tps) {
      WindowRebuild r = running.remove(tp);
      if (r != null) {
        r.cancel();
        cancelled.add(r);
      }
    }
    long deadlineNs = System.nanoTime() + timeoutMs * 1_000_000L;
    for (WindowRebuild r : cancelled) {
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
