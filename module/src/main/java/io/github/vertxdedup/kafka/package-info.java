/**
 * The public API of the Kafka consumer integration: {@link io.github.vertxdedup.kafka.DedupKafkaConsumer} and its
 * {@link io.github.vertxdedup.kafka.DedupKafkaOptions}, the record handler, how a record's identity is read
 * ({@link io.github.vertxdedup.kafka.IdentityExtractor}, {@link io.github.vertxdedup.kafka.RecordIdentity}), the
 * atomicity modes, dead letters and the uncovered-record policy.
 *
 * <p>May use: the service's API ({@code io.github.vertxdedup}), {@code window}, {@code time}, Vert.x, the Kafka client, and
 * {@code impl.options} (the options' JSON schema, shared with {@code DedupOptions}). Its factory reaches
 * {@code kafka.impl}, and only it. Must not use the service's implementation ({@code impl.service},
 * {@code impl.protocol}, {@code impl.client}, {@code impl.journal}) directly.
 */
package io.github.vertxdedup.kafka;
