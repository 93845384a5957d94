package io.github.vertxdedup.impl.service;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.Objects;

/**
 * Where a partition deployed through {@link LocalPartition} registers its meters, and the tags that name it there:
 * its identity, stable across restarts (the Kafka consumer's window of a topic-partition is tagged {@code group},
 * {@code topic} and {@code partition}, as the consumer's own meters of the partition are).
 *
 * @param registry the registry
 * @param tags the partition's identity
 */
public record PartitionMeters(MeterRegistry registry, Tags tags) {

  /**
   * @throws NullPointerException if either is null
   */
  public PartitionMeters {
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(tags, "tags");
  }

  /**
   * The meters of the Kafka consumer's window of a topic-partition.
   *
   * @param registry the registry
   * @param groupId the consumer group
   * @param topic the topic
   * @param partition the Kafka partition
   * @return tagged {@code group}, {@code topic} and {@code partition}
   */
  public static PartitionMeters kafkaWindow(MeterRegistry registry, String groupId, String topic, int partition) {
    return new PartitionMeters(registry, Tags.of("group", groupId, "topic", topic, "partition",
        Integer.toString(partition)));
  }
}
