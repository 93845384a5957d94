/**
 * The Kafka consumer's implementation: one owner per assigned topic-partition ({@code PartitionOwner}) with its record
 * pipeline, commit pipeline and failure policy, the consumer loop, metrics, and where a partition's window lives
 * between owners ({@code WindowStore}: in memory, or on a journal handed over between instances).
 *
 * <p>May use: {@code kafka}, the service's API, {@code window}, the persistence {@code journal}, and the partition
 * service through the partition verticle: {@code impl.service.PartitionVerticle} (its in-process client, offsets and
 * claims) deployed on an {@code impl.journal} journal. Must not use {@code impl.protocol} or {@code impl.client}: it
 * never encodes a request itself. Nothing outside {@code kafka} uses this package.
 */
package io.github.vertxdedup.kafka.impl;
