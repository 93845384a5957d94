/**
 * The public API of the Kafka consumer integration: {@link io.github.vertxdedup.kafka.DedupKafkaConsumer} and its
 * {@link io.github.vertxdedup.kafka.DedupKafkaOptions}, the record handler, how a record's identity is read
 * ({@link io.github.vertxdedup.kafka.IdentityExtractor}, {@link io.github.vertxdedup.kafka.RecordIdentity}), the
 * atomicity modes, dead letters (and their sending to a Kafka topic) and the uncovered-record policy.
 *
 * <p>May use: the service's API ({@code io.github.vertxdedup}), {@code window}, Vert.x, the Vert.x Kafka client (its
 * {@code KafkaConsumerRecord} is the record every handler receives), the Kafka client, and {@code impl.options} (the
 * options' JSON schema, shared with {@code DedupOptions}). Its factories ({@code DedupKafkaConsumer.create},
 * {@code DeadLetterHandler.toTopic}) reach {@code kafka.impl}, and only they. Must not use the service's
 * implementation ({@code impl.service}, {@code impl.protocol}, {@code impl.client}, {@code impl.journal}) directly.
 */
package io.github.vertxdedup.kafka;
