/**
 * The public API of the Kafka consumer integration: {@link io.github.vertxdedup.kafka.DedupKafkaConsumer} (with a
 * Kafka client of its own, or wrapping the application's Vert.x {@code KafkaConsumer}) and its
 * {@link io.github.vertxdedup.kafka.DedupKafkaOptions}, the record handler, how a record's identity is read
 * ({@link io.github.vertxdedup.kafka.IdentityExtractor}, {@link io.github.vertxdedup.kafka.RecordIdentity}), the
 * atomicity modes, dead letters (and their sending to a Kafka topic) and the uncovered-record policy; and
 * {@link io.github.vertxdedup.kafka.DedupKafkaVerticle}, the consumer deployed by name from a JSON config
 * ({@link io.github.vertxdedup.kafka.DedupKafkaVerticleOptions}) that sends each record to an event-bus address, with
 * the JSON messages it sends beside it ({@code RecordMessages}, package-private); and the inbox mode's handler
 * ({@link io.github.vertxdedup.kafka.InboxRecordHandler}).
 *
 * <p>May use: the service's API ({@code io.github.vertxdedup}), {@code window}, {@code time}, the inbox's API
 * ({@code inbox}, not its implementation), Vert.x and its SQL client (the inbox mode's connection), the Vert.x
 * Kafka client (its {@code KafkaConsumerRecord} is the record every handler receives), the Kafka client, and
 * {@code impl.options} (the options' JSON schema, shared with {@code DedupOptions}). Its factories
 * ({@code DedupKafkaConsumer.create} and {@code wrap}, {@code DeadLetterHandler.toTopic}) reach {@code kafka.impl},
 * and only they. Must not use the service's implementation ({@code impl.service}, {@code impl.protocol},
 * {@code impl.client}, {@code impl.journal}) directly.
 */
package io.github.vertxdedup.kafka;
