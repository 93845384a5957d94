package io.github.vertxdedup.kafka;

import io.vertx.core.Future;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;

/**
 * Applies the effect of a record that the dedup window accepted. Called on the partition's event loop (the one its
 * dedup window runs on), one record at a time per topic-partition, in offset order: the next record of the
 * partition waits for the returned future. Must not block (it would hold up the window too); blocking work belongs
 * in {@code executeBlocking} or on a worker.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
@FunctionalInterface
public interface RecordHandler<K, V> {

  /**
   * @param record the record, as the Vert.x Kafka client presents it (key, value, timestamp, headers as
   *     {@code KafkaHeader}s); the same instance is passed to every call for this delivery (identity extractor, each
   *     handler attempt, the dead letter)
   * @return completes when the effect is applied; a failure (or an exception thrown here) is retried with backoff
   *     and, after {@code maxAttempts}, goes to the dead-letter handler; a failure that is a {@code ReplyException} of
   *     {@code ReplyFailure.NO_HANDLERS} (an event-bus request that found no consumer) spends no attempt: the
   *     partition pauses and the call is made again with backoff until it finds one
   */
  Future<Void> handle(KafkaConsumerRecord<K, V> record);
}
