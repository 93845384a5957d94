package io.github.vertxdedup.kafka.impl;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * Which assigned partitions the poll loop holds paused. A partition is paused while its owner holds
 * {@code maxBufferedPerPartition} records not yet committable, or its head waits for a lease or a 503 backoff
 * ({@link PartitionOwner#wantsPause}), and resumed when the owner is back to half of it
 * ({@link OwnerConfig#resumeMark}): the hysteresis keeps a busy partition from being paused and resumed every poll.
 *
 * <p>Poll thread only.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class Pauses<K, V> {

  private final KafkaConsumer<K, V> consumer;
  /** The assigned partitions, shared with the rest of the poll loop. */
  private final Map<TopicPartition, AssignedPartition<K, V>> owners;
  private final int maxBuffered;
  private final Set<TopicPartition> paused = new HashSet<>();

  /**
   * @param consumer the Kafka consumer
   * @param owners the assigned partitions, kept by the poll loop
   * @param maxBuffered {@code maxBufferedPerPartition}
   */
  Pauses(KafkaConsumer<K, V> consumer, Map<TopicPartition, AssignedPartition<K, V>> owners, int maxBuffered) {
    this.consumer = consumer;
    this.owners = owners;
    this.maxBuffered = maxBuffered;
  }

  /** Pauses the partitions that must wait and resumes those that may go on. */
  void apply() {
    List<TopicPartition> pause = new ArrayList<>();
    List<TopicPartition> resume = new ArrayList<>();
    for (Map.Entry<TopicPartition, AssignedPartition<K, V>> e : owners.entrySet()) {
      PartitionOwner<K, V> o = e.getValue().owner;
      int buffered = o.buffered();
      // Hysteresis: pause at max, resume at half of it, so a busy partition is not paused and resumed every poll.
      boolean hold = o.wantsPause() || buffered >= maxBuffered
          || (paused.contains(e.getKey()) && buffered > OwnerConfig.resumeMark(maxBuffered));
      if (hold && paused.add(e.getKey())) {
        pause.add(e.getKey());
      } else if (!hold && paused.remove(e.getKey())) {
        resume.add(e.getKey());
      }
    }
    if (!pause.isEmpty()) {
      consumer.pause(pause);
    }
    if (!resume.isEmpty()) {
      consumer.resume(resume);
    }
  }

  /** Forgets a partition that was revoked. */
  void forget(TopicPartition tp) {
    paused.remove(tp);
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
