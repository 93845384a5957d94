package io.github.vertxdedup.inbox;

import java.util.Objects;

/**
 * The identity of one event as the inbox table stores it: the row's unique keys are
 * {@code (consumer_group, topic, kafka_partition, event_id)} and, where a business key is given,
 * {@code (consumer_group, topic, kafka_partition, business_key)}. Ids are scoped by group, topic and partition, as the
 * Kafka consumer's windows are. A source that is not Kafka names its own scope: for an event-bus consumer, for
 * example, its name as the group, its address as the topic and partition 0.
 *
 * @param group the consumer group (or the consumer's name), not empty
 * @param topic the topic (or the source's name), not empty
 * @param partition the partition, {@code >= 0}
 * @param id the event id, stable across redeliveries and producer retries, not empty
 * @param businessKey an optional business key (catches one event published again under a new id), or null
 * @param payloadHash an optional hash of the canonical payload, or null: the same id with another hash is a
 *     {@link InboxVerdict#CONFLICT}
 * @param rememberUntilMs the instant, epoch milliseconds on the inbox's clock, from which the row counts as absent
 *     and may be deleted; must be after the moment the entry is executed
 */
public record InboxEntry(String group, String topic, int partition, String id, String businessKey,
    String payloadHash, long rememberUntilMs) {

  /**
   * Checks the fields.
   *
   * @param group the consumer group (or the consumer's name), not empty
   * @param topic the topic (or the source's name), not empty
   * @param partition the partition, {@code >= 0}
   * @param id the event id, not empty
   * @param businessKey an optional business key, or null
   * @param payloadHash an optional hash of the canonical payload, or null
   * @param rememberUntilMs the instant, epoch milliseconds on the inbox's clock, from which the row counts as absent
   * @throws NullPointerException if {@code group}, {@code topic} or {@code id} is null
   * @throws IllegalArgumentException if {@code group}, {@code topic} or {@code id} is empty, or {@code partition}
   *     is negative (the message names the field)
   */
  public InboxEntry {
    requireText("group", group);
    requireText("topic", topic);
    requireText("id", id);
    if (partition < 0) {
      throw new IllegalArgumentException("partition must be >= 0 but was " + partition);
    }
  }

  private static void requireText(String field, String value) {
    Objects.requireNonNull(value, field);
    if (value.isEmpty()) {
      throw new IllegalArgumentException(field + " must not be empty");
    }
  }
}
