package io.github.vertxdedup.impl.service;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.Objects;

/**
 * Where a partition deployed through {@link LocalPartition} registers its meters, and the tags that name it there:
 * its identity, stable across restarts ({@link #windowTags}: the Kafka consumer's window of a
 * topic-partition is tagged with the {@code group}, {@code topic} and {@code partition} the consumer's own meters of
 * the partition carry).
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
   * @param address the consumer's dedup address ({@code dedup.address})
   * @param groupId the consumer group
   * @param topic the topic
   * @param partition the Kafka partition
   * @return tagged {@code address}, {@code group}, {@code topic} and {@code partition}
   *     ({@link #windowTags})
   */
  public static PartitionMeters kafkaWindow(MeterRegistry registry, String address, String groupId, String topic,
      int partition) {
    return new PartitionMeters(registry, windowTags(address, groupId, topic, partition));
  }

  /**
   * The identity of a window: the four tags every window meter carries.
   *
   * @param address the service's address, or the Kafka consumer's dedup address
   * @param group the consumer group, or "" for a partition of the service
   * @param topic the topic, or "" for a partition of the service
   * @param partition the partition's number (the Kafka partition for the consumer's window)
   * @return the tags
   */
  public static Tags windowTags(String address, String group, String topic, int partition) {
    return Tags.of("address", address, "group", group, "topic", topic, "partition", Integer.toString(partition));
  }
}
