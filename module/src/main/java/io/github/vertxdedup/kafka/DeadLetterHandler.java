package io.github.vertxdedup.kafka;

import io.github.vertxdedup.kafka.impl.KafkaDeadLetterSender;
import io.vertx.core.Future;
import io.vertx.kafka.client.producer.KafkaProducer;

/**
 * Receives the records that will not reach the record handler (a dead-letter topic, a table, a log).
 * Called on the partition's event loop, in offset order with the handled records. A failed future is retried with
 * backoff until it succeeds (the partition waits: its order is kept and the record is not dropped silently).
 * {@link #toTopic} is one that sends them to a Kafka topic.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
@FunctionalInterface
public interface DeadLetterHandler<K, V> {

  /** Header of a dead letter sent by {@link #toTopic}: the {@link DeadLetter.Reason}'s name, e.g. {@code CONFLICT}. */
  String REASON_HEADER = "dedup.reason";

  /** Header of a dead letter sent by {@link #toTopic}: {@link DeadLetter#detail()}, UTF-8. */
  String DETAIL_HEADER = "dedup.detail";

  /** Header of a dead letter sent by {@link #toTopic}: {@link DeadLetter#attempts()}, in decimal. */
  String ATTEMPTS_HEADER = "dedup.attempts";

  /** Header of a dead letter sent by {@link #toTopic}: the topic the record was consumed from. */
  String SOURCE_TOPIC_HEADER = "dedup.source.topic";

  /** Header of a dead letter sent by {@link #toTopic}: the partition it was consumed from, in decimal. */
  String SOURCE_PARTITION_HEADER = "dedup.source.partition";

  /** Header of a dead letter sent by {@link #toTopic}: its offset in that partition, in decimal. */
  String SOURCE_OFFSET_HEADER = "dedup.source.offset";

  /**
   * A handler that sends each dead letter to {@code topic} with {@code producer}: the record's key and value, its
   * headers as they came (a header without a value included), and after them the headers {@value #REASON_HEADER},
   * {@value #DETAIL_HEADER}, {@value #ATTEMPTS_HEADER}, {@value #SOURCE_TOPIC_HEADER},
   * {@value #SOURCE_PARTITION_HEADER} and {@value #SOURCE_OFFSET_HEADER}, values in UTF-8 (a record dead-lettered
   * twice, say after a replay from the dead-letter topic, carries both sets: read the last). The partition is the
   * producer's choice (by key), the timestamp the producer's (now).
   *
   * <p>The returned future completes when the producer's send does: when the broker has acknowledged the record as
   * the producer's {@code acks} asks ({@code all} by default, every in-sync replica). A failed send (the broker
   * unreachable past {@code delivery.timeout.ms}, a record over {@code max.request.size}, no right to write the
   * topic) fails it, and the consumer sends the dead letter again after a backoff while the partition waits; a
   * failure no retry mends stops that partition until the application acts, and every retry is logged at WARN.
   *
   * <p>The producer stays the application's: close it after the consumer. Its serializers must take the consumer's
   * key and value types (for {@code String} records, {@code StringSerializer}). Send to another topic than the one
   * consumed. Thread-safe, as the producer is; one handler may serve several consumers.
   *
   * @param producer the Vert.x Kafka producer
   * @param topic the dead-letter topic
   * @param <K> the record key type
   * @param <V> the record value type
   * @return the handler
   * @throws NullPointerException if {@code producer} is null
   * @throws IllegalArgumentException if {@code topic} is not a Kafka topic name (null, empty, longer than 249
   *     characters, a character outside {@code [a-zA-Z0-9._-]}, or {@code .} or {@code ..}); the message names it
   */
  static <K, V> DeadLetterHandler<K, V> toTopic(KafkaProducer<K, V> producer, String topic) {
    return new KafkaDeadLetterSender<>(producer, topic);
  }

  /**
   * @param deadLetter the record and why
   * @return completes when the record is safely elsewhere
   */
  Future<Void> handle(DeadLetter<K, V> deadLetter);
}
