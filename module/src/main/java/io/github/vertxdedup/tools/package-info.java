/**
 * Command-line tools: {@link io.github.vertxdedup.tools.JournalInspector} prints what a partition's journal holds,
 * one command per class ({@code DumpCommand}, {@code FindCommand}, {@code SummaryCommand}) over the options they share
 * ({@code JournalArgs}). What the records mean (live entries, open claims, offsets at an instant) is decided by the
 * persistence journal ({@link io.github.vertxdedup.journal.JournalContents},
 * {@link io.github.vertxdedup.journal.internal.Recovery}); the tools only print it.
 *
 * <p>May use: the persistence {@code journal} and {@code journal.internal} (the claimer text of old claims),
 * {@code window} (fingerprints) and the service's public options ({@link io.github.vertxdedup.DedupOptions}, for the
 * longest window). Must not use the service's implementation ({@code impl.*}) or Vert.x: it reads the files of a
 * partition, running or stopped, through the journal's read-only view without deploying one.
 */
package io.github.vertxdedup.tools;
