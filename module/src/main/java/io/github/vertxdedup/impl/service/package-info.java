/**
 * The partition service: {@code PartitionVerticle} owns one window and one journal on one event loop (lifecycle,
 * requests, the replies waiting for their journal write, recovery on an injected timer), {@code PartitionCore} and
 * {@code BatchDecider} decide, {@code Claims} keeps claims and their leases, {@code PartitionCounters} and
 * {@code PartitionMetrics} count, {@code AddressRouter} forwards requests sent to the service's base address, and
 * {@code InProcessClient} calls a partition in this JVM without the event bus (the Kafka consumer's shortcut).
 * Internal: not an API.
 *
 * <p>May use: {@code window}, {@code impl.protocol}, {@code impl.journal} (only through the {@code PartitionJournal}
 * seam, except to pick {@code NoJournal}), the persistence journal's value types (committed offsets, the lock
 * failure), the service's API types, Vert.x, Micrometer. Must not use {@code impl.client} or {@code kafka}.
 */
package io.github.vertxdedup.impl.service;
