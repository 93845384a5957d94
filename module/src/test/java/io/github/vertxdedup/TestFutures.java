package io.github.vertxdedup;

import io.vertx.core.Future;
import io.vertx.core.eventbus.ReplyException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Blocking waits on Vert.x futures, for test threads only (never an event loop). */
public final class TestFutures {

  private TestFutures() {}

  /**
   * Waits for a future and returns its value, rethrowing its failure as it is when unchecked.
   *
   * @param f the future
   * @param seconds how long to wait
   * @return the value
   * @throws IllegalStateException if it does not complete in time, or fails with a checked exception
   */
  public static <T> T await(Future<T> f, int seconds) {
    try {
      return f.toCompletionStage().toCompletableFuture().get(seconds, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException(e.getCause());
    } catch (InterruptedException | TimeoutException e) {
      throw new IllegalStateException("no reply within " + seconds + " s", e);
    }
  }

  /**
   * Waits for a future that must fail with a {@link ReplyException} (a refusal of the service) and returns it.
   *
   * @param f the future
   * @param seconds how long to wait
   * @return the failure
   * @throws AssertionError if the future succeeds
   * @throws IllegalStateException if it does not complete in time, or fails with a checked exception
   */
  public static ReplyException replyFailure(Future<?> f, int seconds) {
    Object ok;
    try {
      ok = await(f, seconds);
    } catch (ReplyException e) {
      return e;
    }
    throw new AssertionError("expected a failure but got " + ok);
  }
}
