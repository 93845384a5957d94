/**
 * Not an API: what the journal's records mean to the dedup service that owns a journal, for the service's journal
 * adapter and the journal inspector (both in the {@code vertx-dedup} artifact). It may change in any release; an
 * application uses {@link io.github.vertxdedup.journal.Journal} and
 * {@link io.github.vertxdedup.journal.JournalContents} instead.
 *
 * <p>Owns: {@link io.github.vertxdedup.journal.internal.Recovery} (a replay turned into live entries, open claims,
 * committed offsets and the start of memory, and the compaction a window snapshot is written with; claims matched to
 * their commits, expiry, version-1 claims), the state
 * each new cycle carries ({@link io.github.vertxdedup.journal.internal.CarriedState}), the highest offset per
 * topic-partition ({@link io.github.vertxdedup.journal.internal.CommittedOffsets}), the claimer text of version-1
 * claims ({@link io.github.vertxdedup.journal.internal.ClaimerTextV1}) and the layout files a service keeps beside
 * its journals ({@link io.github.vertxdedup.journal.internal.JournalLayout}).
 *
 * <p>May use: the journal's API ({@code io.github.vertxdedup.journal}: its records, visitor and snapshot writer),
 * {@code io.github.vertxdedup.time}, Agrona, the JDK. Must not use Vert.x, the window or any package of the
 * {@code module} artifact. {@link io.github.vertxdedup.journal.JournalContents} reads through
 * {@code Recovery}: the one place the API package reaches in here.
 */
package io.github.vertxdedup.journal.internal;
