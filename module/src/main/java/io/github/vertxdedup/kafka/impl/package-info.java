/**
 * The Kafka consumer's implementation: one owner per assigned topic-partition ({@code PartitionOwner}) with its record
 * pipeline, commit pipeline and failure policy, the consumer loop, metrics, and where a partition's window lives
 * between owners ({@code WindowStore}: in memory, or on a journal handed over between instances).
 *
 * <p>May use: {@code kafka}, the service's API, {@code window}, the persistence {@code journal}, and the partition
 * service only through its narrow interface {@code impl.service.LocalPartition} (deployed in memory or on a journal
 * by its factories; its decisions, state, offsets and claims) and {@code impl.service.PartitionState}. Must not use
 * the concrete partition ({@code PartitionVerticle}), {@code impl.journal}, {@code impl.protocol} or
 * {@code impl.client}: it never encodes a request. Nothing outside {@code kafka} uses this package.
 */
package io.github.vertxdedup.kafka.impl;
