package io.github.vertxdedup.journal;

import io.github.vertxdedup.time.DedupClock;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import net.openhft.chronicle.core.time.TimeProvider;

/**
 * The journal's time, and the {@link TimeProvider} it gives Chronicle, so that the journal and Chronicle agree on
 * the cycle of every record: before each append the appender {@link #advance() advances} the time once, decides
 * whether to roll from that reading, and Chronicle, which reads the time again inside the append, gets the same
 * reading. The time never runs backwards and never falls before a floor (the start of the newest cycle on disk), so
 * a wall clock stepped back across a restart cannot make the journal write into an older cycle.
 *
 * <p>Other threads (replay, retention) read the latest reading; before the first append they read the clock.
 */
final class JournalTime implements TimeProvider {

  private static final VarHandle LATEST;

  static {
    try {
      LATEST = MethodHandles.lookup().findVarHandle(JournalTime.class, "latestMs", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final DedupClock clock;
  private volatile long floorMs = Long.MIN_VALUE;
  @SuppressWarnings("unused") // through LATEST
  private long latestMs = Long.MIN_VALUE;

  JournalTime(DedupClock clock) {
    this.clock = clock;
  }

  void floor(long floorMs) {
    this.floorMs = floorMs;
  }

  /** Reads the clock for an append (owner's thread only). */
  long advance() {
    long t = Math.max(clock.nowMs(), Math.max(floorMs, (long) LATEST.getOpaque(this)));
    LATEST.setRelease(this, t);
    return t;
  }

  /** The clock as replay and retention see it: not before the latest append's reading. */
  long now() {
    return Math.max(clock.nowMs(), Math.max(floorMs, (long) LATEST.getAcquire(this)));
  }

  @Override
  public long currentTimeMillis() {
    long latest = (long) LATEST.getAcquire(this);
    return latest != Long.MIN_VALUE ? latest : Math.max(clock.nowMs(), floorMs);
  }
}
