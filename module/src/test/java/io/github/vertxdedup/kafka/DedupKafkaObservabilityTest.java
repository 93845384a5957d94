package io.github.vertxdedup.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.DedupOptions;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.CheckResult;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.healthchecks.Status;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What an operator sees of the consumer: its windows' meters under the same tags as its own ({@code group},
 * {@code topic}, {@code partition}), the same series after a restart, the handler-duration timer, and its health.
 */
class DedupKafkaObservabilityTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  private static final AtomicInteger NAMES = new AtomicInteger();
  /** How long the test's handler takes before its future completes, milliseconds (a Vert.x timer). */
  private static final long HANDLER_MS = 20;

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private Vertx vertx;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private DedupKafkaConsumer<String, String> consumer(Vertx vertx, String group, KafkaTestSupport.Ledger ledger) {
    return consumer(vertx, broker.consumerConfig(group), ledger);
  }

  private DedupKafkaConsumer<String, String> consumer(Vertx vertx, Map<String, String> kafkaConfig,
      KafkaTestSupport.Ledger ledger) {
    DedupKafkaOptions options = new DedupKafkaOptions()
        .setDedup(new DedupOptions().setAddress("test.observed").setWindow(Duration.ofMinutes(10)))
        .setPollTimeoutMs(20)
        .setCommitIntervalMs(20);
    return DedupKafkaConsumer.<String, String>create(vertx, kafkaConfig, options)
        .identity(IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID))
        .handler(r -> {
          Promise<Void> done = Promise.promise();
          vertx.setTimer(HANDLER_MS, t -> ledger.credit(r.key()).onComplete(done));
          return done.future();
        })
        .meterRegistry(registry);
  }

  /** The window meter {@code dedup.verdicts{verdict}} of a topic-partition, once published (every second). */
  private double verdicts(String group, String topic, int partition, String verdict) {
    FunctionCounter c = registry.find("dedup.verdicts").tags("group", group, "topic", topic,
        "partition", Integer.toString(partition), "verdict", verdict).functionCounter();
    return c == null ? -1 : c.count();
  }

  @Test
  void shouldTagAWindowsMetersWithItsGroupTopicAndPartitionTheSameAfterARestart() throws Exception {
    String topic = "observed-" + NAMES.incrementAndGet();
    String group = "g-observed-" + NAMES.get();
    broker.createTopic(topic, 2);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    DedupKafkaConsumer<String, String> first = consumer(vertx, group, ledger);
    get(first.subscribe(topic));
    broker.send(topic, 0, "a", "v");
    broker.send(topic, 1, "b", "v");
    broker.send(topic, 1, "c", "v");
    broker.send(topic, 1, "c", "v");
    broker.flush();
    broker.awaitCommitted(group, topic, 4);
    await().atMost(Duration.ofSeconds(10)).until(() -> verdicts(group, topic, 1, "accepted") == 2
        && verdicts(group, topic, 1, "duplicate") == 1 && verdicts(group, topic, 0, "accepted") == 1);

    // Every window meter carries the tags its consumer's meters carry (group, topic, partition: the Kafka
    // partition) and the consumer's dedup address: one set of keys, the service's too.
    Set<Set<String>> windowKeys = registry.getMeters().stream()
        .filter(m -> m.getId().getName().startsWith("dedup.") && !m.getId().getName().startsWith("dedup.kafka."))
        .map(m -> m.getId().getTags().stream().map(Tag::getKey).filter(k -> !k.equals("verdict"))
            .collect(Collectors.toSet()))
        .collect(Collectors.toSet());
    assertThat(windowKeys).containsExactly(Set.of("address", "group", "topic", "partition"));
    assertThat(registry.find("dedup.ready").tag("topic", topic).meters()).extracting(Meter::getId)
        .allSatisfy(id -> assertThat(id.getTag("address")).isEqualTo("test.observed"));
    Set<Set<String>> consumerKeys = registry.getMeters().stream()
        .filter(m -> m.getId().getName().startsWith("dedup.kafka."))
        .map(m -> m.getId().getTags().stream().map(Tag::getKey).filter(k -> !k.equals("reason"))
            .collect(Collectors.toSet()))
        .collect(Collectors.toSet());
    assertThat(consumerKeys).containsExactly(Set.of("group", "topic", "partition"));

    // The handler-duration timer: each call timed from the call to its future's completion.
    Timer p1 = registry.get("dedup.kafka.handler.duration").tags("group", group, "topic", topic, "partition", "1")
        .timer();
    assertThat(p1.count()).isEqualTo(2);
    assertThat(p1.totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(2.0 * HANDLER_MS);

    // A restart (a new Vert.x instance, memory-only windows): the window's meters come back under the same tags.
    get(first.close());
    get(vertx.close());
    assertThat(registry.find("dedup.verdicts").tag("topic", topic).meters()).as("closed windows remove theirs")
        .isEmpty();
    vertx = Vertx.vertx();
    DedupKafkaConsumer<String, String> second = consumer(vertx, group, ledger);
    get(second.subscribe(topic));
    broker.send(topic, 1, "d", "v");
    broker.flush();
    broker.awaitCommitted(group, topic, 5);
    // The new window was rebuilt from the topic (b, c) and took d: its gauge, under the same tags, says 3.
    await().atMost(Duration.ofSeconds(10)).until(() -> {
      io.micrometer.core.instrument.Gauge held = registry.find("dedup.held.ids").tags("group", group, "topic", topic,
          "partition", "1").gauge();
      return held != null && held.value() == 3;
    });
    assertThat(registry.find("dedup.ready").tag("topic", topic).meters()).extracting(Meter::getId)
        .extracting(id -> id.getTag("partition")).containsExactlyInAnyOrder("0", "1");
    get(second.close());
  }

  @Test
  void shouldReportItsHealthFromSubscribeToClose() throws Exception {
    String topic = "health-" + NAMES.incrementAndGet();
    String group = "g-health-" + NAMES.get();
    broker.createTopic(topic, 2);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    DedupKafkaConsumer<String, String> c = consumer(vertx, group, ledger);
    HealthChecks checks = HealthChecks.create(vertx);
    checks.register("payments-consumer", promise -> promise.complete(c.health()));

    Status before = c.health();
    assertThat(before.isOk()).isFalse();
    assertThat(before.getData().getString("state")).isEqualTo("NOT_SUBSCRIBED");

    get(c.subscribe(topic));
    broker.send(topic, 0, "a", "v");
    broker.send(topic, 1, "b", "v");
    broker.flush();
    broker.awaitCommitted(group, topic, 2);
    CheckResult running = get(checks.checkStatus("payments-consumer"));
    assertThat(running.getUp()).isTrue();
    JsonObject data = running.getData();
    assertThat(data.getString("group")).isEqualTo(group);
    assertThat(data.getString("state")).isEqualTo("RUNNING");
    assertThat(data.getJsonObject("partitions").getMap()).containsOnlyKeys(topic + "-0", topic + "-1");
    assertThat(data.getJsonObject("partitions").getJsonObject(topic + "-1").getString("state")).isEqualTo("READY");

    get(c.close());
    CheckResult closed = get(checks.checkStatus("payments-consumer"));
    assertThat(closed.getUp()).isFalse();
    assertThat(closed.getData().getString("state")).isEqualTo("CLOSED");
  }

  /** The meters of the Kafka client {@code clientId} in the registry. */
  private List<Meter> clientMeters(String clientId) {
    return registry.getMeters().stream().filter(m -> clientId.equals(m.getId().getTag("client.id"))).toList();
  }

  @Test
  void shouldBindItsKafkaClientsMetricsInItsRegistryUntilClosed() throws Exception {
    String topic = "client-metrics-" + NAMES.incrementAndGet();
    String group = "g-client-metrics-" + NAMES.get();
    String clientId = "ledger-" + NAMES.get();
    broker.createTopic(topic, 2);
    Map<String, String> config = new HashMap<>(broker.consumerConfig(group));
    config.put("client.id", clientId);
    DedupKafkaConsumer<String, String> c = consumer(vertx, config, new KafkaTestSupport.Ledger());
    get(c.subscribe(topic));
    broker.send(topic, 0, "a", "v");
    broker.send(topic, 1, "b", "v");
    broker.send(topic, 1, "b", "v");
    broker.flush();
    broker.awaitCommitted(group, topic, 3);

    // Micrometer's Kafka client binder on the consumer's own client, in the registry of its dedup.kafka.* meters:
    // what an operator reads for the lag and the fetch rate, labelled with the client's id.
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      FunctionCounter consumed = registry.find("kafka.consumer.fetch.manager.records.consumed.total")
          .tag("client.id", clientId).functionCounter();
      assertThat(consumed).as("records consumed by client %s", clientId).isNotNull();
      assertThat(consumed.count()).isGreaterThanOrEqualTo(3);
    });
    assertThat(registry.find("kafka.consumer.fetch.manager.records.lag.max").tag("client.id", clientId).meters())
        .isNotEmpty();

    get(c.close());
    assertThat(clientMeters(clientId)).as("the client's meters after close").isEmpty();
  }
}
