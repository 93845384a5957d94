package io.github.vertxdedup.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.TestFutures;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A {@link DedupKafkaVerticle} deployed by name with a config it must refuse: every refusal names the key and what it
 * must be, and comes before anything connects (no broker here; the bootstrap address leads nowhere).
 */
@ExtendWith(VertxExtension.class)
class DedupKafkaVerticleConfigTest {

  private static JsonObject ours() {
    return new JsonObject()
        .put("address", "billing.payments")
        .put("topics", new JsonArray().add("payments"))
        .put("kafka", new JsonObject().put("bootstrap.servers", "127.0.0.1:1").put("group.id", "billing"))
        .put("identity", new JsonObject().put("header", "message-id"))
        .put("options", new JsonObject().put("dedup", new JsonObject().put("windowMs", 600_000)));
  }

  private static String refusal(Vertx vertx, JsonObject config) {
    Throwable failure = TestFutures.await(vertx.deployVerticle("io.github.vertxdedup.kafka.DedupKafkaVerticle",
        new DeploymentOptions().setConfig(config)).transform(ar -> Future.succeededFuture(ar.cause())), 20);
    assertThat(failure).as("the deployment should have failed").isInstanceOf(IllegalArgumentException.class);
    assertThat(vertx.deploymentIDs()).isEmpty();
    return failure.getMessage();
  }

  @Test
  void shouldRefuseAnUnknownKeyInsideItsObjectNamingIt(Vertx vertx) {
    JsonObject config = new JsonObject().put("dedupKafka", ours().put("topic", "payments"))
        .put("http", new JsonObject().put("port", 8080));
    assertThat(refusal(vertx, config)).isEqualTo("invalid DedupKafkaVerticle config: unknown dedup kafka verticle"
        + " option 'topic' (known: address, topics, kafka, identity, options, requestTimeoutMs, deadLetterAddress)");
  }

  @Test
  void shouldRefuseAWrongTypeInsideItsObjectNamingTheKeyAndTheType(Vertx vertx) {
    assertThat(refusal(vertx, new JsonObject().put("dedupKafka", ours().put("topics", "payments"))))
        .isEqualTo("invalid DedupKafkaVerticle config: dedup kafka verticle option 'topics' must be a JSON array of"
            + " strings but was the string \"payments\"");
    JsonObject nested = ours();
    nested.getJsonObject("options").getJsonObject("dedup").put("windowMs", "10m");
    assertThat(refusal(vertx, new JsonObject().put("dedupKafka", nested)))
        .isEqualTo("invalid DedupKafkaVerticle config: in 'options.dedup': dedup option 'windowMs' must be a JSON"
            + " integer but was the string \"10m\"");
    JsonObject lease = ours();
    lease.getJsonObject("options").getJsonObject("dedup").put("leaseMs", 0);
    assertThat(refusal(vertx, new JsonObject().put("dedupKafka", lease)))
        .startsWith("invalid DedupKafkaVerticle config: in 'options.dedup': leaseMs must be");
    assertThat(refusal(vertx, new JsonObject().put("dedupKafka", "payments")))
        .isEqualTo("invalid DedupKafkaVerticle config: config key 'dedupKafka' must be a JSON object (the dedup kafka"
            + " verticle options) but was the string \"payments\"");
  }

  @Test
  void shouldRefuseAConfigWithoutAnAddressOrTopics(Vertx vertx) {
    JsonObject noAddress = ours();
    noAddress.remove("address");
    assertThat(refusal(vertx, new JsonObject().put("dedupKafka", noAddress)))
        .isEqualTo("invalid DedupKafkaVerticle config: address is required: the event-bus address each record is"
            + " sent to");
    JsonObject noTopics = ours();
    noTopics.remove("topics");
    assertThat(refusal(vertx, new JsonObject().put("dedupKafka", noTopics)))
        .isEqualTo("invalid DedupKafkaVerticle config: topics is required: a JSON array of at least one topic name");
  }

  @Test
  void shouldRefuseAKafkaConfigTheConsumerRefuses(Vertx vertx) {
    JsonObject noGroup = ours();
    noGroup.getJsonObject("kafka").remove("group.id");
    assertThat(refusal(vertx, new JsonObject().put("dedupKafka", noGroup)))
        .isEqualTo("invalid DedupKafkaVerticle config: kafkaConfig group.id is required: windows are kept per consumer"
            + " group");
    JsonObject autoCommit = ours();
    autoCommit.getJsonObject("kafka").put("enable.auto.commit", true);
    assertThat(refusal(vertx, new JsonObject().put("dedupKafka", autoCommit)))
        .startsWith("invalid DedupKafkaVerticle config: kafkaConfig enable.auto.commit must be false or absent but"
            + " was true");
  }

  @Test
  void shouldReadAConfigWithoutTheDedupKafkaKeyAsItsOptionsStrictly(Vertx vertx) {
    assertThat(refusal(vertx, ours().put("http", new JsonObject())))
        .isEqualTo("invalid DedupKafkaVerticle config: unknown dedup kafka verticle option 'http' (known: address,"
            + " topics, kafka, identity, options, requestTimeoutMs, deadLetterAddress); the config has no 'dedupKafka'"
            + " key, so the whole config was read as the verticle's options: put them under \"dedupKafka\" when the"
            + " config holds other keys");
  }
}
