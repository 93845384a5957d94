/**
 * The Kafka consumer's implementation. By role:
 * <ul>
 *   <li>what both consumers share before they start (options, ids, the application's handlers, the owners' settings
 *   and the window store): {@code ConsumerSetup};</li>
 *   <li>the consumer's life (start, close, an error that stops it): {@code DedupKafkaConsumerImpl};</li>
 *   <li>the poll thread: {@code PollLoop}, with the paused partitions ({@code Pauses}), the offset commits to Kafka
 *   ({@code OffsetCommits}, through the seam {@code GroupCommitter}) and the rebalance callbacks
 *   ({@code PartitionAssignment}, which takes and hands back the windows of {@code AssignedPartition}s);</li>
 *   <li>one owner per assigned topic-partition, on its window's event loop: the record pipeline
 *   ({@code PartitionOwner}, with its {@code RecordQueue}, {@code HeadWait}, {@code Trampoline} and
 *   {@code OwnerLoop}), the runs it sends to the window and their answers ({@code RunDecisions}), the
 *   effect-first lease rule ({@code ClaimLeases}), the commit pipeline
 *   ({@code CommitPipeline}), record-first's wait for the offset commit before the handlers ({@code OffsetGate}),
 *   retries and dead letters ({@code FailurePolicy}), the window's requests for a record
 *   ({@code RecordEvents}), the settings they share ({@code OwnerConfig}) and the meters ({@code KafkaMetrics});</li>
 *   <li>the application's Vert.x consumer with deduplication added ({@code DedupKafkaConsumer.wrap}): its life
 *   ({@code WrappedConsumer}), its partitions and their fence ({@code WrappedAssignment}), its offset commits
 *   ({@code WrappedCommits}) and its context ({@code WrappedContext}); the same owners and window stores;</li>
 *   <li>the rebuild of a newly assigned partition's window from its source topic, on a thread and a group-less
 *   consumer of its own while the partition stays paused ({@code Rebuilds}, {@code PartitionRebuild}, the rule of what
 *   is read and from when the window covers in {@code RebuildRule}, the reader's retries in {@code RebuildBackoff},
 *   the checks that put restored ids into the window in {@code WindowRestore}; both kinds of rebuild are
 *   {@code WindowRebuild}s and share the last two);</li>
 *   <li>the optional changelog topic of accepted ids: its names and creation ({@code ChangelogTopics}), its entry
 *   layout ({@code ChangelogEntry}), the entries an owner captured and no committed transaction holds yet
 *   ({@code ChangelogBuffer}), the transactional producer ({@code ChangelogWriter}) behind the {@code GroupCommitter}
 *   that makes each offset commit a transaction ({@code ChangelogCommitter}), and the rebuild that reads it
 *   ({@code ChangelogRebuild});</li>
 *   <li>where a partition's window lives between owners ({@code PartitionWindows}: in memory, or on a journal handed over
 *   between instances), and the removal of the journals of partitions that left the machine once they remember
 *   nothing ({@code JournalCleanup});</li>
 *   <li>dead letters sent to a Kafka topic with the application's Vert.x producer ({@code KafkaDeadLetterSender}).</li>
 * </ul>
 *
 * <p>May use: {@code kafka}, the service's API, {@code window}, {@code time}, the inbox's API ({@code inbox}: the
 * INBOX mode's transactions and its rebuild from the inbox rows), the persistence {@code journal}, the
 * native Kafka client (the poll thread drives it) and the Vert.x Kafka client's record types (of its implementation
 * only {@code KafkaConsumerRecordImpl}, to wrap a polled record as the {@code KafkaConsumerRecord} the application
 * sees; see {@code PollLoop#wrap}), and the partition
 * service only through its narrow interface {@code impl.service.LocalPartition} (deployed in memory or on a journal
 * by its factories; its decisions, state, offsets and claims) and {@code impl.service.PartitionState}. Must not use
 * the concrete partition ({@code PartitionVerticle}), {@code impl.journal}, {@code impl.protocol} or
 * {@code impl.client}: it never encodes a request. Nothing outside {@code kafka} uses this package.
 */
package io.github.vertxdedup.kafka.impl;
