package io.github.vertxdedup.examples.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.kafka.testkit.LocalKafkaExtension;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs {@link ObservabilityExample} on an in-process broker, scrapes its {@code /metrics} and asks its
 * {@code /health}: every metric the Grafana dashboard and the Prometheus rules in {@code ops/} query is served, and
 * the health covers the service's partitions and the consumer. {@link AgainstARealPrometheus} points a real
 * Prometheus at it.
 */
class ObservabilityExampleTest {

  @RegisterExtension
  static final LocalKafkaExtension kafka = new LocalKafkaExtension(3);
  @TempDir
  static Path journalDir;

  private static ObservabilityExample.Running running;
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    kafka.createTopic(ObservabilityExample.TOPIC, 3);
    running = ObservabilityExample.start(kafka.bootstrapServers(), 0, journalDir).toCompletionStage()
        .toCompletableFuture().get(60, TimeUnit.SECONDS);
    ObservabilityExample.publish(kafka.bootstrapServers(), 0, 50);
  }

  @AfterAll
  static void stop() throws Exception {
    if (running != null) {
      running.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static HttpResponse<String> get(String path) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + running.port() + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The operator files: the metric names their PromQL expressions query, by file. */
  static Map<String, Set<String>> queriedMetrics(Path root) throws IOException {
    Map<String, Set<String>> byFile = new TreeMap<>();
    try (Stream<Path> files = Files.walk(root.resolve("ops"))) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        String name = root.relativize(f).toString();
        String text = Files.readString(f, StandardCharsets.UTF_8);
        List<String> exprs;
        if (name.endsWith(".json")) {
          exprs = PromQl.dashboardExpressions(new JsonObject(text));
        } else if ((name.endsWith(".yml") || name.endsWith(".yaml")) && !name.endsWith(".test.yml")) {
          exprs = PromQl.ruleExpressions(text);
        } else {
          continue;
        }
        assertThat(exprs).as("%s has PromQL expressions", name).isNotEmpty();
        Set<String> names = new TreeSet<>();
        exprs.forEach(e -> names.addAll(PromQl.metricNames(e)));
        byFile.put(name, names);
      }
    }
    return byFile;
  }

  static Path repositoryRoot() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !(Files.isDirectory(dir.resolve("ops")) && Files.isDirectory(dir.resolve("examples")))) {
      dir = dir.getParent();
    }
    assertThat(dir).as("the repository root (a directory with ops/ and examples/) above the working directory")
        .isNotNull();
    return dir;
  }

  @Test
  void shouldServeEveryMetricTheDashboardAndTheAlertRulesQuery() throws Exception {
    Map<String, Set<String>> queried = queriedMetrics(repositoryRoot());
    assertThat(queried.keySet()).as("a dashboard and a rules file")
        .anyMatch(f -> f.endsWith(".json")).anyMatch(f -> f.endsWith(".yml"));
    Set<String> all = new TreeSet<>();
    queried.values().forEach(all::addAll);
    assertThat(all).as("the files query the dedup meters and the Kafka client's")
        .anyMatch(n -> n.startsWith("dedup_kafka_")).anyMatch(n -> n.startsWith("kafka_consumer_"));

    // Kafka client metrics appear once the consumer has fetched; the window meters once published (every second).
    Set<String>[] served = new Set[1];
    try {
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
        HttpResponse<String> r = get("/metrics");
        served[0] = PromQl.sampleNames(r.body());
        return r.statusCode() == 200 && served[0].containsAll(all);
      });
    } finally {
      if (served[0] != null) {
        queried.forEach((file, names) -> {
          Set<String> missing = new TreeSet<>(names);
          missing.removeAll(served[0]);
          assertThat(missing).as("metrics %s queries that /metrics does not serve", file).isEmpty();
        });
      }
    }
  }

  @Test
  void shouldServeTheWindowMetersOfTheServiceAndOfTheConsumerSideBySide() throws Exception {
    // One registry, one set of tag keys per name: a Prometheus registry leaves out a meter whose keys differ.
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
      String body = get("/metrics").body();
      assertThat(body).contains("dedup_ready{address=\"" + ObservabilityExample.SERVICE_ADDRESS
          + "\",group=\"\",partition=\"1\",topic=\"\"} 1.0");
      assertThat(body).containsPattern("dedup_ready\\{address=\"[^\"]+\",group=\"" + ObservabilityExample.GROUP
          + "\",partition=\"2\",topic=\"" + ObservabilityExample.TOPIC + "\"} 1.0");
    });
  }

  @Test
  void shouldAnswerHealthForEachServicePartitionAndTheConsumer() throws Exception {
    await().atMost(Duration.ofSeconds(60)).until(() -> get("/health").statusCode() == 200);
    HttpResponse<String> r = get("/health");
    JsonObject health = new JsonObject(r.body());
    assertThat(health.getString("status")).isEqualTo("UP");
    Set<String> checks = new TreeSet<>();
    health.getJsonArray("checks").forEach(c -> checks.add(((JsonObject) c).getString("id")));
    assertThat(checks).containsExactlyInAnyOrder(ObservabilityExample.SERVICE_ADDRESS,
        ObservabilityExample.CONSUMER_CHECK);
    JsonObject consumer = health.getJsonArray("checks").stream().map(JsonObject.class::cast)
        .filter(c -> c.getString("id").equals(ObservabilityExample.CONSUMER_CHECK)).findFirst().orElseThrow();
    assertThat(consumer.getJsonObject("data").getJsonObject("partitions").fieldNames())
        .containsExactlyInAnyOrder("payments-0", "payments-1", "payments-2");
  }

  /**
   * A real Prometheus server ({@code prometheus} from Debian's package; skipped without it, except in CI where it
   * fails) scrapes the running example every second and loads the rules of {@code ops/prometheus}: the dashboard's
   * queries, as Grafana would send them, answer with data, and every rule loads and evaluates without error.
   */
  @Nested
  @TestInstance(TestInstance.Lifecycle.PER_CLASS)
  class AgainstARealPrometheus {

    private PrometheusServer prometheus;
    private Path root;

    @BeforeAll
    void startPrometheus() throws Exception {
      Path binary = OpsTools.require("prometheus");
      root = repositoryRoot();
      prometheus = PrometheusServer.start(binary, "127.0.0.1:" + running.port(), "/metrics", ruleFiles(root));
      List<String>[] targets = new List[1];
      try {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250))
            .failFast("prometheus exited", () -> !prometheus.alive())
            .until(() -> {
              targets[0] = prometheus.targetsUp();
              return !targets[0].isEmpty() && targets[0].stream().allMatch(t -> t.startsWith("up "));
            });
      } catch (RuntimeException e) {
        throw new AssertionError("the example's target is not up in Prometheus: " + targets[0] + "\n"
            + prometheus.log(), e);
      }
    }

    @AfterAll
    void stopPrometheus() throws Exception {
      if (prometheus != null) {
        prometheus.close();
      }
    }

    private static List<Path> ruleFiles(Path root) throws IOException {
      try (Stream<Path> files = Files.list(root.resolve("ops").resolve("prometheus"))) {
        return files.filter(f -> f.toString().endsWith(".yml") && !f.toString().endsWith(".test.yml")).sorted()
            .toList();
      }
    }

    @Test
    void shouldAnswerEveryQueryOfTheDashboardWithData() throws Exception {
      List<String> exprs = PromQl.dashboardExpressions(new JsonObject(Files.readString(
          root.resolve("ops").resolve("grafana").resolve("vertx-dedup.json"), StandardCharsets.UTF_8)));
      assertThat(exprs).isNotEmpty();
      Map<String, JsonObject> answers = new TreeMap<>();
      // The rates need two scrapes inside their range: poll until every query has data, or the time is up.
      try {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500))
            .failFast("prometheus exited", () -> !prometheus.alive())
            .until(() -> {
              for (String expr : exprs) {
                String sent = asGrafanaSends(expr);
                JsonObject a = answers.get(sent);
                if (a == null || !"success".equals(a.getString("status")) || a.getJsonObject("data")
                    .getJsonArray("result").isEmpty()) {
                  answers.put(sent, prometheus.query(sent));
                }
              }
              return answers.values().stream().allMatch(a -> "success".equals(a.getString("status"))
                  && !a.getJsonObject("data").getJsonArray("result").isEmpty());
            });
      } finally {
        answers.forEach((expr, a) -> {
          assertThat(a.getString("status")).as("status of %s: %s", expr, a.encode()).isEqualTo("success");
          assertThat(a.getJsonObject("data").getJsonArray("result")).as("the result of %s", expr).isNotEmpty();
        });
      }
    }

    @Test
    void shouldLoadAndEvaluateEveryAlertRule() throws Exception {
      Map<String, Integer> expected = new TreeMap<>();
      for (Path f : ruleFiles(root)) {
        expected.put(f.toAbsolutePath().toString(), PromQl.ruleExpressions(Files.readString(f)).size());
      }
      JsonArray[] groups = new JsonArray[1];
      // A rule's health is "unknown" until its group's first evaluation, a second after loading.
      await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(250))
          .failFast("prometheus exited", () -> !prometheus.alive())
          .until(() -> {
            groups[0] = prometheus.api("rules").getJsonObject("data").getJsonArray("groups");
            return !groups[0].isEmpty() && groups[0].stream().map(JsonObject.class::cast)
                .flatMap(g -> g.getJsonArray("rules").stream().map(JsonObject.class::cast))
                .noneMatch(r -> "unknown".equals(r.getString("health")));
          });
      Map<String, Integer> loaded = new TreeMap<>();
      for (Object o : groups[0]) {
        JsonObject group = (JsonObject) o;
        loaded.merge(group.getString("file"), group.getJsonArray("rules").size(), Integer::sum);
        for (Object r : group.getJsonArray("rules")) {
          JsonObject rule = (JsonObject) r;
          assertThat(rule.getString("health")).as("health of rule %s of group %s: %s", rule.getString("name"),
              group.getString("name"), rule.getString("lastError")).isEqualTo("ok");
        }
      }
      assertThat(loaded).as("rules loaded per file").isEqualTo(expected);
    }
  }

  private static final Pattern GRAFANA_VARIABLE = Pattern.compile("\\$\\{?(__[a-z_]+)}?");

  /**
   * An expression of the dashboard as Grafana sends it to a Prometheus data source whose scrape interval is
   * {@link PrometheusServer#SCRAPE_INTERVAL}: {@code $__interval} is that interval (the step of an instant query)
   * and {@code $__rate_interval} four times it (Grafana's floor for {@code rate()}: four scrapes).
   */
  static String asGrafanaSends(String expr) {
    long scrapeSeconds = PrometheusServer.SCRAPE_INTERVAL.toSeconds();
    Matcher m = GRAFANA_VARIABLE.matcher(expr);
    StringBuilder sent = new StringBuilder();
    while (m.find()) {
      String value = switch (m.group(1)) {
        case "__rate_interval" -> 4 * scrapeSeconds + "s";
        case "__interval" -> scrapeSeconds + "s";
        default -> throw new AssertionError("a Grafana variable the test does not know: " + m.group() + " in " + expr);
      };
      m.appendReplacement(sent, value);
    }
    m.appendTail(sent);
    assertThat(sent.toString()).as("a variable left in %s", expr).doesNotContain("$");
    return sent.toString();
  }
}
