package io.github.vertxdedup.kafka;

import java.util.Objects;

/**
 * The identity of one Kafka record as the dedup window sees it. Ids are scoped by topic and partition: every
 * assigned topic-partition has its own window, so equal ids on two topics never collide.
 *
 * @param id the event id, stable across redeliveries and producer retries; 1..maxIdBytes UTF-8 bytes
 * @param key an optional business key (it catches a producer that publishes one event again under a new id), or
 *     null; a record is a duplicate if either was seen
 * @param payloadHash an optional hash of the canonical payload, or null; the same id with another hash is a
 *     conflict and goes to the dead-letter handler
 */
public record RecordIdentity(String id, String key, String payloadHash) {

  /**
   * Validates the components.
   *
   * @param id the event id, stable across redeliveries and producer retries; 1..maxIdBytes UTF-8 bytes
   * @param key an optional business key (it catches a producer that publishes one event again under a new id), or
   *     null; a record is a duplicate if either was seen
   * @param payloadHash an optional hash of the canonical payload, or null; the same id with another hash is a
   *     conflict and goes to the dead-letter handler
   * @throws NullPointerException if {@code id} is null
   */
  public RecordIdentity {
    Objects.requireNonNull(id, "id");
  }

  /**
   * An identity of an id alone.
   *
   * @param id the event id
   * @return the identity
   */
  public static RecordIdentity of(String id) {
    return new RecordIdentity(id, null, null);
  }
}
