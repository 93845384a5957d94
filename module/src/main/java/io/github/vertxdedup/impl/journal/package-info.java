/**
 * The Vert.x adapter of the persistence journal: the {@code PartitionJournal} seam a partition reports its state
 * changes to, {@code ChroniclePartitionJournal} (its lifecycle: opens and replays on a worker, and hands recovered
 * entries back on the partition's context through {@code RecoveryHandOff}; appends on the event loop in
 * {@code JournalAppends}, syncs grouped in {@code GroupCommit}; expired files deleted on a worker by
 * {@code RetentionSchedule}) and {@code NoJournal} for a memory-only partition. What a record means lives in the
 * persistence artifact ({@code journal.internal}), not here. Internal: not an API.
 *
 * <p>May use: the persistence {@code journal} and {@code journal.internal} (what the records mean: {@code Recovery},
 * {@code CarriedState}, the layout files), {@code time} (the partition's clock), {@code window} (its default
 * remember-until), Vert.x. Must not use the service's API or any other {@code impl} package: the seam names
 * fingerprints and instants, not requests or partitions' state.
 */
package io.github.vertxdedup.impl.journal;
