package io.github.vertxdedup.kafka;

import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.kafka.client.producer.KafkaHeader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * Finds the identity of a record. Called on the partition's event loop, once per delivery of a record: it must be
 * fast and must not block. Returning null (or throwing) means the record has no identity: it goes to the dead-letter
 * handler with {@link DeadLetter.Reason#NO_IDENTITY} and its offset advances; the record handler is not called.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
@FunctionalInterface
public interface IdentityExtractor<K, V> {

  /**
   * @param record the record, as the Vert.x Kafka client presents it
   * @return its identity, or null if it has none
   */
  RecordIdentity identify(KafkaConsumerRecord<K, V> record);

  /**
   * The id is the last value of a header, decoded as UTF-8 (e.g. {@code message-id}); a record without the header,
   * or with an empty value, has no identity. It reads the header from the Kafka record the
   * {@link KafkaConsumerRecord} wraps ({@link KafkaConsumerRecord#record()}), so the other headers are not copied into
   * {@link KafkaHeader}s for it; a record that wraps none is read through {@link KafkaConsumerRecord#headers()}.
   *
   * @param header the header name
   * @param <K> the record key type
   * @param <V> the record value type
   * @return the extractor
   * @throws IllegalArgumentException if {@code header} is null or empty
   */
  static <K, V> IdentityExtractor<K, V> header(String header) {
    if (header == null || header.isEmpty()) {
      throw new IllegalArgumentException("header must be a non-empty header name but was '" + header + "'");
    }
    return record -> {
      byte[] value = lastHeaderValue(record, header);
      if (value == null || value.length == 0) {
        return null;
      }
      return RecordIdentity.of(new String(value, StandardCharsets.UTF_8));
    };
  }

  /** The value of the last header named {@code name}, or null if there is none or its value is null. */
  private static byte[] lastHeaderValue(KafkaConsumerRecord<?, ?> record, String name) {
    ConsumerRecord<?, ?> kafkaRecord = record.record();
    if (kafkaRecord != null) {
      Header h = kafkaRecord.headers().lastHeader(name);
      return h == null ? null : h.value();
    }
    List<KafkaHeader> headers = record.headers();
    for (int i = headers.size() - 1; i >= 0; i--) {
      KafkaHeader h = headers.get(i);
      if (name.equals(h.key())) {
        return h.value() == null ? null : h.value().getBytes();
      }
    }
    return null;
  }

  /**
   * The id is the record key ({@link String#valueOf} of it); a record with a null key has no identity.
   *
   * @param <K> the record key type
   * @param <V> the record value type
   * @return the extractor
   */
  static <K, V> IdentityExtractor<K, V> recordKey() {
    return record -> {
      K key = record.key();
      if (key == null) {
        return null;
      }
      String id = String.valueOf(key);
      return id.isEmpty() ? null : RecordIdentity.of(id);
    };
  }

  /**
   * The id is a function of the record; null or empty means no identity.
   *
   * @param id the function
   * @param <K> the record key type
   * @param <V> the record value type
   * @return the extractor
   */
  static <K, V> IdentityExtractor<K, V> of(Function<KafkaConsumerRecord<K, V>, String> id) {
    Objects.requireNonNull(id, "id");
    return record -> {
      String s = id.apply(record);
      return s == null || s.isEmpty() ? null : RecordIdentity.of(s);
    };
  }

  /**
   * Adds a business key: the record is a duplicate if its id or its key was seen. A null or empty key leaves the
   * record with its id alone.
   *
   * @param key the business key of a record
   * @return a new extractor
   */
  default IdentityExtractor<K, V> withBusinessKey(Function<KafkaConsumerRecord<K, V>, String> key) {
    Objects.requireNonNull(key, "key");
    return record -> {
      RecordIdentity base = identify(record);
      if (base == null) {
        return null;
      }
      String k = key.apply(record);
      return new RecordIdentity(base.id(), k == null || k.isEmpty() ? null : k, base.payloadHash());
    };
  }

  /**
   * Adds a payload hash (any stable text of 1..256 characters, e.g. hex SHA-256 of the canonical payload): the same
   * id with another hash is a conflict and goes to the dead-letter handler with {@link DeadLetter.Reason#CONFLICT}.
   *
   * @param payloadHash the payload hash of a record
   * @return a new extractor
   */
  default IdentityExtractor<K, V> withPayloadHash(Function<KafkaConsumerRecord<K, V>, String> payloadHash) {
    Objects.requireNonNull(payloadHash, "payloadHash");
    return record -> {
      RecordIdentity base = identify(record);
      if (base == null) {
        return null;
      }
      String h = payloadHash.apply(record);
      return new RecordIdentity(base.id(), base.key(), h == null || h.isEmpty() ? null : h);
    };
  }
}
