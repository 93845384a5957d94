package io.github.vertxdedup.kafka.impl;

import java.util.function.BooleanSupplier;

/**
 * What the head record of a {@link PartitionOwner}'s queue waits for, the backoff timer that ends a wait for time,
 * and whether the poll thread should pause the partition meanwhile. The pump takes the head on only while it waits for
 * nothing ({@link #idle}).
 *
 * <p>A backoff is the wait before a record is decided again (a 503, a lost reply, another delivery's claim, an
 * effect-first handler failure) or, record-first, before its handler is called again. A wait for a lease or for the
 * window (503, {@link #pauseWanted}) also asks the poll thread to pause the partition, until the head's handler
 * starts, a duplicate is dropped or the queue empties ({@link #stopWaiting}), which wakes the poll thread.
 *
 * <p>Event loop of its owner only, except {@link #wantsPause}, which any thread may call.
 */
final class HeadWait {

  /** What the head waits for. */
  enum State {
    /** Nothing: the pump may take the head on. */
    IDLE,
    /** The answer to the decision request of a run from the head. */
    DECIDING,
    /** Its handler's future. */
    HANDLING,
    /** Effect-first: the release of its claim after a failed handler call. */
    RELEASING,
    /** The dead-letter handler's future. */
    DEAD_LETTERING,
    /** A timer, after which it is decided again (a 503, a lost reply, another delivery's claim). */
    BACKING_OFF_TO_DECIDE,
    /** Record-first: a timer, after which its handler is called again. */
    BACKING_OFF_TO_HANDLE
  }

  private final OwnerLoop loop;
  /** Wakes the poll thread: the partition may be resumed. */
  private final Runnable wakePoll;
  private State state = State.IDLE;
  /** The backoff's timer, or -1. */
  private long timerId = -1;
  /** The head waits for a lease or for the window (503): the poll thread pauses the partition. */
  private volatile boolean wantsPause;

  /**
   * @param loop the owner's event loop (timers)
   * @param wakePoll wakes the poll thread; any thread
   */
  HeadWait(OwnerLoop loop, Runnable wakePoll) {
    this.loop = loop;
    this.wakePoll = wakePoll;
  }

  /** @return true if the head waits for nothing */
  boolean idle() {
    return state == State.IDLE;
  }

  /**
   * @return true if the head's handler (or its dead-letter handler, or the release of its claim after a failed call)
   *     has started: not while it waits to be decided, for a decision, or, decided, for a decision ahead of it
   */
  boolean handlerStarted() {
    return state == State.HANDLING || state == State.BACKING_OFF_TO_HANDLE || state == State.DEAD_LETTERING
        || state == State.RELEASING;
  }

  /** The head now waits for {@code what} ({@link State#IDLE}: for nothing). */
  void set(State what) {
    state = what;
  }

  /** @return true while the head waits for a lease or for the window (503); any thread */
  boolean wantsPause() {
    return wantsPause;
  }

  /** The head waits for a lease or for the window: the poll thread should pause the partition. */
  void pauseWanted() {
    wantsPause = true;
  }

  /** The head no longer waits for a lease or a backoff: wakes the poll thread, which may resume the partition. */
  void stopWaiting() {
    if (wantsPause) {
      wantsPause = false;
      wakePoll.run();
    }
  }

  /**
   * Waits {@code delayMs} with the head, then waits for nothing and runs {@code then}, unless the owner has stopped or
   * the backoff was cancelled by then. Before that, a record backing off to be decided again
   * ({@link State#BACKING_OFF_TO_DECIDE}) forgets its decision.
   *
   * @param delayMs the backoff, in milliseconds
   * @param what {@link State#BACKING_OFF_TO_DECIDE} or {@link State#BACKING_OFF_TO_HANDLE}
   * @param head the head record
   * @param then runs after the backoff (the owner's pump)
   */
  void backOff(long delayMs, State what, PendingRecord<?, ?> head, Runnable then) {
    state = what;
    timerId = loop.afterDelay(delayMs, () -> {
      timerId = -1;
      state = State.IDLE;
      if (what == State.BACKING_OFF_TO_DECIDE) {
        head.decision = null;
      }
      then.run();
    });
  }

  /**
   * Ends at once a backoff after which the head would be decided again, if {@code allowed} (asked only then) says so:
   * the head then waits for nothing and has forgotten its decision.
   *
   * @param head the head record
   * @return true if a backoff was ended
   */
  boolean endBackoffToDecide(PendingRecord<?, ?> head, BooleanSupplier allowed) {
    if (timerId == -1 || state != State.BACKING_OFF_TO_DECIDE || !allowed.getAsBoolean()) {
      return false;
    }
    cancelTimer();
    state = State.IDLE;
    head.decision = null;
    return true;
  }

  /** Cancels the backoff's timer, if any (the owner stops). */
  void cancelTimer() {
    if (timerId != -1) {
      loop.cancelTimer(timerId);
      timerId = -1;
    }
  }
}
