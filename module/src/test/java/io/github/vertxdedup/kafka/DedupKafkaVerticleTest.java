package io.github.vertxdedup.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.TestFutures;
import io.vertx.config.ConfigRetriever;
import io.vertx.config.ConfigRetrieverOptions;
import io.vertx.config.ConfigStoreOptions;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.CheckResult;
import io.vertx.ext.healthchecks.HealthChecks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The consumer verticle on a real broker, deployed by name from JSON as an application deploys it: records reach the
 * event-bus address once per id, a failure reply or a timeout is retried and then dead-lettered, and undeploying
 * closes the consumer. The test thread waits for deployments (it is not an event loop).
 */
class DedupKafkaVerticleTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  private static final String VERTICLE = "io.github.vertxdedup.kafka.DedupKafkaVerticle";
  private static final AtomicInteger NAMES = new AtomicInteger();

  private Vertx vertx;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private static String name(String prefix) {
    return prefix + "-" + NAMES.incrementAndGet();
  }

  /**
   * The verticle's own object: the test broker, a group of its own, string deserializers by default (none named),
   * identity from the message-id header, a ten-minute window, three handler attempts with short backoffs.
   */
  private static JsonObject ours(String topic, String group, String address, AtomicityMode mode) {
    JsonObject kafka = new JsonObject();
    broker.consumerConfig(group).forEach((k, v) -> {
      if (!k.endsWith(".deserializer")) {
        kafka.put(k, v);
      }
    });
    return new JsonObject()
        .put("address", address)
        .put("topics", new JsonArray().add(topic))
        .put("kafka", kafka.put("max.poll.records", 500))
        .put("identity", new JsonObject().put("header", KafkaTestSupport.MESSAGE_ID))
        .put("options", new JsonObject()
            .put("dedup", new JsonObject().put("address", "test.kafka").put("windowMs", 600_000))
            .put("mode", mode.name())
            .put("maxAttempts", 3)
            .put("backoffInitialMs", 1)
            .put("backoffMaxMs", 20)
            .put("pollTimeoutMs", 20)
            .put("commitIntervalMs", 20));
  }

  private String deploy(JsonObject config) {
    return TestFutures.await(vertx.deployVerticle(VERTICLE, new DeploymentOptions().setConfig(config)), 60);
  }

  /** Registers a handler at {@code address} that collects every request body, then lets {@code reply} answer it. */
  private List<JsonObject> handle(String address, Consumer<Message<JsonObject>> reply) {
    List<JsonObject> bodies = new CopyOnWriteArrayList<>();
    TestFutures.await(vertx.eventBus().<JsonObject>consumer(address, m -> {
      bodies.add(m.body());
      reply.accept(m);
    }).completion(), 10);
    return bodies;
  }

  private static Map<String, Long> countsByKey(List<JsonObject> bodies) {
    return bodies.stream().collect(Collectors.groupingBy(b -> b.getString("key"), Collectors.counting()));
  }

  @Test
  void shouldAnswerAHealthProcedureForTheConsumersOfTheVerticlesDeployedByName() throws Exception {
    String topic = name("verticle-health");
    String group = name("g");
    broker.createTopic(topic, 2);
    handle("health-billing", m -> m.reply(null));
    HealthChecks checks = HealthChecks.create(vertx);
    DedupKafkaVerticle.registerHealthProcedure(vertx, checks, "payments-consumer");
    CheckResult none = TestFutures.await(checks.checkStatus("payments-consumer"), 10);
    assertThat(none.getUp()).isFalse();
    assertThat(none.getData().getString("state")).isEqualTo("NOT_DEPLOYED");

    String id = TestFutures.await(vertx.deployVerticle(VERTICLE, new DeploymentOptions().setInstances(2)
        .setConfig(new JsonObject().put("dedupKafka", ours(topic, group, "health-billing",
            AtomicityMode.RECORD_FIRST)))), 60);
    broker.send(topic, 0, "a", "v");
    broker.send(topic, 1, "b", "v");
    broker.flush();
    broker.awaitCommitted(group, topic, 2);
    await().atMost(Duration.ofSeconds(30)).until(() -> TestFutures.await(checks.checkStatus("payments-consumer"), 10)
        .getUp());
    JsonObject consumers = TestFutures.await(checks.checkStatus("payments-consumer"), 10).getData()
        .getJsonObject("consumers");
    assertThat(consumers.fieldNames()).hasSize(2).allSatisfy(k -> assertThat(k).startsWith(id + "#"));
    Set<String> partitions = new HashSet<>();
    consumers.forEach(e -> partitions.addAll(((JsonObject) e.getValue()).getJsonObject("partitions").fieldNames()));
    assertThat(partitions).containsExactlyInAnyOrder(topic + "-0", topic + "-1");

    TestFutures.await(vertx.undeploy(id), 60);
    assertThat(TestFutures.await(checks.checkStatus("payments-consumer"), 10).getUp()).isFalse();
  }

  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldHandEachRecordToTheAddressOnceWhenDeployedByNameFromJson(AtomicityMode mode) throws Exception {
    String topic = name("verticle-dups");
    String group = name("g");
    broker.createTopic(topic, 3);
    List<JsonObject> bodies = handle("billing", m -> m.reply(null));
    // Beside its own object, keys of other parts of the application, one of them named like an option of ours.
    deploy(new JsonObject()
        .put("dedupKafka", ours(topic, group, "billing", mode))
        .put("http", new JsonObject().put("port", 8080))
        .put("address", "not ours: outside the dedupKafka object"));

    for (int copy = 0; copy < 3; copy++) {
      for (int i = 0; i < 40; i++) {
        broker.send(topic, "id-" + i, "{\"n\":" + i + "}");
      }
    }
    broker.flush();
    broker.awaitCommitted(group, topic, 120);
    // Record-first commits a decided run's offsets before its handlers run: wait for the handlers too.
    await().atMost(Duration.ofSeconds(30)).until(() -> countsByKey(bodies).size() == 40);

    Map<String, Long> counts = countsByKey(bodies);
    assertThat(counts).hasSize(40);
    assertThat(counts.values()).containsOnly(1L);
    JsonObject first = bodies.stream().filter(b -> b.getString("key").equals("id-7")).findFirst().orElseThrow();
    assertThat(first.getString("topic")).isEqualTo(topic);
    assertThat(first.getInteger("partition")).isBetween(0, 2);
    assertThat(first.getLong("offset")).isNotNegative();
    assertThat(first.getLong("timestamp")).isPositive();
    assertThat(first.getString("timestampType")).isEqualTo("CREATE_TIME");
    assertThat(first.getString("value")).isEqualTo("{\"n\":7}");
    assertThat(first.getJsonArray("headers")).containsExactly(
        new JsonObject().put("key", KafkaTestSupport.MESSAGE_ID).put("value", "id-7"));
  }

  @Test
  void shouldDeployFromAConfigurationMergedByVertxConfigAndFindTheIdAtAJsonPointer() throws Exception {
    String topic = name("verticle-merged");
    String group = name("g");
    broker.createTopic(topic, 1);
    List<JsonObject> bodies = handle("merged", m -> m.reply(null));
    // Defaults in one store, the topic and the identity in an override, and the JVM's system properties between:
    // the merge holds many keys that are not ours.
    JsonObject defaults = new JsonObject()
        .put("dedupKafka", ours("placeholder", group, "merged", AtomicityMode.RECORD_FIRST))
        .put("http", new JsonObject().put("port", 8080));
    defaults.getJsonObject("dedupKafka").remove("identity");
    JsonObject override = new JsonObject().put("dedupKafka", new JsonObject()
        .put("topics", new JsonArray().add(topic))
        .put("identity", new JsonObject().put("valuePointer", "/payment/id")));
    ConfigRetriever retriever = ConfigRetriever.create(vertx, new ConfigRetrieverOptions()
        .addStore(new ConfigStoreOptions().setType("json").setConfig(defaults))
        .addStore(new ConfigStoreOptions().setType("sys"))
        .addStore(new ConfigStoreOptions().setType("json").setConfig(override)));
    JsonObject merged = TestFutures.await(retriever.getConfig(), 10);
    retriever.close();
    assertThat(merged.size()).isGreaterThan(3);

    deploy(merged);
    broker.sendWithoutId(topic, "k1", "{\"payment\":{\"id\":\"p-1\",\"amount\":5}}");
    broker.sendWithoutId(topic, "k2", "{\"payment\":{\"id\":\"p-1\",\"amount\":5}}");
    broker.sendWithoutId(topic, "k3", "{\"payment\":{\"id\":\"p-2\",\"amount\":7}}");
    broker.flush();
    broker.awaitCommitted(group, topic, 3);
    // Record-first commits a decided run's offsets before its handlers run: wait for the handlers too.
    await().atMost(Duration.ofSeconds(30)).until(() -> bodies.size() == 2);

    assertThat(bodies).extracting(b -> b.getString("key")).containsExactly("k1", "k3");
    assertThat(bodies.get(0).getJsonArray("headers")).isEmpty();
  }

  @Test
  void shouldRetryAFailureReplyOrATimeoutThenSendTheRecordToTheDeadLetterAddress() throws Exception {
    String topic = name("verticle-dead");
    String group = name("g");
    broker.createTopic(topic, 1);
    Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
    List<JsonObject> bodies = handle("fragile", m -> {
      String key = m.body().getString("key");
      attempts.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
      switch (key) {
        case "bad" -> m.fail(500, "no account for bad");
        case "silent" -> { } // never answers: the request times out
        default -> m.reply(null);
      }
    });
    List<JsonObject> dead = handle("fragile.dead", m -> m.reply(null));
    JsonObject config = ours(topic, group, "fragile", AtomicityMode.EFFECT_FIRST)
        .put("requestTimeoutMs", 300)
        .put("deadLetterAddress", "fragile.dead");
    config.getJsonObject("options").getJsonObject("dedup").put("leaseMs", 5_000);
    deploy(new JsonObject().put("dedupKafka", config));

    for (String id : List.of("a", "bad", "b", "silent", "c")) {
      broker.send(topic, id, "v-" + id);
    }
    broker.flush();
    broker.awaitCommitted(group, topic, 5);

    assertThat(attempts).containsOnlyKeys("a", "bad", "b", "silent", "c");
    assertThat(attempts.get("bad")).hasValue(3);
    assertThat(attempts.get("silent")).hasValue(3);
    assertThat(List.of("a", "b", "c")).allSatisfy(id -> assertThat(attempts.get(id)).hasValue(1));
    // In offset order, the failing records held the partition until they were dead-lettered.
    assertThat(bodies).extracting(b -> b.getString("key"))
        .containsExactly("a", "bad", "bad", "bad", "b", "silent", "silent", "silent", "c");
    assertThat(dead).hasSize(2);
    JsonObject bad = dead.get(0);
    assertThat(bad.getString("key")).isEqualTo("bad");
    assertThat(bad.getString("value")).isEqualTo("v-bad");
    assertThat(bad.getString("reason")).isEqualTo("HANDLER_FAILED");
    assertThat(bad.getInteger("attempts")).isEqualTo(3);
    assertThat(bad.getString("cause")).isEqualTo("no account for bad");
    JsonObject silent = dead.get(1);
    assertThat(silent.getString("key")).isEqualTo("silent");
    assertThat(silent.getString("reason")).isEqualTo("HANDLER_FAILED");
    assertThat(silent.getString("cause")).contains("Timed out after waiting 300(ms) for a reply");
  }

  @Test
  void shouldCloseTheConsumerWhenUndeployed() throws Exception {
    String topic = name("verticle-undeploy");
    String group = name("g");
    broker.createTopic(topic, 2);
    List<JsonObject> bodies = handle("undeployed", m -> m.reply(null));
    String id = deploy(new JsonObject().put("dedupKafka", ours(topic, group, "undeployed",
        AtomicityMode.EFFECT_FIRST)));
    for (int i = 0; i < 10; i++) {
      broker.send(topic, "id-" + i, "v");
    }
    broker.flush();
    broker.awaitCommitted(group, topic, 10);
    assertThat(broker.members(group)).isEqualTo(1);

    TestFutures.await(vertx.undeploy(id), 60);

    // The consumer left its group and its poll thread ended.
    await().atMost(Duration.ofSeconds(30)).until(() -> broker.members(group) == 0);
    await().atMost(Duration.ofSeconds(10)).until(() -> Thread.getAllStackTraces().keySet().stream()
        .noneMatch(t -> t.getName().startsWith("dedup-kafka-poll-" + group + "-")));
    assertThat(bodies).hasSize(10);
  }

  @Test
  void shouldUndeployItselfWhenItsConsumerStopsOnAWindowThatCannotOpen(@TempDir Path journalDir) throws Exception {
    String topic = name("verticle-unopenable");
    String group = name("g");
    broker.createTopic(topic, 1);
    // The partition's journal directory is a regular file: its window cannot be opened.
    Path blocked = journalDir.resolve(group).resolve(topic + "-0");
    Files.createDirectories(blocked.getParent());
    Files.writeString(blocked, "not a directory");
    JsonObject config = ours(topic, group, "unopenable", AtomicityMode.EFFECT_FIRST);
    config.getJsonObject("options").getJsonObject("dedup").put("journalDir", journalDir.toString());
    String id = deploy(new JsonObject().put("dedupKafka", config));
    assertThat(vertx.deploymentIDs()).contains(id);

    await().atMost(Duration.ofSeconds(60)).until(() -> !vertx.deploymentIDs().contains(id));
    await().atMost(Duration.ofSeconds(30)).until(() -> broker.members(group) == 0);
  }
}
