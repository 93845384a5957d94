package io.github.vertxdedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.time.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.config.ConfigRetriever;
import io.vertx.config.ConfigRetrieverOptions;
import io.vertx.config.ConfigStoreOptions;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The deployment config of a {@link DedupVerticle}: its options alone (the shape {@link DedupOptions#toJson()}
 * writes), or its options under {@code "dedup"} in a larger configuration such as one {@code vertx-config} merges
 * from several stores. The test thread waits for deployments (it is not an event loop).
 */
@ExtendWith(VertxExtension.class)
class DedupVerticleConfigTest {

  private final ManualClock clock = new ManualClock(1_700_000_000_000L);

  @Test
  void shouldReadItsOptionsFromTheDedupObjectAndLeaveTheOtherKeysAlone(Vertx vertx) {
    JsonObject config = new JsonObject()
        .put("dedup", new DedupOptions().setAddress("nested").setPartitions(2).setWindowMs(60_000).toJson())
        .put("http", new JsonObject().put("port", 8080))
        .put("windowMs", "not ours: outside the dedup object")
        .put("PATH", "/usr/bin");
    DedupVerticle verticle = deploy(vertx, config);

    assertThat(verticle.getOptions()).isEqualTo(new DedupOptions().setAddress("nested").setPartitions(2)
        .setWindowMs(60_000));
    assertThat(check(vertx, "nested", "a")).isEqualTo("ACCEPTED");
    assertThat(check(vertx, "nested", "a")).isEqualTo("DUPLICATE");
  }

  @Test
  void shouldDeployFromAConfigurationMergedByVertxConfig(Vertx vertx) {
    // Two stores as an application layers them (defaults, then an override), plus the JVM's system properties:
    // the merge holds many keys that are not ours (surefire's own, "dedup.jvm.flags" among them).
    JsonObject defaults = new JsonObject()
        .put("dedup", new JsonObject().put("address", "merged").put("windowMs", 60_000).put("partitions", 1))
        .put("http", new JsonObject().put("port", 8080));
    JsonObject override = new JsonObject().put("dedup", new JsonObject().put("partitions", 4));
    ConfigRetriever retriever = ConfigRetriever.create(vertx, new ConfigRetrieverOptions()
        .addStore(new ConfigStoreOptions().setType("json").setConfig(defaults))
        .addStore(new ConfigStoreOptions().setType("sys"))
        .addStore(new ConfigStoreOptions().setType("json").setConfig(override)));
    JsonObject merged = TestFutures.await(retriever.getConfig(), 10);
    retriever.close();
    assertThat(merged.size()).isGreaterThan(3);

    DedupVerticle verticle = deploy(vertx, merged);

    assertThat(verticle.getOptions().getPartitions()).isEqualTo(4);
    assertThat(verticle.getOptions().getAddress()).isEqualTo("merged");
    assertThat(check(vertx, "merged", "a")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldRefuseAnUnknownKeyOrAWrongTypeInsideTheDedupObjectNamingIt(Vertx vertx) {
    JsonObject typo = new JsonObject().put("dedup", new JsonObject().put("windowMs", 60_000).put("leaseMS", 5_000))
        .put("http", new JsonObject());
    assertThatThrownBy(() -> deploy(vertx, typo))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("invalid DedupVerticle config: unknown dedup option 'leaseMS' (known: address,");

    JsonObject wrongType = new JsonObject().put("dedup", new JsonObject().put("windowMs", 60_000)
        .put("partitions", "4"));
    assertThatThrownBy(() -> deploy(vertx, wrongType))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("invalid DedupVerticle config: dedup option 'partitions' must be a JSON integer but was the string"
            + " \"4\"");

    JsonObject notAnObject = new JsonObject().put("dedup", "windowMs=60000");
    assertThatThrownBy(() -> deploy(vertx, notAnObject))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("invalid DedupVerticle config: config key 'dedup' must be a JSON object (the dedup options) but"
            + " was the string \"windowMs=60000\"");
  }

  @Test
  void shouldKeepReadingAConfigWithoutADedupObjectAsTheOptionsThemselvesStrictly(Vertx vertx) {
    DedupVerticle verticle = deploy(vertx, new DedupOptions().setAddress("flat").setWindowMs(60_000).toJson());
    assertThat(verticle.getOptions().getAddress()).isEqualTo("flat");
    assertThat(check(vertx, "flat", "a")).isEqualTo("ACCEPTED");

    JsonObject flatWithAnotherKey = new JsonObject().put("windowMs", 60_000).put("http", new JsonObject());
    assertThatThrownBy(() -> deploy(vertx, flatWithAnotherKey))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("invalid DedupVerticle config: unknown dedup option 'http'");
  }

  private DedupVerticle deploy(Vertx vertx, JsonObject config) {
    DedupVerticle verticle = new DedupVerticle(clock).setMeterRegistry(new SimpleMeterRegistry());
    TestFutures.await(vertx.deployVerticle(verticle, new DeploymentOptions().setConfig(config)),
        TestDeployments.DEPLOY_TIMEOUT_SECONDS);
    return verticle;
  }

  private static String check(Vertx vertx, String address, String id) {
    DeliveryOptions action = new DeliveryOptions().addHeader(DedupAction.HEADER, "check");
    JsonObject reply = (JsonObject) TestFutures.await(
        vertx.eventBus().request(address, new JsonObject().put("id", id), action), 10).body();
    return reply.getString("verdict");
  }
}
