/**
 * The public API of the event-bus dedup service: {@link io.github.vertxdedup.DedupVerticle} deploys it,
 * {@link io.github.vertxdedup.DedupClient} calls it, {@link io.github.vertxdedup.DedupOptions} configures it, and
 * {@link io.github.vertxdedup.DedupEvent}, the results ({@link io.github.vertxdedup.DedupResult},
 * {@link io.github.vertxdedup.DedupBatchResult}, {@link io.github.vertxdedup.DedupCommitResult},
 * {@link io.github.vertxdedup.DedupLookup}) and the enums ({@link io.github.vertxdedup.DedupAction},
 * {@link io.github.vertxdedup.DedupVerdict}, {@link io.github.vertxdedup.DedupFailure} codes,
 * {@link io.github.vertxdedup.EntryState}, {@link io.github.vertxdedup.UncoveredPolicy}) are what travels.
 *
 * <p>May use: {@code window}, {@code time} (the clock, the check of a duration), the persistence {@code journal} (its
 * {@code SyncPolicy}) and {@code journal.internal} (the layout check), Vert.x, Micrometer. Its entry points reach the
 * implementation, and only they: {@code DedupVerticle} deploys {@code impl.service} partitions on {@code impl.journal}
 * journals and registers {@code impl.protocol}'s codecs; {@code DedupClient.create} builds the {@code impl.client}
 * client; {@code DedupOptions} reads its JSON form with {@code impl.options}' schema (as {@code DedupVerticle} reads
 * its config). No type of an {@code impl} package appears in a public signature. Must not use {@code kafka}.
 */
package io.github.vertxdedup;
