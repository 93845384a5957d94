package io.github.vertxdedup;

import static io.github.vertxdedup.ServiceTestSupport.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A request is decided at one instant: with a clock that moves on every reading, an event whose rememberUntilMs is
 * valid when the batch is validated must not fail later in the window and leave the batch half recorded.
 */
@ExtendWith(VertxExtension.class)
class BatchClockTest {

  private static final long T0 = 1_700_000_000_000L;

  @Test
  void shouldDecideAWholeBatchAtTheInstantItWasValidatedAt(Vertx vertx) {
    AtomicLong readings = new AtomicLong(T0);
    DedupVerticle verticle = new DedupVerticle(readings::getAndIncrement);
    await(vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(
        new DedupOptions().setWindowMs(60_000).setBucketMs(1_000).toJson())));
    long soon = readings.get() + 1;

    JsonArray events = new JsonArray()
        .add(new JsonObject().put("id", "plain"))
        .add(new JsonObject().put("id", "timed").put("rememberUntilMs", soon));
    JsonObject reply = (JsonObject) await(vertx.eventBus().request("dedup.0",
        new JsonObject().put("events", events), new DeliveryOptions().addHeader("action", "checkBatch"))).body();

    assertThat(reply.getJsonArray("verdicts").getJsonObject(0).getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(reply.getJsonArray("verdicts").getJsonObject(1).getString("verdict")).isEqualTo("ACCEPTED");
    JsonObject again = (JsonObject) await(vertx.eventBus().request("dedup.0", new JsonObject().put("id", "plain"),
        new DeliveryOptions().addHeader("action", "check"))).body();
    assertThat(again.getString("verdict")).isEqualTo("DUPLICATE");
  }
}
