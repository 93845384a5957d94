/**
 * The per-partition journal of a dedup window: accepted ids, claims and their outcome, and committed consumer
 * offsets, on a Chronicle Queue, so that a restart rebuilds the window instead of forgetting it.
 *
 * <p>{@link io.github.vertxdedup.journal.Journal} is the entry point: {@code open} (exclusive per directory),
 * {@code replay} (recovery), {@code append*} (the owner's thread), {@code sync} (durability, any thread),
 * {@code deleteExpiredCycles} (retention, any thread) and {@code close}. Behind that facade, as Chronicle splits
 * its appender from its tailers, the package-private {@code JournalWriter} appends on the owner's thread,
 * {@code JournalReader} repairs the tail and replays, and {@code JournalRetention} deletes expired cycle files. It has
 * no Vert.x types and does not depend on the window; see {@code docs/journal.md} for the record format, durability
 * policies and retention.
 */
package io.github.vertxdedup.journal;
