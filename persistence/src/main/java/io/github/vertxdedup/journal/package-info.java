/**
 * The per-partition journal of a dedup window: accepted ids, claims and their outcome, and committed consumer
 * offsets, on a Chronicle Queue, so that a restart rebuilds the window instead of forgetting it.
 *
 * <p>{@link io.github.vertxdedup.journal.Journal} is the entry point: {@code open} (exclusive per directory),
 * {@code replay} (recovery), {@code append*} (the owner's thread), {@code sync} (durability, any thread),
 * {@code deleteExpiredCycles} (retention, any thread) and {@code close}. Behind that facade, as Chronicle splits
 * its appender from its tailers, the package-private {@code JournalWriter} appends on the owner's thread (with
 * {@code RecordAppender} writing each record and {@code RollSnapshotAppender} starting each cycle),
 * {@code JournalSync} makes appends durable, {@code JournalReader} repairs the tail and replays, and
 * {@code JournalRetention} deletes expired cycle files, and {@code JournalSnapshots} (with {@code SnapshotFile} and
 * {@code SortingOutput}) writes, checks and loads window snapshots: a compaction of the records up to a position, so
 * that a restart replays only the records after it ({@code writeSnapshot}, {@code replayFromSnapshot}; a replay's
 * visitor may read a snapshot's entries in place, through {@link io.github.vertxdedup.journal.SnapshotEntries}). {@link io.github.vertxdedup.journal.JournalContents} reads
 * what a journal directory holds at an instant, its live entries handed to a
 * {@link io.github.vertxdedup.journal.LiveEntrySink}, and deletes a directory that holds nothing live any more. What a record means to the service that owns the journal (claims
 * matched to their commits, expiry, the state each cycle carries, the layout files) is decided in
 * {@code io.github.vertxdedup.journal.internal}, which is not an API; see {@code docs/journal.md} for the record
 * format, durability policies and retention.
 *
 * <p>May use: Chronicle Queue (and its Chronicle dependencies), Agrona, {@code io.github.vertxdedup.time} (the clock
 * a journal is given), the JDK, and {@code journal.internal} only from {@code JournalContents} (its
 * {@code Recovery}). Must not use Vert.x, the window ({@code io.github.vertxdedup.window}) or any package of the
 * {@code module} artifact: fingerprints and instants arrive as {@code long}s, and the service decides what to do with
 * what a replay returns.
 */
package io.github.vertxdedup.journal;
