package io.github.vertxdedup;

import io.github.vertxdedup.time.DedupClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;

/**
 * Deploys the dedup service for a test and waits for it: a {@link DedupVerticle} on the test's clock (a
 * {@link io.github.vertxdedup.time.ManualClock} the test advances), with its meters in a
 * {@link SimpleMeterRegistry} of its own, configured by {@link DedupOptions#toJson()} as an application deploys it.
 *
 * <p>For test threads only (the wait blocks); never call it on an event loop.
 */
public final class TestDeployments {

  /** How long a deployment may take before the test fails, in seconds: a journaled service opens its queues. */
  public static final int DEPLOY_TIMEOUT_SECONDS = 20;

  private TestDeployments() {}

  /**
   * Deploys a {@link DedupVerticle} on {@code clock} with a new {@link SimpleMeterRegistry} and waits for it.
   *
   * @param vertx where to deploy
   * @param clock the service's clock
   * @param options the service's configuration, passed as the deployment's JSON config
   * @return the deployment id
   * @throws RuntimeException the deployment's failure, as it is when unchecked
   * @throws IllegalStateException if the deployment does not complete within {@link #DEPLOY_TIMEOUT_SECONDS}
   */
  public static String deployService(Vertx vertx, DedupClock clock, DedupOptions options) {
    return deployService(vertx, new DedupVerticle(clock).setMeterRegistry(new SimpleMeterRegistry()), options);
  }

  /**
   * Deploys {@code verticle}, set up by the test (its clock, registry, test seams), and waits for it.
   *
   * @param vertx where to deploy
   * @param verticle the service verticle, not deployed yet
   * @param options the service's configuration, passed as the deployment's JSON config
   * @return the deployment id
   * @throws RuntimeException the deployment's failure, as it is when unchecked
   * @throws IllegalStateException if the deployment does not complete within {@link #DEPLOY_TIMEOUT_SECONDS}
   */
  public static String deployService(Vertx vertx, DedupVerticle verticle, DedupOptions options) {
    return TestFutures.await(vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(options.toJson())),
        DEPLOY_TIMEOUT_SECONDS);
  }
}
