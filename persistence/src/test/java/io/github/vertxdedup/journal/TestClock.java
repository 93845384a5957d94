package io.github.vertxdedup.journal;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/** A clock the test moves by hand (epoch milliseconds); thread-safe. */
final class TestClock implements LongSupplier {

  /** 2023-11-14T22:13:20Z: a whole second, minute and 5-minute boundary. */
  static final long START_MS = 1_700_000_000_000L;

  private final AtomicLong nowMs;

  TestClock() {
    this(START_MS);
  }

  TestClock(long startMs) {
    this.nowMs = new AtomicLong(startMs);
  }

  @Override
  public long getAsLong() {
    return nowMs.get();
  }

  long nowMs() {
    return nowMs.get();
  }

  TestClock advance(Duration d) {
    nowMs.addAndGet(d.toMillis());
    return this;
  }

  TestClock advanceMs(long ms) {
    nowMs.addAndGet(ms);
    return this;
  }
}
