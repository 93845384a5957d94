package io.github.vertxdedup.journal;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A committed consumer offset for one topic-partition, as journaled in an {@code OFFSETS} record.
 *
 * @param topic the topic name; not empty, at most {@value #MAX_TOPIC_BYTES} bytes in UTF-8
 * @param partition the partition number, {@code >= 0}
 * @param offset the committed offset (the next offset to consume, as Kafka defines it), {@code >= 0}
 */
public record OffsetCommit(String topic, int partition, long offset) {

  /** Largest topic name in UTF-8 bytes (Kafka allows 249 ASCII characters). */
  public static final int MAX_TOPIC_BYTES = 255;

  /**
   * Validates the components.
   *
   * @param topic the topic name; not empty, at most {@value #MAX_TOPIC_BYTES} bytes in UTF-8
   * @param partition the partition number, {@code >= 0}
   * @param offset the committed offset (the next offset to consume), {@code >= 0}
   * @throws NullPointerException if {@code topic} is null
   * @throws IllegalArgumentException if {@code topic} is empty or too long, or {@code partition} or {@code offset}
   *     is negative
   */
  public OffsetCommit {
    Objects.requireNonNull(topic, "topic");
    checkTopic(topic);
    if (partition < 0) {
      throw new IllegalArgumentException("partition must be >= 0 but was " + partition);
    }
    if (offset < 0) {
      throw new IllegalArgumentException("offset must be >= 0 but was " + offset);
    }
  }

  /**
   * Returns the topic-partition of this commit.
   *
   * @return a new {@link SourcePartition}
   */
  public SourcePartition topicPartition() {
    return new SourcePartition(topic, partition);
  }

  static byte[] checkTopic(String topic) {
    if (topic.isEmpty()) {
      throw new IllegalArgumentException("topic must not be empty");
    }
    byte[] utf8 = topic.getBytes(StandardCharsets.UTF_8);
    if (utf8.length > MAX_TOPIC_BYTES) {
      throw new IllegalArgumentException(
          "topic must be <= " + MAX_TOPIC_BYTES + " bytes in UTF-8 but was " + utf8.length);
    }
    return utf8;
  }
}
