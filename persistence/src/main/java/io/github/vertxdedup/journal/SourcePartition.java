package io.github.vertxdedup.journal;

import java.util.Objects;

/**
 * A consumer topic-partition whose committed offset the journal keeps.
 *
 * @param topic the topic name; not empty, at most {@value OffsetCommit#MAX_TOPIC_BYTES} bytes in UTF-8
 * @param partition the partition number, {@code >= 0}
 */
public record SourcePartition(String topic, int partition) {

  /**
   * Validates the components.
   *
   * @param topic the topic name; not empty, at most {@value OffsetCommit#MAX_TOPIC_BYTES} bytes in UTF-8
   * @param partition the partition number, {@code >= 0}
   * @throws NullPointerException if {@code topic} is null
   * @throws IllegalArgumentException if {@code topic} is empty or too long, or {@code partition} is negative
   */
  public SourcePartition {
    Objects.requireNonNull(topic, "topic");
    OffsetCommit.checkTopic(topic);
    if (partition < 0) {
      throw new IllegalArgumentException("partition must be >= 0 but was " + partition);
    }
  }
}
