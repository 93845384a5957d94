package io.github.vertxdedup.impl.service;

import io.vertx.core.Vertx;

/**
 * The timers of one partition: its periodic tick ({@link PartitionVerticle#TICK_MS}) and the backoff between attempts
 * to reopen its journal. In production Vert.x timers ({@link #of(Vertx)}); a test injects its own and fires them,
 * so that recovery and retry timing are driven by the test rather than by real time.
 *
 * <p>Called on the partition's event loop. A task must run on the partition's context, as a Vert.x timer set from
 * that context does.
 */
interface PartitionTimer {

  /**
   * Runs {@code task} once, {@code delayMs} from now.
   *
   * @param delayMs the delay, ms, {@code >= 1}
   * @param task what to run, on the partition's context
   * @return the timer's id, for {@link #cancel}
   */
  long schedule(long delayMs, Runnable task);

  /**
   * Runs {@code task} every {@code periodMs} until cancelled.
   *
   * @param periodMs the period, ms, {@code >= 1}
   * @param task what to run, on the partition's context
   * @return the timer's id, for {@link #cancel}
   */
  long periodic(long periodMs, Runnable task);

  /**
   * Cancels a timer; a timer that has fired (or is unknown) is ignored.
   *
   * @param id the timer's id
   */
  void cancel(long id);

  /**
   * @param vertx the partition's Vert.x instance
   * @return timers of {@code vertx}: called on the partition's context, they fire on it
   */
  static PartitionTimer of(Vertx vertx) {
    return new PartitionTimer() {
      @Override
      public long schedule(long delayMs, Runnable task) {
        return vertx.setTimer(delayMs, id -> task.run());
      }

      @Override
      public long periodic(long periodMs, Runnable task) {
        return vertx.setPeriodic(periodMs, id -> task.run());
      }

      @Override
      public void cancel(long id) {
        vertx.cancelTimer(id);
      }
    };
  }
}
