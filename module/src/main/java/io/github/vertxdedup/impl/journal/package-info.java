/**
 * The Vert.x adapter of the persistence journal: the {@code PartitionJournal} seam a partition reports its state
 * changes to, {@code ChroniclePartitionJournal} (appends on the event loop, opens, replays and deletes expired files
 * on a worker, hands recovered entries back on the partition's context through {@code RecoveryHandOff}, groups syncs
 * in {@code GroupCommit}) and {@code NoJournal} for a memory-only partition. What a record means lives in the
 * persistence {@code journal} package, not here. Internal: not an API.
 *
 * <p>May use: the persistence {@code journal}, {@code window} (the clock, and the window a recovery restores),
 * Vert.x. Must not use the service's API or any other {@code impl} package: the seam names fingerprints and instants,
 * not requests or partitions' state.
 */
package io.github.vertxdedup.impl.journal;
