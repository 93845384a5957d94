package io.github.vertxdedup.benchmarks.window;

import com.github.benmanes.caffeine.cache.Ticker;
import io.github.vertxdedup.time.DedupClock;

/**
 * Simulated time for the window benchmarks: the harness sets the arrival time of each event before handing the event
 * to the structure under test, which reads it back through its own clock interface ({@link DedupClock} for the
 * bucket rings, Caffeine's {@link Ticker} for the cache). Reading it is one plain field load, so the clock adds
 * next to nothing to the measured cost, unlike the volatile {@code ManualClock} that tests use.
 *
 * <p>Not thread-safe: one benchmark thread sets and reads it. Never runs backwards unless the harness makes it.
 */
public final class SimulatedClock implements DedupClock, Ticker {

  private long nowMs;

  /**
   * Creates a clock standing at {@code startMs}.
   *
   * @param startMs the initial time, clock milliseconds
   */
  public SimulatedClock(long startMs) {
    this.nowMs = startMs;
  }

  /**
   * Sets the current time; the harness calls this once per event, with non-decreasing values.
   *
   * @param nowMs clock milliseconds
   */
  public void setMs(long nowMs) {
    this.nowMs = nowMs;
  }

  /** @return the time last set, milliseconds */
  @Override
  public long nowMs() {
    return nowMs;
  }

  /** @return the time last set, in nanoseconds, as Caffeine reads it */
  @Override
  public long read() {
    return nowMs * 1_000_000L;
  }
}
