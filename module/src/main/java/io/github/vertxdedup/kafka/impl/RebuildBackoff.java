package io.github.vertxdedup.kafka.impl;

import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.kafka.common.errors.RetriableException;

/**
 * Calls a rebuild's reading consumer makes, retried with exponential backoff while the broker is briefly unreachable:
 * a call that fails with one of Kafka's {@link RetriableException}s (its own {@code TimeoutException} when the broker
 * does not answer in time, a disconnection, a leader that moved, a partition the broker does not know yet) is called
 * again after {@code initialMs}, then twice as long each time up to {@code maxMs}, for as long as the failures of one
 * episode last less than {@code budgetMs}; past that, the last failure is thrown, and the rebuild fails (its partition
 * stays unhandled and is rebuilt again later, see {@link Rebuilds}). Any other exception (an authorization failure,
 * a record the deserializer rejects, a wake-up) is thrown at once: no retry mends it. A success ends the episode.
 *
 * <p>The project has no retry library among its dependencies; this is the small loop a retry needs. The wait is
 * sliced so that a {@code cancelled} rebuild stops waiting within {@value #SLICE_MS} ms.
 *
 * <p>Not thread-safe: the rebuild's thread only.
 */
final class RebuildBackoff {

  /** Longest single wait between checks of {@code cancelled}, in milliseconds. */
  static final long SLICE_MS = 50;

  /** Waits; the production one sleeps. */
  interface Sleeper {
    /**
     * @param ms how long, milliseconds
     * @throws InterruptedException if the thread was interrupted
     */
    void sleep(long ms) throws InterruptedException;
  }

  /** Told of each retry. */
  interface RetryListener {
    /**
     * @param what the call's name
     * @param failure its failure
     * @param waitMs the wait before the next call, milliseconds
     * @param retry the retry's number within its episode, from 1
     */
    void retrying(String what, RetriableException failure, long waitMs, int retry);
  }

  private final long initialMs;
  private final long maxMs;
  private final long budgetMs;
  private final LongSupplier nanoTime;
  private final Sleeper sleeper;
  private final BooleanSupplier cancelled;
  private final RetryListener listener;
  /** When the failures of the current episode began ({@link #nanoTime}), or -1 outside one. */
  private long episodeStartNs = -1;
  private long nextWaitMs;
  private int retries;

  /**
   * @param initialMs the first wait, milliseconds, {@code > 0}
   * @param maxMs the longest wait, milliseconds, {@code >= initialMs}
   * @param budgetMs how long the failures of one episode may last before the last one is thrown, milliseconds
   * @param nanoTime a monotonic clock, nanoseconds
   * @param sleeper how to wait
   * @param cancelled true once the rebuild is cancelled: a wait ends early, and the failure is thrown
   * @param listener told of each retry
   */
  RebuildBackoff(long initialMs, long maxMs, long budgetMs, LongSupplier nanoTime, Sleeper sleeper,
      BooleanSupplier cancelled, RetryListener listener) {
    if (initialMs <= 0 || maxMs < initialMs || budgetMs < 0) {
      throw new IllegalArgumentException("need 0 < initialMs <= maxMs and budgetMs >= 0 but were " + initialMs
          + ", " + maxMs + ", " + budgetMs);
    }
    this.initialMs = initialMs;
    this.maxMs = maxMs;
    this.budgetMs = budgetMs;
    this.nanoTime = nanoTime;
    this.sleeper = sleeper;
    this.cancelled = cancelled;
    this.listener = listener;
  }

  /**
   * Calls {@code call}, again after a backoff while it fails with a {@link RetriableException} within the budget.
   *
   * @param what the call's name, for the listener
   * @param call the call
   * @param <T> its result type
   * @return its result
   * @throws RetriableException the last failure once the episode outlasted the budget, or the rebuild was cancelled
   * @throws RuntimeException any other failure of the call, at once
   * @throws InterruptedException if interrupted while waiting
   */
  <T> T call(String what, Supplier<T> call) throws InterruptedException {
    while (true) {
      try {
        T result = call.get();
        episodeStartNs = -1;
        return result;
      } catch (RetriableException e) {
        long now = nanoTime.getAsLong();
        if (episodeStartNs < 0) {
          episodeStartNs = now;
          nextWaitMs = initialMs;
          retries = 0;
        }
        long elapsedMs = (now - episodeStartNs) / 1_000_000L;
        if (cancelled.getAsBoolean() || elapsedMs + nextWaitMs > budgetMs) {
          throw e;
        }
        long waitMs = nextWaitMs;
        nextWaitMs = Math.min(maxMs, nextWaitMs * 2);
        listener.retrying(what, e, waitMs, ++retries);
        for (long left = waitMs; left > 0 && !cancelled.getAsBoolean(); left -= SLICE_MS) {
          sleeper.sleep(Math.min(left, SLICE_MS));
        }
      }
    }
  }
}
