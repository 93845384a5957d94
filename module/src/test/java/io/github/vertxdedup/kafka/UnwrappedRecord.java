package io.github.vertxdedup.kafka;

import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.kafka.client.producer.KafkaHeader;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.record.TimestampType;

/**
 * A {@link KafkaConsumerRecord} that wraps no Kafka record ({@link #record()} is null), as an application or a test
 * may build one: its topic, partition, offset, timestamp, key and value are another record's, and only its
 * {@link KafkaHeader}s carry the headers.
 */
final class UnwrappedRecord<K, V> implements KafkaConsumerRecord<K, V> {

  private final KafkaConsumerRecord<K, V> fields;
  private final List<KafkaHeader> headers;

  /**
   * @param fields the record whose fields (but not headers) this one has
   * @param headers the headers
   */
  UnwrappedRecord(KafkaConsumerRecord<K, V> fields, List<KafkaHeader> headers) {
    this.fields = fields;
    this.headers = headers;
  }

  @Override
  public String topic() {
    return fields.topic();
  }

  @Override
  public int partition() {
    return fields.partition();
  }

  @Override
  public long offset() {
    return fields.offset();
  }

  @Override
  public long timestamp() {
    return fields.timestamp();
  }

  @Override
  public TimestampType timestampType() {
    return fields.timestampType();
  }

  @Override
  public K key() {
    return fields.key();
  }

  @Override
  public V value() {
    return fields.value();
  }

  @Override
  public List<KafkaHeader> headers() {
    return headers;
  }

  @Override
  public ConsumerRecord<K, V> record() {
    return null;
  }
}
