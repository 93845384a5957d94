package io.github.vertxdedup.kafka.impl;

/**
 * Runs a pass over and over until nobody asked for another: a {@link #run} call made while a pass runs (a future that
 * completed at once inside it, whose listener asks the owner to go on) asks for one more pass instead of recursing.
 * So a long chain of already-complete futures costs no stack, and a pass never runs inside another.
 *
 * <p>Not thread-safe: one event loop (its {@link PartitionOwner}'s).
 */
final class Trampoline {

  private enum State {
    IDLE,
    RUNNING,
    /** Asked to run again while it ran. */
    AGAIN
  }

  private final Runnable pass;
  private State state = State.IDLE;

  /** @param pass what one pass does */
  Trampoline(Runnable pass) {
    this.pass = pass;
  }

  /**
   * Runs passes until none was asked for during the last, or, called during a pass, asks for one more.
   *
   * @return true if this call ran the passes (and they are over), false if it only asked for one more
   */
  boolean run() {
    if (state != State.IDLE) {
      state = State.AGAIN;
      return false;
    }
    try {
      do {
        state = State.RUNNING;
        pass.run();
      } while (state == State.AGAIN);
    } finally {
      state = State.IDLE;
    }
    return true;
  }
}
