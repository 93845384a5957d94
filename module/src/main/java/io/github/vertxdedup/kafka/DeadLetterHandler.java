package io.github.vertxdedup.kafka;

import io.vertx.core.Future;

/**
 * Receives the records that will not reach the record handler (a dead-letter topic producer, a table, a log).
 * Called on the partition's event loop, in offset order with the handled records. A failed future is retried with
 * backoff until it succeeds (the partition waits: its order is kept and the record is not dropped silently).
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
@FunctionalInterface
public interface DeadLetterHandler<K, V> {

  /**
   * @param deadLetter the record and why
   * @return completes when the record is safely elsewhere
   */
  Future<Void> handle(DeadLetter<K, V> deadLetter);
}
