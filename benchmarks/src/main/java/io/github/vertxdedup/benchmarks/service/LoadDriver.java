package io.github.vertxdedup.benchmarks.service;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
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

  /**
   * Deploys {@code driver} on {@code vertx}, lets it run {@code warmupSec}, counts its decisions over
   * {@code measureSec}, then undeploys it (waiting for its requests in flight). Blocks the calling thread, which must
   * not be an event loop.
   *
   * @param vertx where the driver runs
   * @param driver a driver not deployed yet
   * @param warmupSec seconds before the count starts
   * @param measureSec seconds counted
   * @return decisions per second over the measured interval
   * @throws InterruptedException if the calling thread is interrupted while it waits
   */
  static double measure(Vertx vertx, LoadDriver driver, int warmupSec, int measureSec) throws InterruptedException {
    String deployment = vertx.deployVerticle(driver).await();
    Thread.sleep(warmupSec * 1000L);
    long c0 = driver.decisions;
    long t0 = System.nanoTime();
    Thread.sleep(measureSec * 1000L);
    long c1 = driver.decisions;
    long t1 = System.nanoTime();
    vertx.undeploy(deployment).await();
    return (c1 - c0) / ((t1 - t0) / 1e9);
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
