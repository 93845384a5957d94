/**
 * Time as the dedup window and the journal read it: {@link io.github.vertxdedup.time.DedupClock} (epoch
 * milliseconds, never stepping back), the system clock behind {@link io.github.vertxdedup.time.DedupClock#system()},
 * and {@link io.github.vertxdedup.time.ManualClock}, which tests advance by hand so that no test waits on real time;
 * and {@link io.github.vertxdedup.time.Durations}, the check of a duration meant as positive whole milliseconds.
 *
 * <p>Owns: the clock interface, its two implementations and that check. May use: the JDK only. Used by: the journal
 * ({@code io.github.vertxdedup.journal}), the window, the event-bus service and the Kafka consumer, so that one clock
 * type drives every layer.
 */
package io.github.vertxdedup.time;
