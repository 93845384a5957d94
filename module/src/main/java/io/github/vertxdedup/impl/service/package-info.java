/**
 * The partition service: {@code PartitionVerticle} owns one window and one journal on one event loop (its lifecycle:
 * states, recovery on an injected timer, the reopen after a failed write), {@code PartitionRequests} is every
 * request's one way in (in-process as the partition's {@code LocalPartition}, or from the event bus through
 * {@code BusRequests}) with {@code PendingReplies} holding the replies until their journal write, {@code PartitionCore}
 * and {@code BatchDecider} decide, {@code Claims} keeps claims and their leases, {@code PartitionCounters} and
 * {@code PartitionMetrics} count, and {@code AddressRouter} forwards requests sent to the service's base address.
 * {@code LocalPartition} (with {@code PartitionState}) is the narrow interface through which the Kafka consumer
 * reaches a partition, and its factories the one way a partition is deployed outside {@code DedupVerticle}.
 * The decisions' parts: {@code WindowRoom} says whether a new event fits, {@code PartitionRecorder} writes a decision
 * into the window and the journal, {@code PartitionResults} makes the answers.
 * In a cluster, {@code PartitionOwnership} decides whether a deployment owns a partition or stands by, speaking to the
 * cluster's lock, epoch counter, release and deployed-term maps through {@code OwnerLock} and to the journal
 * directory's {@code owner-epoch} file through {@code OwnerEpochFile}; {@code OwnerTakeover} decides a takeover's term
 * from what it learned, {@code OwnerChecks} confirms it, and {@code OwnerTerm} is an owner's epoch, term id and lease.
 * Internal: not an API.
 *
 * <p>May use: {@code window}, {@code impl.protocol}, {@code impl.journal} (only through the {@code PartitionJournal}
 * seam, except to pick the journal a partition is deployed on: {@code NoJournal} or {@code ChroniclePartitionJournal}),
 * the persistence journal's value types (an offset commit, the lock failure) and {@code journal.internal}'s committed
 * offsets, {@code time} (the clock), the service's API types, Vert.x, Micrometer. Must not use {@code impl.client} or
 * {@code kafka}.
 */
package io.github.vertxdedup.impl.service;
