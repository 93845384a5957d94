package io.github.vertxdedup.benchmarks.kafka;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.examples.tools.Processes;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.testkit.LocalKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.apache.commons.io.FileUtils;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Records per second through the dedup consumer (both modes), a plain Vert.x {@link KafkaConsumer} doing the same
 * handler work, and a Kafka Streams dedup topology (a window store remembering ids for W), on one in-process KRaft
 * broker and one topic, in one run.
 *
 * <p>The topic is written once: {@code bench.records} records over {@code bench.partitions} partitions, keyed and
 * headed ({@code message-id}) by their id; every tenth record repeats the id of the record 1,001 before it (10 %
 * duplicates, on the same partition). Each scenario reads the whole topic from the start in a new consumer group and
 * is timed from subscribe until every record is through (handled or dropped as a duplicate). The handler work is a
 * credit by id in a {@link Ledger}, a map per crediting thread; the plain consumer credits duplicates too (it cannot
 * tell them apart). The dedup and
 * Kafka Streams scenarios check afterwards that every id was credited exactly once.
 *
 * <p>Scenario order: round r runs the {@code bench.scenarios} list starting at index (r - 1) mod n, n scenarios,
 * wrapping around ({@link #orderOf}), and prints that order. Over n rounds every scenario runs once at every
 * position, first included, so no scenario always runs first (right after the topic was written or the previous
 * round ended) or always last. A rotation keeps the cyclic neighbours: a scenario runs right after the same other
 * one in every round except the one where it runs first.
 *
 * <p>Kafka Streams runs in a child JVM ({@code StreamsDedupBaseline} of the {@code benchmarks/kafka-streams-baseline}
 * module): only Kafka Streams 4.x is available, and its kafka-clients 4.x cannot share a classpath with
 * vertx-kafka-client's 3.7.1. The child is started once, before the first round, and given one {@code run} command
 * per round, so it is as warm as this JVM in each round. Its classpath is that module's {@code target/classes} and
 * {@code target/classpath.txt}, found under {@code bench.streamsModule}.
 *
 * <p>Not a JMH benchmark: the unit of work is a broker round trip, so a main() with rounds in turn is the honest
 * harness. Options: {@code -Dbench.records} (200000), {@code -Dbench.partitions} (4), {@code -Dbench.rounds} (3),
 * {@code -Dbench.scenarios} (comma-separated, default all four), {@code -Dbench.results} (JSON results file for
 * {@link KafkaReport}; none by default), {@code -Dbench.streamsModule}
 * ({@code benchmarks/kafka-streams-baseline}), {@code -Dbench.streamsStore} ({@code rocksdb} or {@code memory}),
 * {@code -Dbench.streamThreads} (1), {@code -Dbench.streamsJvmArgs} (extra flags of the child JVM, space-separated),
 * {@code -Dbench.expectedIdsPerPartition} (the dedup consumer's {@link DedupOptions#setExpectedIdsPerPartition}, ids
 * per window table sized up front; 0, the default, leaves the table to grow by doubling),
 * {@code -Dbench.maxBufferedPerPartition} (the dedup consumer's, its default unless set), {@code -Dbench.journal}
 * ({@code none}, memory-only windows, by default; {@code ASYNC}, {@code SYNC} or {@code NONE}: a Chronicle journal
 * per partition with that sync policy, in a temporary directory deleted after the scenario), {@code -Dbench.identity}
 * ({@code header}, the {@code message-id} header, by default, or {@code key}, the record key),
 * {@code -Dbench.handlerDigests} (SHA-256 digests of the record's value each handler computes besides its credit, the
 * handler's own CPU work per record; 0 by default; the Kafka Streams child's handler processor computes the same),
 * {@code -Dbench.eventLoops} (event loops of each scenario's
 * Vert.x instance; Vert.x's default, twice the cores, unless set).
 *
 * <p>Besides its wall time, each Vert.x scenario prints the CPU time this JVM's threads used meanwhile, per record
 * and by kind of thread ({@link ThreadCpu}), which shows where each consumer's work is done; it swings with whatever
 * else the machine runs too, if less than the wall time does. The results file stores these figures ({@link KafkaResults.Cpu}, nanoseconds over the
 * timed interval); the Kafka Streams child has none.
 */
public final class KafkaConsumerThroughput {

  private static final String ID = "message-id";
  /** The dedup window of the dedup consumer and of the Kafka Streams store. */
  private static final Duration WINDOW = Duration.ofMinutes(10);
  /** The dedup consumer's {@code expectedIdsPerPartition}: 0 (not pre-sized) unless set. */
  private static final int EXPECTED_IDS = intProperty("bench.expectedIdsPerPartition", 0);
  /** The dedup consumer's {@code maxBufferedPerPartition}: its default unless set. */
  private static final int MAX_BUFFERED = intProperty("bench.maxBufferedPerPartition",
      DedupKafkaOptions.DEFAULT_MAX_BUFFERED_PER_PARTITION);
  /**
   * The dedup consumer's journal: {@code none} (memory-only windows, the default), or a {@link SyncPolicy} name
   * ({@code ASYNC}, {@code SYNC}, or {@code NONE}: a journal never forced) for a Chronicle journal per partition under
   * the temporary directory, deleted after the scenario.
   */
  private static final String JOURNAL = System.getProperty("bench.journal", "none");
  /**
   * Where the dedup consumer reads each record's id: {@code header} (the {@code message-id} header, the default) or
   * {@code key} (the record key, already deserialized; the same id in this topic).
   */
  private static final String IDENTITY = System.getProperty("bench.identity", "header");
  /** SHA-256 digests of the value per handler call, besides the credit: 0 unless set. */
  private static final int HANDLER_DIGESTS = intProperty("bench.handlerDigests", 0);
  /** Event loops of each scenario's Vert.x instance: Vert.x's default (twice the cores) unless set. */
  private static final int EVENT_LOOPS = intProperty("bench.eventLoops",
      VertxOptions.DEFAULT_EVENT_LOOP_POOL_SIZE);
  /** One digest per handler thread (the plain consumer's event loop, or each owner's). */
  private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  });
  /** Where the digests go, so the JIT cannot drop them. */
  private static final LongAdder DIGEST_SINK = new LongAdder();

  private KafkaConsumerThroughput() {}

  /**
   * Reads an integer system property strictly: {@link Integer#getInteger} would read a malformed value as absent.
   *
   * @param name the property
   * @param absent its value when unset
   * @return the value
   * @throws IllegalArgumentException naming the property if it is set but not an integer
   */
  static int intProperty(String name, int absent) {
    String v = System.getProperty(name);
    if (v == null) {
      return absent;
    }
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be an integer but was '" + v + "'", e);
    }
  }

  /**
   * Runs the scenarios, prints one line per scenario and round, and writes the results file if asked.
   *
   * @param args ignored
   * @throws Exception if the broker or a scenario fails, or a scenario credits an id other than once
   */
  public static void main(String[] args) throws Exception {
    int records = intProperty("bench.records", 200_000);
    int partitions = intProperty("bench.partitions", 4);
    int rounds = intProperty("bench.rounds", 3);
    List<String> scenarios = List.of(System.getProperty("bench.scenarios",
        String.join(",", KafkaResults.PLAIN, KafkaResults.RECORD_FIRST, KafkaResults.EFFECT_FIRST,
            KafkaResults.STREAMS)).split(","));
    for (String s : scenarios) {
      if (!List.of(KafkaResults.PLAIN, KafkaResults.RECORD_FIRST, KafkaResults.EFFECT_FIRST, KafkaResults.STREAMS)
          .contains(s)) {
        throw new IllegalArgumentException("bench.scenarios must name plain-vertx, dedup-record-first, "
            + "dedup-effect-first or kafka-streams but held " + s);
      }
    }
    if (HANDLER_DIGESTS < 0 || HANDLER_DIGESTS > 1000) {
      throw new IllegalArgumentException("bench.handlerDigests must be in 0..1000 but was " + HANDLER_DIGESTS);
    }
    if (!JOURNAL.equals("none")) {
      try {
        SyncPolicy.valueOf(JOURNAL);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("bench.journal must be none (no journal), ASYNC, SYNC or NONE (a journal"
            + " never forced) but was " + JOURNAL);
      }
    }
    if (!IDENTITY.equals("header") && !IDENTITY.equals("key")) {
      throw new IllegalArgumentException("bench.identity must be header or key but was " + IDENTITY);
    }
    String resultsFile = System.getProperty("bench.results");
    String streamsStore = System.getProperty("bench.streamsStore", "rocksdb");
    int streamThreads = intProperty("bench.streamThreads", 1);
    String date = Instant.now().toString();
    Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
    Files.createDirectories(tmp);
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    try (LocalKafka kafka = LocalKafka.start(partitions)) {
      String bootstrap = kafka.bootstrapServers();
      String topic = "bench";
      LocalKafka.createTopic(bootstrap, topic, partitions);
      int distinct = produce(bootstrap, topic, records);
      System.out.printf("topic %s: %d records, %d distinct ids, %d partitions; dedup consumer"
          + " expectedIdsPerPartition %d%n", topic, records, distinct, partitions, EXPECTED_IDS);
      StreamsChild streams = scenarios.contains(KafkaResults.STREAMS)
          ? StreamsChild.start(bootstrap, topic, records, WINDOW.toMillis(), streamsStore, streamThreads, tmp)
          : null;
      List<KafkaResults.Round> done = new ArrayList<>();
      try {
        int group = 0;
        for (int round = 1; round <= rounds; round++) {
          double load = os.getSystemLoadAverage();
          List<String> order = orderOf(scenarios, round);
          System.out.printf("round %d, load average %.2f, order %s%n", round, load, String.join(", ", order));
          List<KafkaResults.Scenario> measured = new ArrayList<>();
          for (String scenario : order) {
            String g = group++ + "";
            Timing t = scenario.equals(KafkaResults.STREAMS)
                ? streams.run("streams-" + g, records, distinct)
                : inFreshVertx(vertx -> switch (scenario) {
                  case KafkaResults.PLAIN -> plain(vertx, bootstrap, topic, records, "plain-" + g);
                  case KafkaResults.RECORD_FIRST -> dedup(vertx, bootstrap, topic, records, distinct, "rf-" + g,
                      AtomicityMode.RECORD_FIRST);
                  default -> dedup(vertx, bootstrap, topic, records, distinct, "ef-" + g,
                      AtomicityMode.EFFECT_FIRST);
                });
            double perSec = records / (t.ns() / 1e9);
            KafkaResults.Cpu cpu = t.cpu();
            measured.add(new KafkaResults.Scenario(scenario, t.ns(), t.firstRecordNs(), perSec, cpu));
            System.out.printf("round %d %-20s %,12.0f records/s (%.2f s, first record after %.2f s); %s%n", round,
                scenario, perSec, t.ns() / 1e9, t.firstRecordNs() / 1e9, cpu == null ? "CPU not measured"
                    : String.format(Locale.ROOT, "CPU µs/record: poll %.2f, event loops %.2f, consumer %.2f,"
                        + " harness %.2f, broker and clients %.2f", cpu.pollNs() / 1e3 / records,
                        cpu.eventLoopNs() / 1e3 / records, cpu.consumerNs() / 1e3 / records,
                        cpu.harnessNs() / 1e3 / records, cpu.brokerNs() / 1e3 / records));
          }
          done.add(new KafkaResults.Round(round, load, measured));
        }
      } finally {
        if (streams != null) {
          streams.close();
        }
      }
      System.out.printf("load average at the end: %.2f%n", os.getSystemLoadAverage());
      if (resultsFile != null) {
        new KafkaResults(date, records, partitions, distinct, WINDOW.toMillis(), streamsStore, streamThreads,
            Runtime.getRuntime().availableProcessors(), done, HANDLER_DIGESTS, JOURNAL, IDENTITY)
            .write(Path.of(resultsFile));
        System.out.println("wrote " + resultsFile);
      }
    }
  }

  /**
   * The order of one round: the scenarios list rotated to start at index {@code (round - 1) mod n}, so round 1 runs
   * it as given, round 2 from its second entry (the first one last), and so on. O(n).
   *
   * @param scenarios the scenarios as configured, at least one
   * @param round 1-based
   * @return a new list, the same scenarios in the round's order
   * @throws IllegalArgumentException if {@code scenarios} is empty or {@code round < 1}
   */
  static List<String> orderOf(List<String> scenarios, int round) {
    if (scenarios.isEmpty()) {
      throw new IllegalArgumentException("scenarios must hold at least one scenario but was empty");
    }
    if (round < 1) {
      throw new IllegalArgumentException("round must be >= 1 but was " + round);
    }
    int n = scenarios.size();
    int from = (round - 1) % n;
    List<String> order = new ArrayList<>(n);
    order.addAll(scenarios.subList(from, n));
    order.addAll(scenarios.subList(0, from));
    return order;
  }

  /** A scenario run in a Vert.x instance of its own. */
  @FunctionalInterface
  private interface VertxScenario {
    Timing run(Vertx vertx) throws Exception;
  }

  /**
   * Runs a scenario in a new Vert.x instance and closes it afterwards. The dedup consumer's memory-only windows stay
   * deployed until their Vert.x instance closes (so that a restarted consumer finds them); in a shared instance the
   * windows of earlier scenarios would keep their ids and their periodic lease sweeps, and tax every later scenario.
   */
  private static Timing inFreshVertx(VertxScenario scenario) throws Exception {
    Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(EVENT_LOOPS));
    try {
      return scenario.run(vertx);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * The producer that writes a harness's topic: String keys and values, {@code acks=1}, batches of up to 256 KiB
   * lingering 5 ms.
   *
   * @param bootstrap the broker
   * @return a new producer; the caller closes it
   */
  static KafkaProducer<String, String> producer(String bootstrap) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("acks", "1");
    p.put("linger.ms", "5");
    p.put("batch.size", "262144");
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }

  private static int produce(String bootstrap, String topic, int records) {
    int distinct = 0;
    try (KafkaProducer<String, String> producer = producer(bootstrap)) {
      for (int i = 0; i < records; i++) {
        // Every tenth record repeats the record 1,001 before it (which is never itself a copy).
        boolean copy = i % 10 == 9 && i >= 1001;
        int idNumber = copy ? i - 1001 : i;
        if (!copy) {
          distinct++;
        }
        String id = "order-" + idNumber;
        ProducerRecord<String, String> r = new ProducerRecord<>(topic, id, "{\"amount\":" + (i % 100) + "}");
        r.headers().add(ID, id.getBytes(StandardCharsets.UTF_8));
        producer.send(r);
      }
      producer.flush();
    }
    return distinct;
  }

  private static Map<String, String> config(String bootstrap, String group) {
    Map<String, String> c = new HashMap<>();
    c.put("bootstrap.servers", bootstrap);
    c.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
    c.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
    c.put("group.id", group);
    c.put("auto.offset.reset", "earliest");
    c.put("max.poll.records", "1000");
    return c;
  }

  /** The handler's own work besides its credit: {@code bench.handlerDigests} SHA-256 digests of the value. */
  private static void work(String value) {
    if (HANDLER_DIGESTS == 0) {
      return;
    }
    MessageDigest d = SHA256.get();
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    long acc = 0;
    for (int i = 0; i < HANDLER_DIGESTS; i++) {
      d.update(bytes);
      acc += d.digest()[0];
    }
    DIGEST_SINK.add(acc);
  }

  private static Timing plain(Vertx vertx, String bootstrap, String topic, int records, String group)
      throws Exception {
    Ledger ledger = new Ledger(records);
    CountDownLatch done = new CountDownLatch(1);
    LongAdder seen = new LongAdder();
    AtomicLong first = new AtomicLong();
    Map<String, String> c = config(bootstrap, group);
    c.put("enable.auto.commit", "true");
    KafkaConsumer<String, String> consumer = KafkaConsumer.create(vertx, c);
    consumer.handler(r -> {
      if (first.get() == 0) {
        first.compareAndSet(0, System.nanoTime());
      }
      work(r.value());
      ledger.credit(r.key());
      seen.increment();
      if (seen.sum() == records) {
        done.countDown();
      }
    });
    ThreadCpu cpu = ThreadCpu.start();
    long start = System.nanoTime();
    consumer.subscribe(topic);
    if (!done.await(300, TimeUnit.SECONDS)) {
      throw new IllegalStateException("plain consumer saw " + seen.sum() + " of " + records);
    }
    long ns = System.nanoTime() - start;
    KafkaResults.Cpu used = cpu.stop();
    consumer.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    // The plain consumer credits every record, duplicates included: the credits must add up to the topic.
    long credited = ledger.merged().values().stream().mapToLong(Long::longValue).sum();
    if (credited != records) {
      throw new IllegalStateException(group + ": ledger credits add up to " + credited + ", expected " + records);
    }
    return new Timing(ns, first.get() - start, used);
  }

  private static Timing dedup(Vertx vertx, String bootstrap, String topic, int records, int distinct, String group,
      AtomicityMode mode) throws Exception {
    Ledger ledger = new Ledger(records);
    AtomicLong first = new AtomicLong();
    // Counted as the plain consumer counts what it sees, so that the harness's main thread waits on a latch until
    // the last distinct id is credited instead of reading the meters every millisecond (which took CPU from the
    // consumer on a machine with few cores); only the settling of the last duplicates is then polled for.
    LongAdder handled = new LongAdder();
    CountDownLatch credited = new CountDownLatch(1);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    DedupOptions dedup = new DedupOptions().setAddress("bench." + group).setWindow(WINDOW)
        .setPayloadHashes(false).setExpectedIdsPerPartition(EXPECTED_IDS);
    Path journalDir = null;
    if (!JOURNAL.equals("none")) {
      journalDir = Files.createTempDirectory("bench-journal-" + group + "-");
      dedup.setJournalDir(journalDir.toString()).setJournalSync(SyncPolicy.valueOf(JOURNAL));
    }
    DedupKafkaOptions options = new DedupKafkaOptions()
        .setDedup(dedup)
        .setMode(mode)
        .setMaxBufferedPerPartition(MAX_BUFFERED);
    DedupKafkaConsumer<String, String> consumer = DedupKafkaConsumer.<String, String>create(vertx,
            config(bootstrap, group), options)
        .identity(IDENTITY.equals("key") ? IdentityExtractor.recordKey() : IdentityExtractor.header(ID))
        .handler(r -> {
          // A read first: a compare-and-set per record would write one cache line from every event loop.
          if (first.get() == 0) {
            first.compareAndSet(0, System.nanoTime());
          }
          work(r.value());
          ledger.credit(r.key());
          handled.increment();
          if (handled.sum() == distinct) {
            credited.countDown();
          }
          return Future.succeededFuture();
        })
        .meterRegistry(registry);
    ThreadCpu cpu = ThreadCpu.start();
    long start = System.nanoTime();
    consumer.subscribe(topic).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    long deadline = start + TimeUnit.SECONDS.toNanos(300);
    if (!credited.await(300, TimeUnit.SECONDS)) {
      throw new IllegalStateException(group + " credited " + handled.sum() + " of " + distinct + " ids");
    }
    while (settled(registry) < records) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(group + " settled " + settled(registry) + " of " + records);
      }
      Thread.sleep(1);
    }
    long ns = System.nanoTime() - start;
    KafkaResults.Cpu used = cpu.stop();
    consumer.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    if (journalDir != null) {
      FileUtils.deleteDirectory(journalDir.toFile());
    }
    Map<String, Long> credits = ledger.merged();
    if (credits.size() != distinct || credits.values().stream().anyMatch(v -> v != 1)) {
      throw new IllegalStateException(group + ": ledger holds " + credits.size() + " ids, expected " + distinct
          + " each credited once");
    }
    return new Timing(ns, first.get() - start, used);
  }

  private static double settled(SimpleMeterRegistry registry) {
    return registry.find("dedup.kafka.records").counters().stream().mapToDouble(c -> c.count()).sum();
  }

  /**
   * One scenario's times.
   *
   * @param ns from subscribe (or start) until every record was through
   * @param firstRecordNs from the same start until the first record reached the handler (or processor)
   * @param cpu the CPU time this JVM used meanwhile, by kind of thread; {@code null} where not measured (the Kafka
   *     Streams child, or a JVM without thread CPU time)
   */
  record Timing(long ns, long firstRecordNs, KafkaResults.Cpu cpu) {}

  /**
   * The Kafka Streams baseline in its child JVM, driven over its standard input and output (protocol in
   * {@code StreamsDedupBaseline}). Used from the harness's main thread only.
   */
  static final class StreamsChild implements AutoCloseable {

    private static final String MAIN = "io.github.vertxdedup.benchmarks.streams.StreamsDedupBaseline";

    private final Process process;
    private final BufferedReader out;
    private final Writer in;

    private StreamsChild(Process process) {
      this.process = process;
      this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    }

    /**
     * Starts the child JVM with the project's JVM flags and the baseline module's classpath.
     *
     * @throws IllegalStateException if the baseline module is not built
     * @throws IOException if the JVM cannot be started
     */
    static StreamsChild start(String bootstrap, String topic, int records, long windowMs, String store,
        int threads, Path tmp) throws IOException {
      Path module = Path.of(System.getProperty("bench.streamsModule", "benchmarks/kafka-streams-baseline"));
      Path classes = module.resolve("target/classes");
      Path classpathFile = module.resolve("target/classpath.txt");
      if (!Files.isDirectory(classes) || !Files.isRegularFile(classpathFile)) {
        throw new IllegalStateException("bench.streamsModule " + module.toAbsolutePath() + " must hold "
            + "target/classes and target/classpath.txt: build it with mvn -pl benchmarks/kafka-streams-baseline "
            + "package, or set -Dbench.streamsModule");
      }
      List<String> jvm = new ArrayList<>(Processes.jvmFlags());
      String extra = System.getProperty("bench.streamsJvmArgs", "").trim();
      if (!extra.isEmpty()) {
        jvm.addAll(List.of(extra.split("\\s+")));
      }
      jvm.addAll(List.of("-Xmx2g", "-Djava.io.tmpdir=" + tmp.toAbsolutePath(),
          "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
          "-Dbench.bootstrap=" + bootstrap, "-Dbench.topic=" + topic, "-Dbench.records=" + records,
          "-Dbench.windowMs=" + windowMs, "-Dbench.store=" + store, "-Dbench.streamThreads=" + threads,
          "-Dbench.handlerDigests=" + HANDLER_DIGESTS));
      List<String> cmd = Processes.javaCommand(jvm, classes.toAbsolutePath() + File.pathSeparator
          + Files.readString(classpathFile, StandardCharsets.UTF_8).trim(), MAIN, List.of());
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      return new StreamsChild(p);
    }

    /**
     * Runs the topology once over the whole topic in a new application id and checks its ledger.
     *
     * @throws IllegalStateException if the child failed, or its handler credited other than {@code distinct} ids
     *     once each
     */
    Timing run(String applicationId, int records, int distinct) throws IOException {
      in.write("run " + applicationId + "\n");
      in.flush();
      String line = out.readLine();
      if (line == null || !line.startsWith("result ")) {
        throw new IllegalStateException("Kafka Streams child answered " + line + " to run " + applicationId);
      }
      String[] w = line.split(" ");
      long ns = Long.parseLong(w[2]);
      long first = Long.parseLong(w[3]);
      long seen = Long.parseLong(w[4]);
      long ids = Long.parseLong(w[5]);
      long twice = Long.parseLong(w[6]);
      int digests = w.length > 7 ? Integer.parseInt(w[7]) : -1;
      if (digests != HANDLER_DIGESTS) {
        throw new IllegalStateException("Kafka Streams child computed " + digests + " digests per record, the harness "
            + HANDLER_DIGESTS + " (bench.handlerDigests): rebuild benchmarks/kafka-streams-baseline");
      }
      if (seen != records || ids != distinct || twice != 0) {
        throw new IllegalStateException(applicationId + ": saw " + seen + " records (expected " + records
            + "), ledger holds " + ids + " ids (expected " + distinct + "), " + twice + " credited more than once");
      }
      return new Timing(ns, first, null);
    }

    @Override
    public void close() throws IOException, InterruptedException {
      try {
        in.write("quit\n");
        in.flush();
      } catch (IOException e) {
        // Already gone; waitFor below reports how.
      }
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException("Kafka Streams child did not exit within 60 s of quit");
      }
    }
  }
}
