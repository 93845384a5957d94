/**
 * The per-partition journal of a dedup window: accepted ids, claims and their outcome, and committed consumer
 * offsets, on a Chronicle Queue, so that a restart rebuilds the window instead of forgetting it.
 *
 * <p>{@link io.github.vertxdedup.journal.Journal} is the entry point: {@code open} (exclusive per directory),
 * {@code replay} (recovery), {@code append*} (the owner's thread), {@code sync} (durability, any thread),
 * {@code deleteExpiredCycles} (retention, any thread) and {@code close}. The journal stores and replays records;
 * what a record means for the window is decided by its owner. It has no Vert.x types and does not depend on the
 * window; see {@code docs/journal.md} for the record format, durability policies and retention.
 */
package io.github.vertxdedup.journal;
