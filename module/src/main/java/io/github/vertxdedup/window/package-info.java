/**
 * The dedup window: a ring of time buckets over one open-addressing fingerprint table
 * ({@link io.github.vertxdedup.window.DedupWindow}, {@link io.github.vertxdedup.window.FingerprintTable}), the
 * fingerprints of ids and keys ({@link io.github.vertxdedup.window.Fingerprinter}), and its verdicts and statistics. It reads
 * time from the clock every layer is given ({@link io.github.vertxdedup.time.DedupClock}). Single-threaded by
 * contract: its owner confines it.
 *
 * <p>May use: the JDK, Agrona, zero-allocation-hashing, {@code io.github.vertxdedup.time}. Must not use Vert.x, the journal
 * ({@code io.github.vertxdedup.journal}) or any other package of this project, so that it can be tested and
 * benchmarked alone. {@link io.github.vertxdedup.window.WindowVerdict} is the window's own answer; the service's public
 * {@link io.github.vertxdedup.DedupVerdict} is a different, wider type.
 */
package io.github.vertxdedup.window;
