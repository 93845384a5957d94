package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.time.DedupClock;

/**
 * The partition's clock, pinned to one reading while a request is decided: validation ("rememberUntilMs must be
 * after now"), the window's decisions for every event of a batch, lease ends and reply times all see the same
 * instant, so no event can pass validation and then fail in the window half-way through a batch. Outside a request
 * (timers, recovery) it reads the source clock.
 *
 * <p>Not thread-safe: used on the partition's event loop, and by the recovery's workers while no request is decided:
 * the one that builds the partition's window ({@link PartitionCore#newWindow}), and the ones that prepare a restore
 * in place of a snapshot ({@code DedupWindow.prepareRestore}) or presize the window's table ({@code
 * DedupWindow.presize}). The clock is never pinned then (every request is refused while the partition recovers,
 * before it would pin), so those reads see the source clock.
 */
final class RequestClock implements DedupClock {

  private final DedupClock source;
  private boolean pinned;
  private long pinnedMs;

  RequestClock(DedupClock source) {
    this.source = source;
  }

  /** Reads the source once and holds that reading until {@link #unpin()}. */
  void pin() {
    pinnedMs = source.nowMs();
    pinned = true;
  }

  void unpin() {
    pinned = false;
  }

  @Override
  public long nowMs() {
    return pinned ? pinnedMs : source.nowMs();
  }
}
