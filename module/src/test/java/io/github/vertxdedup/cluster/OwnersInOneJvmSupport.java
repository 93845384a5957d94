package io.github.vertxdedup.cluster;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.TestDeployments;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deployments of one service in one (non-clustered) Vert.x, made fresh for each test and closed after it, for the
 * tests of owners and standbys that need no cluster: they share one {@link ManualClock} (the window's time, which the
 * test advances) and a temporary directory for their journals, and the test speaks to the partitions with raw wire
 * requests.
 *
 * <p>For test threads only: every call waits for its reply, so none may run on an event loop. A request that fails
 * throws its {@link io.vertx.core.eventbus.ReplyException}.
 */
abstract class OwnersInOneJvmSupport {

  /** A plausible epoch instant, so takeover instants and unvouched marks look like production ones. */
  static final long T0 = 1_700_000_000_000L;

  /** Where a test puts its deployments' journal directories. */
  @TempDir
  Path tmp;

  /** The window's clock of every deployment the test makes. */
  final ManualClock clock = new ManualClock(T0);
  Vertx vertx;

  @BeforeEach
  void startVertx() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void closeVertx() {
    TestFutures.await(vertx.close(), 20);
  }

  /**
   * Deploys one more {@link io.github.vertxdedup.DedupVerticle} of the service on {@link #clock} and waits for it: the first owns the
   * partitions, the others stand by.
   *
   * @param options the service's configuration
   * @return the deployment id
   */
  String deploy(DedupOptions options) {
    return TestDeployments.deployService(vertx, clock, options);
  }

  /**
   * Sends {@code action} with {@code body} to a partition's address and waits up to 10 s for the reply.
   *
   * @param address the partition's address, {@code <address>.<p>}
   * @param action the operation, sent in the action header
   * @param body the request's body, or null
   * @return the reply's body
   */
  JsonObject request(String address, DedupAction action, JsonObject body) {
    return (JsonObject) TestFutures.await(vertx.eventBus().request(address, body, action(action)), 10).body();
  }

  /** @return delivery options that carry {@code action} in the action header */
  static DeliveryOptions action(DedupAction action) {
    return new DeliveryOptions().addHeader(DedupAction.HEADER, action.wireName());
  }
}
