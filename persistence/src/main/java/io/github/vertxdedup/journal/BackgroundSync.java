package io.github.vertxdedup.journal;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one daemon thread that runs the periodic syncs of every {@link SyncPolicy#ASYNC} journal in the process.
 * One thread is enough: fsyncs of one disk do not overlap usefully, and a sync per journal per second is cheap.
 */
final class BackgroundSync {

  private static final ScheduledThreadPoolExecutor EXECUTOR;

  static {
    EXECUTOR = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "vertx-dedup-journal-sync");
      t.setDaemon(true);
      return t;
    });
    EXECUTOR.setRemoveOnCancelPolicy(true);
  }

  private BackgroundSync() {
  }

  static ScheduledFuture<?> schedule(Runnable task, Duration interval) {
    long nanos = interval.toNanos();
    return EXECUTOR.scheduleWithFixedDelay(task, nanos, nanos, TimeUnit.NANOSECONDS);
  }
}
