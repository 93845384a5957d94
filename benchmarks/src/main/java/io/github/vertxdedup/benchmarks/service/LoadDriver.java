package io.github.vertxdedup.benchmarks.service;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import java.util.function.LongFunction;

/**
 * Keeps a fixed number of requests outstanding from its own event loop until undeployed, counting the decisions of
 * the answered ones: the load of the service throughput harnesses ({@link ServiceThroughput},
 * {@link ClusterThroughput}). The counters are written on its event loop and read by the harness's main thread
 * (volatile). Undeploying waits for every request in flight to come back, so the service under test is not undeployed
 * under them.
 */
final class LoadDriver extends VerticleBase {

  private final int inFlight;
  private final int decisionsPerReply;
  private final LongFunction<Future<?>> request;
  private final Promise<Void> drained = Promise.promise();
  private long next;
  private boolean running = true;
  private int outstanding;
  /** Decisions answered so far. */
  volatile long decisions;
  /** Requests failed so far; the first failure is printed. */
  volatile long errors;

  /**
   * @param inFlight requests kept outstanding
   * @param decisionsPerReply decisions one answered request counts for (1, or a batch's size)
   * @param request sends request number {@code n} (0, 1, 2, ...)
   */
  LoadDriver(int inFlight, int decisionsPerReply, LongFunction<Future<?>> request) {
    this.inFlight = inFlight;
    this.decisionsPerReply = decisionsPerReply;
    this.request = request;
  }

  @Override
  public Future<?> start() {
    for (int i = 0; i < inFlight; i++) {
      fire();
    }
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    running = false;
    return outstanding == 0 ? Future.succeededFuture() : drained.future();
  }

  private void fire() {
    outstanding++;
    request.apply(next++).onComplete(ar -> {
      outstanding--;
      if (ar.succeeded()) {
        decisions += decisionsPerReply;
      } else if (errors++ == 0) {
        System.out.println("first error: " + ar.cause());
      }
      if (running) {
        fire();
      } else if (outstanding == 0) {
        drained.tryComplete();
      }
    });
  }
}
