package io.github.vertxdedup.time;

/**
 * Monotonic, epoch-anchored clock: the wall clock is read once, {@link System#nanoTime()} measures progress from
 * there. Immutable and thread-safe.
 */
final class SystemClock implements DedupClock {

  static final SystemClock INSTANCE = new SystemClock(System.currentTimeMillis(), System.nanoTime());

  private final long anchorEpochMs;
  private final long anchorNanos;

  SystemClock(long anchorEpochMs, long anchorNanos) {
    this.anchorEpochMs = anchorEpochMs;
    this.anchorNanos = anchorNanos;
  }

  @Override
  public long nowMs() {
    return anchorEpochMs + (System.nanoTime() - anchorNanos) / 1_000_000L;
  }
}
