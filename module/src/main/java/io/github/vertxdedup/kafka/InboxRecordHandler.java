package io.github.vertxdedup.kafka;

import io.vertx.core.Future;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.sqlclient.SqlConnection;

/**
 * Writes the effect of a record in the inbox's transaction ({@link AtomicityMode#INBOX}): called with the connection
 * of a transaction in which the consumer has already inserted the record's inbox row; the consumer commits after the
 * returned future succeeds, and rolls back if it fails. Called on the partition's event loop, one record at a time per
 * topic-partition, in offset order, and only for an id the window and the inbox both take as new. Must not block.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
@FunctionalInterface
public interface InboxRecordHandler<K, V> {

  /**
   * @param record the record, as {@link RecordHandler#handle} receives it
   * @param connection the transaction's connection: run the effect's statements on it; do not commit, roll back or
   *     close it
   * @return completes when the writes are done; a failure (or an exception thrown here) rolls the transaction back
   *     and is retried with backoff, then dead-lettered ({@code HANDLER_FAILED}), as a {@link RecordHandler}'s
   */
  Future<Void> handle(KafkaConsumerRecord<K, V> record, SqlConnection connection);
}
