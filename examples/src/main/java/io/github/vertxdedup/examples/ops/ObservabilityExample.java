package io.github.vertxdedup.examples.ops;

import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerticle;
import io.github.vertxdedup.examples.kafka.Payments;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.testkit.LocalKafka;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.healthchecks.HealthCheckHandler;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.PrometheusScrapingHandler;
import io.vertx.micrometer.VertxPrometheusOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The operations kit's example: an application that runs the event-bus service (deployed by name) and a Kafka
 * consumer, and serves {@code GET /metrics} for Prometheus and {@code GET /health} over HTTP. The dashboard and the
 * alert rules in {@code ops/} query what its {@code /metrics} shows; {@code ObservabilityExampleTest} checks that
 * every metric they name is there.
 *
 * <ul>
 *   <li>One {@link PrometheusMeterRegistry} for everything: Vert.x's own metrics ({@code vertx-micrometer-metrics}),
 *   the service's and the consumer's meters ({@code dedup.*}, {@code dedup.kafka.*}: their default registry is
 *   Vert.x's), and the Kafka client's (consumer lag, fetch rate) through Micrometer's {@link KafkaClientMetrics},
 *   bound to the Kafka consumer under the Vert.x one ({@link KafkaConsumer#unwrap()}).</li>
 *   <li>One {@link HealthChecks}: the service's procedures ({@link DedupVerticle#registerHealthProcedures}, which
 *   ask each partition over the event bus, so the service can be deployed by name) and the consumer's
 *   ({@link DedupKafkaConsumer#health()}).</li>
 * </ul>
 *
 * <p>The consumer credits payments read from Kafka (identity from the {@code message-id} header, journaled windows)
 * and sends a receipt for each through the service, which drops a receipt already sent. A publisher sends a batch of
 * payments every few seconds, one in five twice, so the meters move.
 *
 * <p>Run: {@code scripts/run-example observability [bootstrap-servers|- [port]]}; without a bootstrap server (or
 * with {@code -}) it starts a one-node broker in its JVM. It prints its URLs and runs until stopped.
 */
public final class ObservabilityExample {

  /** The topic the example consumes, created with 3 partitions if missing. */
  public static final String TOPIC = "payments";
  /** The consumer group. */
  public static final String GROUP = "ledger";
  /** The service's address. */
  public static final String SERVICE_ADDRESS = "receipts.dedup";
  /** The name of the consumer's health procedure. */
  public static final String CONSUMER_CHECK = "payments-consumer";

  private ObservabilityExample() {}

  /**
   * The running example.
   *
   * @param vertx its Vert.x instance
   * @param registry the registry {@code /metrics} serves
   * @param checks the health checks {@code /health} serves
   * @param consumer the Kafka consumer
   * @param kafkaMetrics the Kafka client's meters, read on a thread of Micrometer's
   * @param server the HTTP server
   */
  public record Running(Vertx vertx, PrometheusMeterRegistry registry, HealthChecks checks,
      DedupKafkaConsumer<String, String> consumer, KafkaClientMetrics kafkaMetrics, HttpServer server) {

    /** @return the HTTP port {@code /metrics} and {@code /health} are served on */
    public int port() {
      return server.actualPort();
    }

    /**
     * Closes the consumer, the Kafka client's meters, then Vert.x (the service, the HTTP server).
     *
     * @return completes when closed
     */
    public Future<Void> close() {
      return consumer.close().eventually(() -> {
        kafkaMetrics.close();
        return vertx.close();
      });
    }
  }

  /**
   * Starts the example: Vert.x with the Prometheus registry, the service, the consumer subscribed to {@link #TOPIC}
   * and the HTTP server. Does not publish anything ({@link #publish} does).
   *
   * @param bootstrapServers the Kafka cluster; {@link #TOPIC} must exist
   * @param port the HTTP port, 0 for any free one
   * @param journalDir where the consumer's windows are journaled
   * @return completes once the service is deployed, the consumer subscribed and the server listening
   */
  public static Future<Running> start(String bootstrapServers, int port, Path journalDir) {
    // tag::registry[]
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Vertx vertx = Vertx.builder()
        .with(new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions()
            .setPrometheusOptions(new VertxPrometheusOptions().setEnabled(true))
            .setEnabled(true)))
        .withMetrics(new MicrometerMetricsFactory(registry))   // Vert.x's registry: dedup's meters default to it
        .build();
    // end::registry[]

    // tag::service-health[]
    DedupOptions service = new DedupOptions()
        .setAddress(SERVICE_ADDRESS)
        .setPartitions(2)
        .setWindow(Duration.ofMinutes(10));
    HealthChecks checks = HealthChecks.create(vertx);
    // Procedures receipts.dedup/0 and receipts.dedup/1: each asks its partition over the event bus.
    DedupVerticle.registerHealthProcedures(vertx, checks, service, Duration.ofSeconds(1));
    Future<String> deployed = vertx.deployVerticle("io.github.vertxdedup.DedupVerticle",
        new DeploymentOptions().setConfig(service.toJson()));
    // end::service-health[]

    // tag::consumer[]
    Map<String, String> config = new HashMap<>(Payments.consumerConfig(bootstrapServers, GROUP));
    config.put("enable.auto.commit", "false");
    config.put("partition.assignment.strategy",
        "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
    KafkaConsumer<String, String> kafka = KafkaConsumer.create(vertx, config);
    KafkaClientMetrics kafkaMetrics = new KafkaClientMetrics(kafka.unwrap());  // consumer lag, fetch rate, ...
    kafkaMetrics.bindTo(registry);
    DedupClient receipts = DedupClient.create(vertx, service);
    DedupKafkaConsumer<String, String> consumer = DedupKafkaConsumer.<String, String>wrap(vertx, kafka, config,
            new DedupKafkaOptions().setDedup(new DedupOptions()
                .setWindow(Duration.ofMinutes(10))
                .setJournalDir(journalDir.toString())))
        .identity(IdentityExtractor.header(Payments.MESSAGE_ID))
        .handler(record -> {
          String paymentId = new JsonObject(record.value()).getString("paymentId");
          return receipts.check("receipt-" + paymentId).mapEmpty();   // a receipt already sent is not sent again
        })
        .meterRegistry(registry);
    checks.register(CONSUMER_CHECK, promise -> promise.complete(consumer.health()));
    // end::consumer[]

    // tag::http[]
    Router router = Router.router(vertx);
    router.get("/metrics").handler(PrometheusScrapingHandler.create(registry));
    router.get("/health").handler(HealthCheckHandler.createWithHealthChecks(checks));
    // end::http[]
    return deployed
        .compose(id -> consumer.subscribe(TOPIC))
        .compose(v -> vertx.createHttpServer().requestHandler(router).listen(port))
        .map(server -> new Running(vertx, registry, checks, consumer, kafkaMetrics, server))
        // A failed start (a port in use) closes the consumer and its meters, then fails; Vert.x is closed only once
        // the caller's listeners have the failure: they run on its contexts, which a closed Vert.x no longer runs.
        .recover(e -> consumer.close().eventually(() -> {
          kafkaMetrics.close();
          return Future.succeededFuture();
        }).transform(v -> Future.<Running>failedFuture(e)))
        .onFailure(e -> vertx.close());
  }

  /**
   * Publishes {@code count} payments with ids from {@code firstId}, one in five twice (a producer retry). Blocks
   * until the broker acknowledged them: not on an event loop.
   *
   * @param bootstrapServers the cluster
   * @param firstId the number of the first payment ({@code pay-<n>})
   * @param count how many
   * @return what was sent
   */
  public static Payments.Published publish(String bootstrapServers, int firstId, int count) {
    return Payments.publish(bootstrapServers, TOPIC, firstId, count, 0.2, firstId);
  }

  /**
   * Runs the example until the JVM is stopped.
   *
   * @param args {@code [bootstrap-servers|- [port]]}; the port defaults to 8080
   * @throws Exception if it cannot start
   */
  public static void main(String[] args) throws Exception {
    if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
      System.out.println("usage: scripts/run-example observability [bootstrap-servers|- [port]]");
      System.out.println("Serves /metrics (Prometheus) and /health on the port (8080), consuming topic " + TOPIC
          + " as group " + GROUP + " and publishing 20 payments every 5 s; without a bootstrap server (or with -)"
          + " it starts a broker in its JVM. Runs until stopped.");
      return;
    }
    int port;
    try {
      port = args.length > 1 ? Integer.parseInt(args[1]) : 8080;
    } catch (NumberFormatException e) {
      port = -1;
    }
    if (port < 0 || port > 65535) {
      System.err.println("port must be a number in 0..65535 but was " + args[1]);
      System.exit(2);
    }
    LocalKafka broker = args.length == 0 || args[0].equals("-") ? LocalKafka.start(3) : null;
    String bootstrap = broker != null ? broker.bootstrapServers() : args[0];
    LocalKafka.createTopic(bootstrap, TOPIC, 3);
    Path journalDir = Files.createTempDirectory("observability-example");
    Running running;
    try {
      running = start(bootstrap, port, journalDir).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      System.err.println("cannot start: " + e.getCause());   // e.g. java.net.BindException: Address already in use
      if (broker != null) {
        broker.close();
      }
      System.exit(1);
      return;
    }
    System.out.println("metrics: http://localhost:" + running.port() + "/metrics");
    System.out.println("health:  http://localhost:" + running.port() + "/health");
    System.out.println("journal: " + journalDir);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stopped.countDown();
      try {
        running.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        if (broker != null) {
          broker.close();
        }
      } catch (Exception e) {
        System.err.println("stopping: " + e);
      }
    }));
    // Twenty payments every five seconds, on this thread: Payments.publish blocks.
    for (int next = 0; !stopped.await(5, TimeUnit.SECONDS); next += 20) {
      publish(bootstrap, next, 20);
    }
  }
}
