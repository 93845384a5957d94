package io.github.vertxdedup.time;

import java.time.Duration;
import java.util.Objects;

/**
 * A {@link DedupClock} that moves only when told to: the clock tests inject instead of sleeping.
 *
 * <p>Like the production clock it never runs backwards: {@link #setMs(long)} to an earlier instant is an error.
 * Thread-safe (the time is a volatile field), so a test thread may advance it while an event loop reads it.
 */
public final class ManualClock implements DedupClock {

  private volatile long nowMs;

  /**
   * Creates a clock standing at {@code startMs}.
   *
   * @param startMs the initial time, epoch milliseconds (any value, negative included)
   */
  public ManualClock(long startMs) {
    this.nowMs = startMs;
  }

  @Override
  public long nowMs() {
    return nowMs;
  }

  /**
   * Moves the clock forward.
   *
   * @param amount how far, whole milliseconds counted (a remainder below 1 ms is dropped); zero is allowed
   * @return this clock
   * @throws IllegalArgumentException if {@code amount} is negative or would move the clock past
   *     {@link Long#MAX_VALUE}
   * @throws NullPointerException if {@code amount} is null
   */
  public ManualClock advance(Duration amount) {
    Objects.requireNonNull(amount, "amount");
    if (amount.isNegative()) {
      throw new IllegalArgumentException("amount must be >= 0 but was " + amount);
    }
    final long deltaMs;
    try {
      deltaMs = amount.toMillis();
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("amount must be <= " + Long.MAX_VALUE + " ms but was " + amount, e);
    }
    return advanceMs(deltaMs);
  }

  /**
   * Moves the clock forward by {@code deltaMs} milliseconds.
   *
   * @param deltaMs milliseconds, {@code >= 0}
   * @return this clock
   * @throws IllegalArgumentException if {@code deltaMs} is negative or would move the clock past
   *     {@link Long#MAX_VALUE}
   */
  public synchronized ManualClock advanceMs(long deltaMs) {
    if (deltaMs < 0) {
      throw new IllegalArgumentException("deltaMs must be >= 0 but was " + deltaMs);
    }
    try {
      nowMs = Math.addExact(nowMs, deltaMs);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(
          "deltaMs must be <= Long.MAX_VALUE - now (now = " + nowMs + ") but was " + deltaMs, e);
    }
    return this;
  }

  /**
   * Sets the clock to {@code epochMs}.
   *
   * @param epochMs the new time; not before the current time
   * @return this clock
   * @throws IllegalArgumentException if {@code epochMs} is before the current time
   */
  public synchronized ManualClock setMs(long epochMs) {
    if (epochMs < nowMs) {
      throw new IllegalArgumentException(
          "epochMs must be >= the current time " + nowMs + " (the clock is monotonic) but was " + epochMs);
    }
    nowMs = epochMs;
    return this;
  }
}
