package io.github.vertxdedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.github.vertxdedup.time.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Deploys a {@link DedupVerticle} with a {@link ManualClock} before each test and sends raw wire requests. The
 * test thread waits for replies (it is not an event loop); time moves only when a test advances the clock.
 */
@ExtendWith(VertxExtension.class)
abstract class ServiceTestSupport {

  /** A plausible epoch instant, so event times and expiries look like production ones. */
  static final long T0 = 1_700_000_000_000L;
  static final long WINDOW_MS = 60_000;
  static final long BUCKET_MS = 1_000;

  final ManualClock clock = new ManualClock(T0);
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  Vertx vertx;
  DedupVerticle verticle;
  String deploymentId;

  /** @return the options each test deploys with; override to change them */
  DedupOptions options() {
    return new DedupOptions().setWindowMs(WINDOW_MS).setBucketMs(BUCKET_MS);
  }

  @BeforeEach
  void deployService(Vertx vertx) {
    this.vertx = vertx;
    verticle = new DedupVerticle(clock).setMeterRegistry(registry);
    deploymentId = TestDeployments.deployService(vertx, verticle, options());
  }

  static <T> T await(Future<T> f) {
    return TestFutures.await(f, 10);
  }

  /** Sends a wire request and returns the raw reply body, or throws the ReplyException. */
  Object send(String address, String action, Object body) {
    DeliveryOptions opts = new DeliveryOptions();
    if (action != null) {
      opts.addHeader(DedupAction.HEADER, action);
    }
    Message<Object> reply = await(vertx.eventBus().request(address, body, opts));
    return reply.body();
  }

  JsonObject ok(String action, JsonObject body) {
    return (JsonObject) send("dedup.0", action, body);
  }

  ReplyException failure(String address, String action, Object body) {
    try {
      Object reply = send(address, action, body);
      return fail("expected a failure but got " + reply);
    } catch (ReplyException e) {
      return e;
    }
  }

  ReplyException failure(String action, Object body) {
    return failure("dedup.0", action, body);
  }

  String verdict(String action, JsonObject body) {
    return ok(action, body).getString("verdict");
  }

  String check(String id) {
    return verdict("check", new JsonObject().put("id", id));
  }

  JsonObject stats() {
    return ok("stats", null);
  }

  static JsonObject id(String id) {
    return new JsonObject().put("id", id);
  }

  static void assertFailure(ReplyException e, int code, String... fragments) {
    assertThat(e.failureCode()).as("failure code of: %s", e.getMessage()).isEqualTo(code);
    for (String f : fragments) {
      assertThat(e.getMessage()).contains(f);
    }
  }
}
