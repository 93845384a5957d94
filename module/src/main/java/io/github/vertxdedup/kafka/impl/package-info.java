/**
 * The Kafka consumer's implementation. By role:
 * <ul>
 *   <li>the consumer's life (setup, start, close, an error that stops it): {@code DedupKafkaConsumerImpl};</li>
 *   <li>the poll thread: {@code PollLoop}, with the paused partitions ({@code Pauses}), the offset commits to Kafka
 *   ({@code OffsetCommits}) and the rebalance callbacks ({@code PartitionAssignment}, which takes and hands back the
 *   windows of {@code AssignedPartition}s);</li>
 *   <li>one owner per assigned topic-partition, on its window's event loop: the record pipeline
 *   ({@code PartitionOwner}, with its {@code RecordQueue}, {@code HeadWait}, {@code Trampoline} and
 *   {@code OwnerLoop}), the effect-first lease rule ({@code ClaimLeases}), the commit pipeline
 *   ({@code CommitPipeline}), retries and dead letters ({@code FailurePolicy}), the window's requests for a record
 *   ({@code RecordEvents}), the settings they share ({@code OwnerConfig}) and the meters ({@code KafkaMetrics});</li>
 *   <li>where a partition's window lives between owners ({@code PartitionWindows}: in memory, or on a journal handed over
 *   between instances).</li>
 * </ul>
 *
 * <p>May use: {@code kafka}, the service's API, {@code window}, {@code time}, the persistence {@code journal}, and the partition
 * service only through its narrow interface {@code impl.service.LocalPartition} (deployed in memory or on a journal
 * by its factories; its decisions, state, offsets and claims) and {@code impl.service.PartitionState}. Must not use
 * the concrete partition ({@code PartitionVerticle}), {@code impl.journal}, {@code impl.protocol} or
 * {@code impl.client}: it never encodes a request. Nothing outside {@code kafka} uses this package.
 */
package io.github.vertxdedup.kafka.impl;
