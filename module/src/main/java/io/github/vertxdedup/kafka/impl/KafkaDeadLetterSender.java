package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.kafka.DeadLetter;
import io.github.vertxdedup.kafka.DeadLetterHandler;
import io.vertx.core.Future;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.kafka.client.producer.KafkaHeader;
import io.vertx.kafka.client.producer.KafkaProducer;
import io.vertx.kafka.client.producer.KafkaWriteStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The dead-letter handler of {@link DeadLetterHandler#toTopic}: sends each dead letter to a topic with the
 * application's Vert.x {@link KafkaProducer}, with the record's key and value, its headers, and the headers of
 * {@link DeadLetterHandler} ({@code dedup.reason}, {@code dedup.detail}, ...) after them.
 *
 * <p>The record is built as a Kafka {@link ProducerRecord} and sent through the producer's
 * {@link KafkaProducer#asStream() stream}: Vert.x's {@code KafkaHeader} cannot carry a header without a value, which
 * Kafka allows, so the original headers are copied from the Kafka record the dead letter wraps, as they are. Its
 * partition is left to the producer's partitioner (by key), its timestamp to the producer (now): with the original
 * timestamp, a record dead-lettered late could be deleted by the topic's retention at once.
 *
 * <p>Thread-safe: it holds no state but the producer, which is thread-safe (and stays the application's to close).
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
public final class KafkaDeadLetterSender<K, V> implements DeadLetterHandler<K, V> {

  /** Kafka's topic names: 1..249 characters of {@code [a-zA-Z0-9._-]}, not {@code .} or {@code ..}. */
  private static final Pattern TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

  private final KafkaWriteStream<K, V> producer;
  private final String topic;

  /**
   * @param producer the producer; its serializers take the consumer's key and value types
   * @param topic the dead-letter topic
   * @throws NullPointerException if {@code producer} is null
   * @throws IllegalArgumentException if {@code topic} is not a Kafka topic name (null, empty, longer than 249
   *     characters, a character outside {@code [a-zA-Z0-9._-]}, or {@code .} or {@code ..})
   */
  public KafkaDeadLetterSender(KafkaProducer<K, V> producer, String topic) {
    Objects.requireNonNull(producer, "producer");
    if (topic == null || !TOPIC.matcher(topic).matches() || topic.equals(".") || topic.equals("..")) {
      throw new IllegalArgumentException("topic must be a Kafka topic name (1..249 characters of [a-zA-Z0-9._-], "
          + "not '.' or '..') but was " + (topic == null ? "null" : "'" + topic + "'"));
    }
    this.producer = producer.asStream();
    this.topic = topic;
  }

  @Override
  public Future<Void> handle(DeadLetter<K, V> deadLetter) {
    return producer.send(record(topic, deadLetter)).mapEmpty();
  }

  /**
   * @param topic the dead-letter topic
   * @param deadLetter the dead letter
   * @return the record that carries it: the original key, value and headers, then the dead letter's headers
   */
  static <K, V> ProducerRecord<K, V> record(String topic, DeadLetter<K, V> deadLetter) {
    KafkaConsumerRecord<K, V> r = deadLetter.record();
    RecordHeaders headers = new RecordHeaders();
    ConsumerRecord<K, V> kafkaRecord = r.record();
    if (kafkaRecord != null) {
      for (Header h : kafkaRecord.headers()) {
        headers.add(h);
      }
    } else {
      for (KafkaHeader h : r.headers()) {
        headers.add(h.key(), h.value() == null ? null : h.value().getBytes());
      }
    }
    add(headers, REASON_HEADER, deadLetter.reason().name());
    add(headers, DETAIL_HEADER, deadLetter.detail());
    add(headers, ATTEMPTS_HEADER, Integer.toString(deadLetter.attempts()));
    add(headers, SOURCE_TOPIC_HEADER, r.topic());
    add(headers, SOURCE_PARTITION_HEADER, Integer.toString(r.partition()));
    add(headers, SOURCE_OFFSET_HEADER, Long.toString(r.offset()));
    return new ProducerRecord<>(topic, null, null, r.key(), r.value(), headers);
  }

  private static void add(RecordHeaders headers, String name, String value) {
    headers.add(name, value.getBytes(StandardCharsets.UTF_8));
  }
}
