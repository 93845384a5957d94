package io.github.vertxdedup.time;

/**
 * The single source of time for a dedup window and everything built on it.
 *
 * <p>{@link #nowMs()} returns milliseconds on a <em>monotonic</em> timeline that is anchored to the Unix epoch
 * once, when the clock is created. Within a process it never runs backwards and is not moved by a wall-clock
 * step (NTP, an operator changing the date), so expiry neither freezes nor wipes the window; its values are still
 * close enough to epoch milliseconds that instants given by callers ({@code rememberUntilMs},
 * {@code eventTimeMs}) and instants written to a journal can be compared with it. A restart re-anchors the
 * timeline to the wall clock; the journal records epoch milliseconds so that a restart can map one onto the other.
 *
 * <p>Tests inject a {@link ManualClock} and move time by hand; nothing in this project sleeps to wait for time.
 *
 * <p>Implementations must be safe to call from the thread that owns the window; {@link #system()} is safe to call
 * from any thread.
 */
@FunctionalInterface
public interface DedupClock {

  /**
   * Returns the current time in milliseconds on this clock's monotonic, epoch-anchored timeline.
   *
   * @return milliseconds; never smaller than a value returned earlier by the same clock
   */
  long nowMs();

  /**
   * Returns the production clock: {@link System#nanoTime()} for progress, anchored to
   * {@link System#currentTimeMillis()} once at class initialisation.
   *
   * @return the shared system clock; thread-safe
   */
  static DedupClock system() {
    return SystemClock.INSTANCE;
  }
}
