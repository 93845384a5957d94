package io.github.vertxdedup.benchmarks.kafka;

import static io.github.vertxdedup.benchmarks.kafka.KafkaConsumerThroughput.intProperty;
import static io.github.vertxdedup.benchmarks.kafka.KafkaConsumerThroughput.orderOf;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.examples.tools.Processes;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.RecordIdentity;
import io.github.vertxdedup.kafka.testkit.LocalKafka;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.impl.KafkaConsumerRecordImpl;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.apache.commons.io.FileUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * How long a newly assigned partition whose window holds {@code bench.records} ids takes to handle its first record,
 * by where its window comes from, and how fast the rebuild from the source topic reads against a bare consumer
 * reading the same records, in one run on one in-process KRaft broker.
 *
 * <p>The topic has one partition: {@code bench.records} records with distinct ids ({@code message-id} header and
 * key), small values, timestamps of when they were written (inside W), then one record more. Before the first
 * round a consumer of the group handles the window's records with a journal directory (and {@code changelog} on when
 * scenario (c) is asked for) and closes, committing their end. The group's committed offset is set there again
 * (Kafka's {@code Admin.alterConsumerGroupOffsets}) before each consumer scenario, so the one record more is the first
 * the consumer handles, and the window's ids lie before it; the scenarios' handlers never finish, so no scenario
 * commits an offset or writes the changelog. Scenarios:
 * <ul>
 *   <li>{@value RebuildResults#JOURNAL} (a): the consumer's journal directory is a copy of the one built before the
 *       first round (copied before each round, outside the timing, as a consumer that handles a record appends to
 *       it): the window is replayed from the journal, nothing is read from the topic;
 *   <li>{@value RebuildResults#REBUILD} (b): an empty journal directory: the window is rebuilt from the source topic
 *       ({@code PartitionRebuild}) and journaled;
 *   <li>{@value RebuildResults#CHANGELOG} (c): an empty journal directory and {@code changelog} on: the window is
 *       read from the group's changelog topic of accepted ids ({@code ChangelogRebuild}), which the consumer that
 *       built the journal wrote; its records read are the changelog entries read, and its read phase is the
 *       changelog read's {@code dedup.kafka.rebuild.duration};
 *   <li>{@value RebuildResults#BARE_SCAN}: a plain {@link KafkaConsumer} with the consumer's config and no group
 *       (as the rebuild's reading consumer is configured), assigned the partition, from offset 0 to the committed
 *       offset, running the same {@link IdentityExtractor} on each record wrapped as the consumer wraps it
 *       ({@link KafkaConsumerRecordImpl}): what reading and identifying the records costs without the window.
 * </ul>
 * A consumer scenario is timed from {@code subscribe} to the partition's assignment (the first of the partition's
 * {@code dedup.kafka.*} meters registered, which the consumer does as {@code onPartitionsAssigned} begins) and to
 * the first handled record; the rebuild's read phase is its own {@code dedup.kafka.rebuild.duration}. Each consumer
 * scenario runs in a Vert.x instance of its own. Rounds run the scenarios in turn, the order rotating
 * ({@link KafkaConsumerThroughput#orderOf}); the summary ({@link RebuildResults#report}) takes medians over the
 * rounds after the first when there are three or more, and per round the ratio of the rebuild to the bare scan.
 *
 * <p>Options: {@code -Dbench.records} (1000000), {@code -Dbench.rounds} (3), {@code -Dbench.scenarios}
 * (comma-separated subset of {@code journal,rebuild,changelog,bare-scan}; all by default),
 * {@code -Dbench.windowMinutes} (W, 60), {@code -Dbench.expectedIdsPerPartition} (the consumer's; {@code
 * bench.records} unless set), {@code -Dbench.results} (JSON results file; none by default). The broker and the
 * journals live under {@code java.io.tmpdir}, deleted at the end.
 */
public final class RebuildBenchmark {

  private static final String ID = "message-id";
  private static final String TOPIC = "rebuild";
  private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
  private static final String GROUP = "rebuild-bench";
  /** The dedup address: the journal's fingerprints are scoped by it, so every scenario uses the same. */
  private static final String ADDRESS = "bench.rebuild";
  /** The id of the record after the window's: the first record every consumer scenario handles. */
  static final String FIRST_ID = "after-0";
  /** The identity extractor of the consumers and of the bare scan. */
  private static final IdentityExtractor<String, String> IDENTITY = IdentityExtractor.header(ID);
  /** Scenarios in their default order. */
  static final List<String> ALL = List.of(RebuildResults.JOURNAL, RebuildResults.REBUILD,
      RebuildResults.CHANGELOG, RebuildResults.BARE_SCAN);
  private static final long WAIT_SECONDS = 600;
  /** The consumers' {@code revocationTimeoutMs}, ms. */
  private static final long CLOSE_DRAIN_MS = 1_000;

  private RebuildBenchmark() {}

  /**
   * Parses {@code bench.scenarios}.
   *
   * @param list comma-separated scenario names
   * @return the names, in the order given
   * @throws IllegalArgumentException naming {@code bench.scenarios} if a name is unknown, repeated, or none is given
   */
  static List<String> scenarios(String list) {
    List<String> names = new ArrayList<>();
    for (String s : list.split(",")) {
      String name = s.trim();
      if (name.isEmpty()) {
        continue;
      }
      if (!ALL.contains(name)) {
        throw new IllegalArgumentException("bench.scenarios must name only " + String.join(", ", ALL)
            + " but held '" + name + "'");
      }
      if (names.contains(name)) {
        throw new IllegalArgumentException("bench.scenarios names '" + name + "' twice");
      }
      names.add(name);
    }
    if (names.isEmpty()) {
      throw new IllegalArgumentException("bench.scenarios must name at least one scenario but was '" + list + "'");
    }
    return names;
  }

  /**
   * Runs the rounds, prints one line per scenario and round and the summary, and writes the results file if asked.
   *
   * @param args ignored
   * @throws Exception if the broker or a scenario fails, or a scenario read or handled other than expected
   */
  public static void main(String[] args) throws Exception {
    int records = intProperty("bench.records", 1_000_000);
    int rounds = intProperty("bench.rounds", 3);
    int windowMinutes = intProperty("bench.windowMinutes", 60);
    int expectedIds = intProperty("bench.expectedIdsPerPartition", records);
    if (records < 1) {
      throw new IllegalArgumentException("bench.records must be >= 1 but was " + records);
    }
    if (rounds < 1) {
      throw new IllegalArgumentException("bench.rounds must be >= 1 but was " + rounds);
    }
    if (windowMinutes < 1) {
      throw new IllegalArgumentException("bench.windowMinutes must be >= 1 but was " + windowMinutes);
    }
    List<String> run = scenarios(System.getProperty("bench.scenarios", String.join(",", ALL)));
    long windowMs = TimeUnit.MINUTES.toMillis(windowMinutes);
    String resultsFile = System.getProperty("bench.results");
    String date = Instant.now().toString();
    Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
    Files.createDirectories(tmp);
    Path work = Files.createTempDirectory(tmp, "rebuild-bench-");
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    Setup setup = new Setup(records, windowMs, expectedIds, run.contains(RebuildResults.CHANGELOG));
    try (LocalKafka kafka = LocalKafka.start(1)) {
      String bootstrap = kafka.bootstrapServers();
      LocalKafka.createTopic(bootstrap, TOPIC, 1);
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        long t0 = System.nanoTime();
        produce(bootstrap, "order-", records);
        System.out.printf("topic %s: %,d records written in %,d ms%n", TOPIC, records,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        Path built = work.resolve("built");
        long journalBytes = -1;
        if (run.contains(RebuildResults.JOURNAL) || run.contains(RebuildResults.CHANGELOG)) {
          t0 = System.nanoTime();
          buildJournal(setup, bootstrap, admin, built);
          journalBytes = Processes.duKib(built) * 1024;
          System.out.printf("journal covering the window built in %,d ms: %,d KiB on disk%s%n",
              TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), journalBytes / 1024,
              setup.changelog() ? "; changelog written" : "");
        }
        // The record after the window's: the first one every consumer scenario handles.
        produce(bootstrap, "after-", 1);
        List<RebuildResults.Round> done = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
          double load = os.getSystemLoadAverage();
          List<String> order = orderOf(run, round);
          System.out.printf("round %d (load average %.2f): %s%n", round, load, String.join(", ", order));
          List<RebuildResults.Scenario> measured = new ArrayList<>();
          for (String name : order) {
            RebuildResults.Scenario s = switch (name) {
              case RebuildResults.JOURNAL -> {
                Path dir = work.resolve("round-" + round + "-journal");
                FileUtils.copyDirectory(built.toFile(), dir.toFile());
                yield consumer(setup, name, bootstrap, admin, dir);
              }
              case RebuildResults.REBUILD, RebuildResults.CHANGELOG -> consumer(setup, name, bootstrap, admin,
                  Files.createDirectories(work.resolve("round-" + round + "-" + name)));
              case RebuildResults.BARE_SCAN -> bareScan(setup, bootstrap);
              default -> throw new IllegalStateException("no scenario " + name);
            };
            FileUtils.deleteDirectory(work.resolve("round-" + round + "-" + name).toFile());
            System.out.printf("  %-9s subscribe to assigned %,6d ms, assigned to first record %,6d ms, "
                    + "read phase %,6d ms, %,d records read, %,d ids%n", name, ms(s.assignedNs()),
                ms(s.assignedToFirstNs()), ms(s.readNs()), s.recordsRead(), s.idsRestored());
            measured.add(s);
          }
          done.add(new RebuildResults.Round(round, load, measured));
        }
        RebuildResults results = new RebuildResults(date, records, windowMs, expectedIds,
            Runtime.getRuntime().availableProcessors(), journalBytes, setup.changelog(), done);
        System.out.println();
        System.out.print(results.report());
        if (resultsFile != null) {
          results.write(Path.of(resultsFile));
          System.out.println("wrote " + resultsFile);
        }
      }
    } finally {
      FileUtils.deleteDirectory(work.toFile());
    }
  }

  private static long ms(long ns) {
    return ns < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(ns);
  }

  /**
   * The workload, as every scenario needs it.
   *
   * @param changelog whether the journal's builder writes the changelog topic ({@link RebuildResults#CHANGELOG} is
   *     asked for)
   */
  private record Setup(int records, long windowMs, int expectedIds, boolean changelog) {}

  /**
   * Writes {@code count} records with ids {@code prefix + i}, as the id header and the key, and small values; the
   * producer stamps them with the time they are sent.
   */
  private static void produce(String bootstrap, String prefix, int count) {
    try (KafkaProducer<String, String> producer = KafkaConsumerThroughput.producer(bootstrap)) {
      for (int i = 0; i < count; i++) {
        String id = prefix + i;
        ProducerRecord<String, String> r = new ProducerRecord<>(TOPIC, 0, id, "{\"amount\":" + (i % 100) + "}");
        r.headers().add(ID, id.getBytes(StandardCharsets.UTF_8));
        producer.send(r);
      }
      producer.flush();
    }
  }

  /** The consumers' Kafka config: the broker, the group, String deserializers; Kafka's defaults otherwise. */
  private static Map<String, String> config(String bootstrap) {
    Map<String, String> c = new HashMap<>();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    c.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, "org.apache.kafka.common.serialization.StringDeserializer");
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
        "org.apache.kafka.common.serialization.StringDeserializer");
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    return c;
  }

  private static DedupKafkaOptions options(Setup setup, Path journalDir, boolean changelog) {
    // A short drain on close: a scenario's consumer closes with its first record's handler still running.
    return new DedupKafkaOptions().setRevocationTimeoutMs(CLOSE_DRAIN_MS).setChangelog(changelog)
        .setDedup(new DedupOptions().setAddress(ADDRESS).setWindow(Duration.ofMillis(setup.windowMs()))
            .setExpectedIdsPerPartition(setup.expectedIds()).setJournalDir(journalDir.toString()));
  }

  /**
   * Builds the journal that covers the window: a consumer of the group with its journal under {@code dir} handles
   * every record from the start, and its close commits the end offset to Kafka and to the journal (and, with the
   * changelog on, the last of the window's ids to the changelog).
   */
  private static void buildJournal(Setup setup, String bootstrap, Admin admin, Path dir) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      LongAdder handled = new LongAdder();
      CountDownLatch all = new CountDownLatch(1);
      DedupKafkaConsumer<String, String> consumer = DedupKafkaConsumer.<String, String>create(vertx,
              config(bootstrap), options(setup, dir, setup.changelog()))
          .identity(IDENTITY)
          .handler(r -> {
            handled.increment();
            if (handled.sum() == setup.records()) {
              all.countDown();
            }
            return Future.succeededFuture();
          })
          .meterRegistry(new SimpleMeterRegistry());
      await(consumer.subscribe(TOPIC));
      if (!all.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the journal's builder handled " + handled.sum() + " of "
            + setup.records() + " records");
      }
      await(consumer.close());
    } finally {
      await(vertx.close());
    }
    OffsetAndMetadata committed = admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata()
        .get(WAIT_SECONDS, TimeUnit.SECONDS).get(TP);
    if (committed == null || committed.offset() != setup.records()) {
      throw new IllegalStateException("the journal's builder left the committed offset at " + committed
          + ", expected " + setup.records());
    }
  }

  /**
   * Sets the group's committed offset to the end of the window's records, so the next consumer handles the record
   * after them first. The group must be empty: a consumer that just closed has left it, which the broker may not
   * have completed yet, so a refusal is tried again for a while.
   */
  private static void resetOffset(Admin admin, long offset) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try {
        admin.alterConsumerGroupOffsets(GROUP, Map.of(TP, new OffsetAndMetadata(offset))).all()
            .get(WAIT_SECONDS, TimeUnit.SECONDS);
        return;
      } catch (ExecutionException e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("could not set the committed offset of " + GROUP + " to " + offset, e);
        }
        Thread.sleep(100);
      }
    }
  }

  /**
   * A dedup consumer with its journal under {@code journalDir}, from subscribe to its first handled record.
   *
   * @throws IllegalStateException if the first record handled is not {@link #FIRST_ID}, or the rebuild read other
   *     than the scenario's records: none for {@code journal}, every one of the window's from the source topic for
   *     {@code rebuild}, an entry of every one from the changelog and none from the source topic for
   *     {@code changelog}
   */
  private static RebuildResults.Scenario consumer(Setup setup, String name, String bootstrap, Admin admin,
      Path journalDir) throws Exception {
    resetOffset(admin, setup.records());
    Vertx vertx = Vertx.vertx();
    try {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      AtomicLong assignedAt = new AtomicLong(-1);
      // The partition's meters are registered as onPartitionsAssigned begins, before its window is opened.
      registry.config().onMeterAdded(m -> {
        if (m.getId().getName().startsWith("dedup.kafka.") && m.getId().getTag("partition") != null) {
          assignedAt.compareAndSet(-1, System.nanoTime());
        }
      });
      AtomicLong firstAt = new AtomicLong(-1);
      AtomicReference<String> firstKey = new AtomicReference<>();
      CountDownLatch first = new CountDownLatch(1);
      DedupKafkaConsumer<String, String> consumer = DedupKafkaConsumer.<String, String>create(vertx,
              config(bootstrap), options(setup, journalDir, name.equals(RebuildResults.CHANGELOG)))
          .identity(IDENTITY)
          .handler(r -> {
            if (firstAt.compareAndSet(-1, System.nanoTime())) {
              firstKey.set(r.key());
              first.countDown();
            }
            // Never done: the record's offset never becomes committable and its id is never committed, so the
            // scenario leaves the group's offset, and with the changelog the changelog, as the build left them.
            return Promise.<Void>promise().future();
          })
          .meterRegistry(registry);
      long cpu = processCpuNs();
      long start = System.nanoTime();
      await(consumer.subscribe(TOPIC));
      if (!first.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException(name + ": no record handled within " + WAIT_SECONDS + " s");
      }
      long cpuNs = cpu < 0 ? -1 : processCpuNs() - cpu;
      long read = (long) counter(registry, "dedup.kafka.rebuild.records");
      long entries = (long) counter(registry, "dedup.kafka.rebuild.changelog.entries");
      long ids = (long) counter(registry, "dedup.kafka.rebuild.ids");
      Timer t = registry.find("dedup.kafka.rebuild.duration").timer();
      long readNs = t == null ? 0 : (long) t.totalTime(TimeUnit.NANOSECONDS);
      await(consumer.close());
      if (!FIRST_ID.equals(firstKey.get())) {
        throw new IllegalStateException(name + ": the first record handled was " + firstKey.get() + ", expected "
            + FIRST_ID);
      }
      long fromSource = name.equals(RebuildResults.REBUILD) ? setup.records() : 0;
      long fromChangelog = name.equals(RebuildResults.CHANGELOG) ? setup.records() : 0;
      // An id may have more than one entry in the changelog (restoring it twice is harmless): at least one each.
      if (read != fromSource || entries < fromChangelog || (fromChangelog == 0 && entries != 0)
          || ids != fromSource + fromChangelog) {
        throw new IllegalStateException(name + ": the rebuild read " + read + " records and " + entries
            + " changelog entries and restored " + ids + " ids, expected " + fromSource + ", at least "
            + fromChangelog + " and " + (fromSource + fromChangelog));
      }
      return new RebuildResults.Scenario(name, assignedAt.get() - start, firstAt.get() - start, readNs,
          read + entries, ids, cpuNs);
    } finally {
      await(vertx.close());
    }
  }

  /**
   * The bare scan: a plain Kafka consumer configured as the rebuild's reading consumer (the consumers' config
   * without the group, never committing), assigned the partition, reading from offset 0 up to the committed offset
   * and identifying each record as the consumer does (wrapped, then the same extractor). Timed from the consumer's
   * creation, as the rebuild's duration is.
   *
   * @throws IllegalStateException if a record has no identity
   */
  private static RebuildResults.Scenario bareScan(Setup setup, String bootstrap) {
    Map<String, Object> c = new HashMap<>(config(bootstrap));
    c.remove(ConsumerConfig.GROUP_ID_CONFIG);
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    long end = setup.records();
    long identified = 0;
    long idChars = 0;
    long cpu = processCpuNs();
    long start = System.nanoTime();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
      consumer.assign(List.of(TP));
      consumer.seek(TP, 0);
      while (consumer.position(TP) < end) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100)).records(TP)) {
          if (r.offset() >= end) {
            break;
          }
          RecordIdentity id = IDENTITY.identify(new KafkaConsumerRecordImpl<>(r));
          if (id == null) {
            throw new IllegalStateException("bare scan: no identity at offset " + r.offset());
          }
          identified++;
          idChars += id.id().length();
        }
      }
    }
    long ns = System.nanoTime() - start;
    long cpuNs = cpu < 0 ? -1 : processCpuNs() - cpu;
    if (identified != end || idChars == 0) {
      throw new IllegalStateException("bare scan identified " + identified + " records, expected " + end);
    }
    return new RebuildResults.Scenario(RebuildResults.BARE_SCAN, -1, -1, ns, identified, identified, cpuNs);
  }

  private static double counter(SimpleMeterRegistry registry, String name) {
    return registry.find(name).counters().stream().mapToDouble(Counter::count).sum();
  }

  /** @return the CPU time of this process (broker included), ns, or -1 if the JVM does not say */
  private static long processCpuNs() {
    return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
        ? os.getProcessCpuTime() : -1;
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
  }
}
