package io.github.vertxdedup.kafka.impl;

import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.function.BooleanSupplier;

/**
 * The event loop a {@link PartitionOwner} runs on (the context of its window's partition verticle) and how far the
 * owner is in its life. Every continuation of the owner, its {@link CommitPipeline} and its {@link FailurePolicy}
 * goes through {@link #whenComplete} or {@link #afterDelay}, which run it on this context and drop it once the owner
 * has stopped, so a stopped owner decides, handles and commits nothing more. A fence's promise is completed once the
 * owner is drained ({@link #completeFenceIf}).
 *
 * <p>{@link #execute} may be called from any thread; everything else on the context only.
 */
final class OwnerLoop {

  /** How far the owner is in its life; it only moves forward. */
  enum Phase {
    /** Deciding, handling and committing. */
    RUNNING,
    /** Revoked: nothing new is decided; what was decided is finished. */
    FENCED,
    /** Nothing more is decided, handled or committed. */
    STOPPED
  }

  private final Vertx vertx;
  private final Context context;
  private Phase phase = Phase.RUNNING;
  /** Completed when, fenced, no decided record is left; null until fenced. */
  private Promise<Void> drained;

  OwnerLoop(Vertx vertx, Context context) {
    this.vertx = vertx;
    this.context = context;
  }

  /**
   * Fences the owner unless it already stopped.
   *
   * @param drained completed by {@link #completeFenceIf} once no decided record is left
   */
  void fence(Promise<Void> drained) {
    if (phase == Phase.RUNNING) {
      phase = Phase.FENCED;
    }
    this.drained = drained;
  }

  /**
   * Completes the fence's promise if the owner was fenced and {@code drained} (asked only then) says no decided record
   * is left.
   */
  void completeFenceIf(BooleanSupplier drained) {
    if (fenced() && this.drained != null && drained.getAsBoolean()) {
      this.drained.tryComplete();
    }
  }

  /** Stops the owner. */
  void stop() {
    phase = Phase.STOPPED;
  }

  /** @return true once fenced or stopped: nothing new is decided */
  boolean fenced() {
    return phase != Phase.RUNNING;
  }

  /** @return true once stopped */
  boolean stopped() {
    return phase == Phase.STOPPED;
  }

  /** Runs {@code r} on the context, later. Any thread. */
  void execute(Runnable r) {
    context.runOnContext(v -> r.run());
  }

  /**
   * Runs {@code h} with the outcome of {@code f} on the context (at once if {@code f} completes on it), unless the
   * owner has stopped by then.
   */
  <T> void whenComplete(Future<T> f, Handler<AsyncResult<T>> h) {
    f.onComplete(ar -> onContext(() -> {
      if (!stopped()) {
        h.handle(ar);
      }
    }));
  }

  /**
   * Runs {@code r} on the context after {@code delayMs} milliseconds, unless the owner has stopped by then.
   *
   * @return the timer's id, for {@link #cancelTimer}
   */
  long afterDelay(long delayMs, Runnable r) {
    return vertx.setTimer(delayMs, id -> {
      if (!stopped()) {
        r.run();
      }
    });
  }

  void cancelTimer(long timerId) {
    vertx.cancelTimer(timerId);
  }

  private void onContext(Runnable r) {
    if (Vertx.currentContext() == context) {
      r.run();
    } else {
      context.runOnContext(v -> r.run());
    }
  }
}
