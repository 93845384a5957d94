package io.github.vertxdedup.kafka;

import io.github.vertxdedup.DedupOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * "Machines" for the consumer tests: a machine is a consumer of a group in a Vert.x instance of its own over a
 * journal directory of its own, so nothing of a window reaches another machine except through Kafka. A JUnit 5
 * extension on an instance field, beside the class's {@link KafkaTestSupport} broker:
 * {@code @RegisterExtension final KafkaMachines machines = new KafkaMachines(broker, "test.kafka.rebuild");}.
 * Before each test it makes a temporary directory that holds the machines' journal directories ({@link #dir}); after
 * each test it closes every Vert.x instance a test left running, then deletes that directory.
 *
 * <p>{@link #consumer} starts a consumer with the options every test shares (a 10-minute window, backoff from 1 ms
 * to 20 ms, 20 ms polls, a header identity, a handler that credits the record's key to a ledger, a dead-letter
 * handler that fails) and lets the test change what it is about. Test threads only; not thread-safe.
 */
final class KafkaMachines implements BeforeEachCallback, AfterEachCallback {

  /** The window of every machine's consumer, ms. */
  static final long WINDOW_MS = 10 * 60_000L;

  private static final AtomicInteger NAMES = new AtomicInteger();

  private final KafkaTestSupport broker;
  private final String address;
  private final List<Vertx> instances = new CopyOnWriteArrayList<>();
  private Path root;

  /**
   * @param broker the class's broker
   * @param address the dedup service address of the consumers (each machine has a Vert.x of its own)
   */
  KafkaMachines(KafkaTestSupport broker, String address) {
    this.broker = broker;
    this.address = address;
  }

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    root = Files.createTempDirectory("kafka-machines");
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    try {
      for (Vertx v : instances) {
        v.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
      instances.clear();
    } finally {
      delete(root);
    }
  }

  /** @return a name unique in this JVM: {@code prefix-N}, for the topics and groups of one test */
  static String name(String prefix) {
    return prefix + "-" + NAMES.incrementAndGet();
  }

  /** @return the journal directory of machine {@code machine} in this test (created on first use) */
  Path dir(String machine) throws IOException {
    return Files.createDirectories(root.resolve(machine));
  }

  /** A consumer of {@code group} on {@code machine}: set what differs from the shared options, then subscribe. */
  Start consumer(String group, String machine, KafkaTestSupport.Ledger ledger) throws IOException {
    return new Start(group, dir(machine), ledger);
  }

  /** A consumer of {@code group} in {@code mode} on {@code machine}, subscribed to {@code topic}. */
  Running start(String group, String topic, AtomicityMode mode, String machine, KafkaTestSupport.Ledger ledger)
      throws Exception {
    return consumer(group, machine, ledger).mode(mode).subscribe(topic);
  }

  /** Closes the machine's consumer, then its Vert.x instance; each within 30 s. */
  void stop(Running r) throws Exception {
    r.consumer().close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    closeVertx(r.vertx());
  }

  /** Closes a Vert.x instance a test started with {@link #vertx()}, within 30 s. */
  void closeVertx(Vertx vertx) throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    instances.remove(vertx);
  }

  /** @return a new Vert.x instance, closed after the test unless the test closed it */
  Vertx vertx() {
    Vertx vertx = Vertx.vertx();
    instances.add(vertx);
    return vertx;
  }

  /** Sends ids {@code id-from} .. {@code id-(to - 1)} (value "v") to {@code topic}, then flushes. */
  void publish(String topic, int from, int to) {
    for (int i = from; i < to; i++) {
      broker.send(topic, "id-" + i, "v");
    }
    broker.flush();
  }

  /** Work that takes {@code ms} milliseconds of the calling thread, as a slow extractor's would. */
  static void simulateWork(long ms) {
    long end = System.nanoTime() + ms * 1_000_000L;
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
  }

  /** A running machine: its Vert.x instance, its consumer, the consumer's meters and the dead letters it gave. */
  record Running(Vertx vertx, DedupKafkaConsumer<String, String> consumer, SimpleMeterRegistry registry,
      List<DeadLetter<String, String>> deadLetters) {

    /** @return the sum of the counters named {@code name} of one partition */
    double count(String name, int partition) {
      return registry.find(name).tag("partition", Integer.toString(partition)).counters().stream()
          .mapToDouble(c -> c.count()).sum();
    }
  }

  /** The options of one consumer that a test changes; {@link #subscribe} starts it. */
  final class Start {
    private final String group;
    private final Path journalDir;
    private final KafkaTestSupport.Ledger ledger;
    private final List<Consumer<DedupKafkaOptions>> options = new ArrayList<>();
    private Map<String, String> config;
    private IdentityExtractor<String, String> identity = IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID);
    private boolean takeDeadLetters;
    private Consumer<Throwable> exceptionHandler;
    private boolean wrap;

    private Start(String group, Path journalDir, KafkaTestSupport.Ledger ledger) {
      this.group = group;
      this.journalDir = journalDir;
      this.ledger = ledger;
      this.config = broker.consumerConfig(group);
    }

    /** The atomicity mode (the options' default if not set). */
    Start mode(AtomicityMode mode) {
      options.add(o -> o.setMode(mode));
      return this;
    }

    /** The changelog topic on or off (the options' default if not set). */
    Start changelog(boolean changelog) {
      options.add(o -> o.setChangelog(changelog));
      return this;
    }

    /** What to do with records the window does not cover (the options' default if not set). */
    Start uncoveredRecords(UncoveredRecordPolicy policy) {
      options.add(o -> o.setUncoveredRecords(policy));
      return this;
    }

    /** The backoff's ceiling, ms (20 if not set). */
    Start backoffMaxMs(long backoffMaxMs) {
      options.add(o -> o.setBackoffMaxMs(backoffMaxMs));
      return this;
    }

    /** The Kafka consumer config instead of {@link KafkaTestSupport#consumerConfig} of the group. */
    Start config(Map<String, String> config) {
      this.config = config;
      return this;
    }

    /** The identity extractor instead of the message-id header. */
    Start identity(IdentityExtractor<String, String> identity) {
      this.identity = identity;
      return this;
    }

    /** Dead letters are taken (into {@link Running#deadLetters()}) instead of failed as unexpected. */
    Start takeDeadLetters() {
      this.takeDeadLetters = true;
      return this;
    }

    /** The consumer's exception handler. */
    Start exceptionHandler(Consumer<Throwable> handler) {
      this.exceptionHandler = handler;
      return this;
    }

    /**
     * Wraps a Vert.x consumer built from the config with auto-commit off ({@link DedupKafkaConsumer#wrap}), committing
     * every 20 ms, instead of {@link DedupKafkaConsumer#create}.
     */
    Start wrapped() {
      return wrapped(true);
    }

    /** As {@link #wrapped()} if {@code wrap}; {@link DedupKafkaConsumer#create} if not (the default). */
    Start wrapped(boolean wrap) {
      this.wrap = wrap;
      return this;
    }

    /** @return the options this consumer would start with */
    DedupKafkaOptions options() {
      DedupKafkaOptions o = new DedupKafkaOptions()
          .setDedup(new DedupOptions().setAddress(address).setWindowMs(WINDOW_MS)
              .setJournalDir(journalDir.toString()))
          .setBackoffInitialMs(1)
          .setBackoffMaxMs(20)
          .setPollTimeoutMs(20);
      if (wrap) {
        o.setCommitIntervalMs(20);
      }
      options.forEach(set -> set.accept(o));
      return o;
    }

    /** Starts the consumer in a Vert.x instance of its own and subscribes it to {@code topic}, within 60 s. */
    Running subscribe(String topic) throws Exception {
      Vertx vertx = vertx();
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      List<DeadLetter<String, String>> deadLetters = new CopyOnWriteArrayList<>();
      DedupKafkaConsumer<String, String> c = build(vertx)
          .identity(identity)
          .handler(r -> ledger.credit(r.key()))
          .deadLetterHandler(d -> {
            if (!takeDeadLetters) {
              return Future.failedFuture("no dead letter expected: " + d);
            }
            deadLetters.add(d);
            return Future.succeededFuture();
          })
          .meterRegistry(registry);
      if (exceptionHandler != null) {
        c.exceptionHandler(exceptionHandler::accept);
      }
      c.subscribe(topic).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      return new Running(vertx, c, registry, deadLetters);
    }

    /** @return the consumer, built by {@code create} or {@code wrap}, without its handlers */
    DedupKafkaConsumer<String, String> build(Vertx vertx) {
      if (!wrap) {
        return DedupKafkaConsumer.create(vertx, config, options());
      }
      Map<String, String> wrappedConfig = new HashMap<>(config);
      wrappedConfig.put("enable.auto.commit", "false");
      KafkaConsumer<String, String> kafka = KafkaConsumer.create(vertx, wrappedConfig);
      return DedupKafkaConsumer.wrap(vertx, kafka, wrappedConfig, options());
    }
  }

  private static void delete(Path dir) throws IOException {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
