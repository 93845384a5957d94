package io.github.vertxdedup.time;

import java.time.Duration;

/**
 * The check of a {@link Duration} given where a positive, whole number of milliseconds is meant (a window, a bucket, a
 * lease): one rule for the window's builder and the service's options, which live in different packages. Public for
 * them; an application has no need of it. Stateless, so thread-safe.
 */
public final class Durations {

  private Durations() {
  }

  /**
   * Returns {@code d} in milliseconds, requiring it positive and whole. The caller checks null first and words an
   * overflow itself, each in the terms of its own API.
   *
   * @param name the setting's name, which starts each message ({@code "window"})
   * @param d the duration
   * @return {@code d.toMillis()}, at least 1
   * @throws IllegalArgumentException {@code "<name> must be > 0 but was <d>"} if {@code d} is zero or negative;
   *     {@code "<name> must be a whole number of milliseconds but was <d>"} if it has a fraction of a millisecond
   * @throws ArithmeticException if {@code d} is longer than {@link Long#MAX_VALUE} milliseconds
   * @throws NullPointerException if {@code d} is null
   */
  public static long positiveMillis(String name, Duration d) {
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be > 0 but was " + d);
    }
    if (d.getNano() % 1_000_000 != 0) {
      throw new IllegalArgumentException(name + " must be a whole number of milliseconds but was " + d);
    }
    return d.toMillis();
  }
}
