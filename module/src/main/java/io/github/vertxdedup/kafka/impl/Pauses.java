package io.github.vertxdedup.kafka.impl;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * Which assigned partitions the poll loop holds paused. A partition is paused while its owner holds
 * {@code maxBufferedPerPartition} records not yet committable, or its head waits for a lease or a 503 backoff
 * ({@link PartitionOwner#wantsPause}), and resumed when the owner is back to half of it
 * ({@link OwnerConfig#resumeMark}): the hysteresis keeps a busy partition from being paused and resumed every poll.
 * It pauses and resumes through the driver's consumer: the native one on the poll thread ({@link PollLoop}), or the
 * application's Vert.x consumer ({@link WrappedAssignment}), which also pauses a partition itself while its window is
 * not ready ({@link #held}).
 *
 * <p>The driver's thread only: the poll thread, or the wrapped consumer's context.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class Pauses<K, V> {

  private final Consumer<List<TopicPartition>> pause;
  private final Consumer<List<TopicPartition>> resume;
  /** The assigned partitions, shared with the rest of the driver. */
  private final Map<TopicPartition, AssignedPartition<K, V>> owners;
  private final int maxBuffered;
  private final Set<TopicPartition> paused = new HashSet<>();
  /** Partitions whose window is being rebuilt from the source topic: paused whatever their owner holds. */
  private final Set<TopicPartition> rebuilding = new HashSet<>();

  /**
   * @param pause pauses partitions on the Kafka consumer
   * @param resume resumes partitions on the Kafka consumer
   * @param owners the assigned partitions, kept by the driver
   * @param maxBuffered {@code maxBufferedPerPartition}
   */
  Pauses(Consumer<List<TopicPartition>> pause, Consumer<List<TopicPartition>> resume,
      Map<TopicPartition, AssignedPartition<K, V>> owners, int maxBuffered) {
    this.pause = pause;
    this.resume = resume;
    this.owners = owners;
    this.maxBuffered = maxBuffered;
  }

  /** Pauses the partitions that must wait and resumes those that may go on. */
  void apply() {
    List<TopicPartition> toPause = new ArrayList<>();
    List<TopicPartition> toResume = new ArrayList<>();
    for (Map.Entry<TopicPartition, AssignedPartition<K, V>> e : owners.entrySet()) {
      PartitionOwner<K, V> o = e.getValue().owner;
      int buffered = o.buffered();
      // Hysteresis: pause at max, resume at half of it, so a busy partition is not paused and resumed every poll.
      boolean hold = rebuilding.contains(e.getKey()) || o.wantsPause() || buffered >= maxBuffered
          || (paused.contains(e.getKey()) && buffered > OwnerConfig.resumeMark(maxBuffered));
      if (hold && paused.add(e.getKey())) {
        toPause.add(e.getKey());
      } else if (!hold && paused.remove(e.getKey())) {
        toResume.add(e.getKey());
      }
    }
    if (!toPause.isEmpty()) {
      pause.accept(toPause);
    }
    if (!toResume.isEmpty()) {
      resume.accept(toResume);
    }
  }

  /**
   * The driver paused an assigned partition itself (its window was not ready when it was assigned): the next
   * {@link #apply} resumes it unless its owner must wait.
   */
  void held(TopicPartition tp) {
    paused.add(tp);
  }

  /**
   * Pauses a newly assigned partition at once, until {@link #rebuilt}: its window is being rebuilt from the source
   * topic ({@link Rebuilds}). Inside {@code onPartitionsAssigned}, so that none of its records is returned before.
   */
  void rebuilding(TopicPartition tp) {
    rebuilding.add(tp);
    if (paused.add(tp)) {
      pause.accept(List.of(tp));
    }
  }

  /** The partition's window is whole: the next {@link #apply} resumes it unless its owner must wait. */
  void rebuilt(TopicPartition tp) {
    rebuilding.remove(tp);
  }

  /**
   * The consumer failed to pause ({@code pausing}) or resume {@code tps}: each one still assigned is recorded as it
   * was before, so that the next {@link #apply} pauses or resumes it again.
   */
  void failed(List<TopicPartition> tps, boolean pausing) {
    for (TopicPartition tp : tps) {
      if (!owners.containsKey(tp) && !rebuilding.contains(tp)) {
        continue; // revoked meanwhile
      }
      if (pausing) {
        paused.remove(tp);
      } else {
        paused.add(tp);
      }
    }
  }

  /** Forgets a partition that was revoked. */
  void forget(TopicPartition tp) {
    paused.remove(tp);
    rebuilding.remove(tp);
  }

  /** @return true if no partition is paused */
  boolean none() {
    return paused.isEmpty();
  }

  /** @return true if every assigned partition is paused */
  boolean all() {
    return paused.size() == owners.size();
  }
}
