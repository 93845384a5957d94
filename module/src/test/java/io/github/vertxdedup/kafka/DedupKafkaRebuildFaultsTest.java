package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaTestSupport.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.testing.LogCapture;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.HashMap;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults during a rebuild from the source topic, on the real in-process broker, with real faults: a record the new
 * machine's deserializer rejects is a topic that cannot be read (the partition is left unhandled, reported and
 * rebuilt again until it can be read); records without identity are skipped and counted; a revocation in the middle
 * of a long rebuild cancels it cleanly. Each "machine" is a consumer with a journal directory of its own.
 */
class DedupKafkaRebuildFaultsTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  private static final AtomicInteger NAMES = new AtomicInteger();
  private static KafkaProducer<String, String> producer;
  private static Admin admin;

  @TempDir
  Path machineA;
  @TempDir
  Path machineB;
  @TempDir
  Path machineC;

  private final List<Vertx> instances = new CopyOnWriteArrayList<>();

  /** A value deserializer that rejects the value {@code poison}, as a stricter schema would. */
  public static final class RejectingDeserializer implements Deserializer<String> {
    private final StringDeserializer strings = new StringDeserializer();

    @Override
    public String deserialize(String topic, byte[] data) {
      String s = strings.deserialize(topic, data);
      if ("poison".equals(s)) {
        throw new SerializationException("value 'poison' does not match the schema");
      }
      return s;
    }
  }

  @BeforeAll
  static void clients() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    Properties a = new Properties();
    a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    admin = Admin.create(a);
  }

  @AfterAll
  static void closeClients() {
    producer.close(Duration.ofSeconds(5));
    admin.close(Duration.ofSeconds(5));
  }

  @AfterEach
  void tearDown() throws Exception {
    for (Vertx v : instances) {
      v.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private record Running(Vertx vertx, DedupKafkaConsumer<String, String> consumer, SimpleMeterRegistry registry) {}

  private Running start(String topic, Path journalDir, Map<String, String> config, long backoffMaxMs,
      IdentityExtractor<String, String> identity, KafkaTestSupport.Ledger ledger, Consumer<Throwable> failures)
      throws Exception {
    Vertx vertx = Vertx.vertx();
    instances.add(vertx);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    DedupKafkaOptions options = new DedupKafkaOptions()
        .setDedup(new DedupOptions().setAddress("test.kafka.faults").setWindow(Duration.ofMinutes(10))
            .setJournalDir(journalDir.toString()))
        .setBackoffInitialMs(1)
        .setBackoffMaxMs(backoffMaxMs)
        .setPollTimeoutMs(20);
    DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>create(vertx, config, options)
        .identity(identity)
        .handler(r -> ledger.credit(r.key()))
        .deadLetterHandler(d -> Future.succeededFuture())
        .exceptionHandler(failures::accept)
        .meterRegistry(registry);
    c.subscribe(topic).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    return new Running(vertx, c, registry);
  }

  /** The same on a wrapped Vert.x consumer built from {@code config} (auto-commit off). */
  private Running startWrapped(String topic, Path journalDir, Map<String, String> config, long backoffMaxMs,
      KafkaTestSupport.Ledger ledger, Consumer<Throwable> failures) throws Exception {
    Vertx vertx = Vertx.vertx();
    instances.add(vertx);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Map<String, String> wrappedConfig = new HashMap<>(config);
    wrappedConfig.put("enable.auto.commit", "false");
    DedupKafkaOptions options = new DedupKafkaOptions()
        .setDedup(new DedupOptions().setAddress("test.kafka.faults").setWindow(Duration.ofMinutes(10))
            .setJournalDir(journalDir.toString()))
        .setBackoffInitialMs(1)
        .setBackoffMaxMs(backoffMaxMs)
        .setPollTimeoutMs(20)
        .setCommitIntervalMs(20);
    DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>wrap(vertx,
            KafkaConsumer.<String, String>create(vertx, wrappedConfig), wrappedConfig, options)
        .identity(IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID))
        .handler(r -> ledger.credit(r.key()))
        .deadLetterHandler(d -> Future.succeededFuture())
        .exceptionHandler(failures::accept)
        .meterRegistry(registry);
    c.subscribe(topic).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    return new Running(vertx, c, registry);
  }

  private Running start(String group, String topic, Path journalDir, KafkaTestSupport.Ledger ledger)
      throws Exception {
    return start(topic, journalDir, broker.consumerConfig(group), 20,
        IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID), ledger, e -> { });
  }

  private void stop(Running r) throws Exception {
    r.consumer.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    r.vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    instances.remove(r.vertx);
  }

  /** Sends {@code id} (key and message-id header) with {@code value} to one partition. */
  private static void send(String topic, int partition, String id, String value) {
    ProducerRecord<String, String> r = new ProducerRecord<>(topic, partition, id, value);
    if (id != null) {
      r.headers().add(KafkaTestSupport.MESSAGE_ID, id.getBytes(StandardCharsets.UTF_8));
    }
    producer.send(r);
  }

  private static double partitionCount(Running r, String name, int partition) {
    return r.registry.find(name).tag("partition", Integer.toString(partition)).counters().stream()
        .mapToDouble(c -> c.count()).sum();
  }

  private static String name(String prefix) {
    return prefix + "-" + NAMES.incrementAndGet();
  }

  @Test
  void shouldLeaveAPartitionWhoseRecordsCannotBeReadUnhandledAndHandleItOnceTheyCan() throws Exception {
    String topic = name("faults-unreadable");
    String group = name("g");
    broker.createTopic(topic, 2);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, machineA, ledger);
    for (int i = 0; i < 10; i++) {
      send(topic, 0, "p-" + i, "v");
    }
    send(topic, 0, "p-poison", "poison"); // offset 10: machine A reads it as text, machine B cannot read it
    for (int i = 10; i < 20; i++) {
      send(topic, 0, "p-" + i, "v");
      send(topic, 1, "q-" + i, "v");
    }
    producer.flush();
    broker.awaitCommitted(group, topic, 31);
    stop(a);

    // Machine B's deserializer rejects the poison record, which lies in partition 0's window, before its committed
    // offset: the rebuild of partition 0 cannot read its topic, partition 1's can.
    Map<String, String> strict = broker.consumerConfig(group);
    strict.put("value.deserializer", RejectingDeserializer.class.getName());
    List<Throwable> reported = new CopyOnWriteArrayList<>();
    TopicPartition p0 = new TopicPartition(topic, 0);
    Running b = start(topic, machineB, strict, 200, IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID), ledger,
        reported::add);
    await().atMost(Duration.ofSeconds(60)).until(() -> partitionCount(b, "dedup.kafka.rebuild.failures", 0) >= 1);
    double failures = partitionCount(b, "dedup.kafka.rebuild.failures", 0);
    send(topic, 0, "later-0", "v");
    send(topic, 1, "later-1", "v");
    producer.flush();
    // Partition 1 flows; partition 0 is rebuilt again (and fails again) at least twice, and its record waits.
    await().atMost(Duration.ofSeconds(60)).until(() -> ledger.credits.containsKey("later-1")
        && partitionCount(b, "dedup.kafka.rebuild.failures", 0) >= failures + 2);
    assertThat(ledger.credits).doesNotContainKey("later-0");
    assertThat(b.consumer.assignment()).hasSize(2);
    assertThat(reported).as("one report per episode").singleElement()
        .satisfies(e -> assertThat(e.getMessage()).contains(p0.toString()));

    // The unreadable record goes (as retention would take it): the next attempt reads the rest, the partition flows.
    admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(11))).all().get(30, TimeUnit.SECONDS);
    broker.awaitCommitted(group, topic, 33);
    assertThat(ledger.credits).containsKeys("later-0", "later-1");
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(reported).hasSize(1);
  }

  @Test
  void shouldLeaveAPartitionWhoseRecordsCannotBeReadUnhandledOnAWrappedConsumerToo() throws Exception {
    String topic = name("faults-unreadable-wrapped");
    String group = name("g");
    broker.createTopic(topic, 2);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, machineA, ledger);
    for (int i = 0; i < 10; i++) {
      send(topic, 0, "p-" + i, "v");
    }
    send(topic, 0, "p-poison", "poison");
    for (int i = 10; i < 20; i++) {
      send(topic, 0, "p-" + i, "v");
      send(topic, 1, "q-" + i, "v");
    }
    producer.flush();
    broker.awaitCommitted(group, topic, 31);
    stop(a);

    // Machine B wraps a Vert.x consumer whose deserializer rejects the poison record in partition 0's window: that
    // partition waits and is rebuilt again, partition 1 flows, and the wrapper keeps running.
    Map<String, String> strict = broker.consumerConfig(group);
    strict.put("value.deserializer", RejectingDeserializer.class.getName());
    List<Throwable> reported = new CopyOnWriteArrayList<>();
    TopicPartition p0 = new TopicPartition(topic, 0);
    Running b = startWrapped(topic, machineB, strict, 200, ledger, reported::add);
    await().atMost(Duration.ofSeconds(60)).until(() -> partitionCount(b, "dedup.kafka.rebuild.failures", 0) >= 1);
    double failures = partitionCount(b, "dedup.kafka.rebuild.failures", 0);
    send(topic, 0, "later-0", "v");
    send(topic, 1, "later-1", "v");
    producer.flush();
    await().atMost(Duration.ofSeconds(60)).until(() -> ledger.credits.containsKey("later-1")
        && partitionCount(b, "dedup.kafka.rebuild.failures", 0) >= failures + 2);
    assertThat(ledger.credits).doesNotContainKey("later-0");
    assertThat(reported).as("one report per episode").singleElement()
        .satisfies(e -> assertThat(e.getMessage()).contains(p0.toString()));

    admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(11))).all().get(30, TimeUnit.SECONDS);
    broker.awaitCommitted(group, topic, 33);
    assertThat(ledger.credits).containsKeys("later-0", "later-1");
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(reported).hasSize(1);
  }

  @Test
  void shouldSkipAndCountRecordsWithoutIdentityDuringARebuild() throws Exception {
    String topic = name("faults-no-identity");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, machineA, ledger);
    for (int i = 0; i < 10; i++) {
      send(topic, 0, "id-" + i, "v");
    }
    for (int i = 0; i < 3; i++) {
      send(topic, 0, null, "no id");
    }
    send(topic, 0, "id-boom", "boom");
    producer.flush();
    broker.awaitCommitted(group, topic, 14);
    stop(a);

    // On machine B the extractor throws for the value 'boom', and finds nothing in the records without a header.
    IdentityExtractor<String, String> header = IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID);
    IdentityExtractor<String, String> throwing = r -> {
      if ("boom".equals(r.value())) {
        throw new IllegalArgumentException("cannot parse 'boom'");
      }
      return header.identify(r);
    };
    Running b = start(topic, machineB, broker.consumerConfig(group), 20, throwing, ledger, e -> { });
    send(topic, 0, "id-3", "v"); // a re-publish: a duplicate
    send(topic, 0, "id-10", "v");
    producer.flush();
    broker.awaitCommitted(group, topic, 16);
    assertThat(count(b.registry, "dedup.kafka.rebuild.records")).isEqualTo(14);
    assertThat(count(b.registry, "dedup.kafka.rebuild.no.identity")).isEqualTo(4);
    assertThat(count(b.registry, "dedup.kafka.rebuild.ids")).isEqualTo(10);
    assertThat(count(b.registry, "dedup.kafka.rebuild.failures")).isZero();
    assertThat(count(b.registry, "dedup.kafka.duplicates")).isEqualTo(1);
    assertThat(ledger.credits).containsKey("id-10");
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
  }

  @Test
  void shouldCancelARebuildCleanlyWhenItsPartitionIsRevokedMidway() throws Exception {
    String topic = name("faults-revoked");
    String group = name("g");
    int perPartition = 1500;
    broker.createTopic(topic, 2);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, machineA, ledger);
    for (int i = 0; i < perPartition; i++) {
      send(topic, 0, "p-" + i, "v");
      send(topic, 1, "q-" + i, "v");
    }
    producer.flush();
    broker.awaitCommitted(group, topic, 2L * perPartition);
    stop(a);

    // Machine B rebuilds both partitions slowly (3 ms per identification, small polls); the extractor counts its
    // calls per partition.
    Map<String, AtomicLong> identified = new ConcurrentHashMap<>();
    IdentityExtractor<String, String> header = IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID);
    IdentityExtractor<String, String> slow = r -> {
      identified.computeIfAbsent(r.topic() + "-" + r.partition(), k -> new AtomicLong()).incrementAndGet();
      simulateWork(3);
      return header.identify(r);
    };
    Map<String, String> config = broker.consumerConfig(group);
    config.put("max.poll.records", "100");
    Running b;
    Running c;
    try (LogCapture log = LogCapture.of("io.github.vertxdedup", Level.INFO)) {
      b = start(topic, machineB, config, 20, slow, ledger, e -> { });
      await().atMost(Duration.ofSeconds(60)).until(() -> count(b.registry, "dedup.kafka.rebuild.records") >= 200);

      // Machine C joins mid-rebuild: the group moves a partition from B to C.
      c = start(group, topic, machineC, ledger);
      await().atMost(Duration.ofSeconds(60)).until(() -> !c.consumer.assignment().isEmpty());
      TopicPartition moved = c.consumer.assignment().iterator().next();
      await().atMost(Duration.ofSeconds(60)).until(() -> handedBack(log, moved) >= 0);
      long identifiedAtHandBack = identified.getOrDefault(moved.toString(), new AtomicLong()).get();

      // Every id is re-published, and new ones follow: none is applied twice, whoever owns its partition now.
      for (int i = 0; i < perPartition; i++) {
        send(topic, 0, "p-" + i, "v");
        send(topic, 1, "q-" + i, "v");
      }
      send(topic, 0, "p-new", "v");
      send(topic, 1, "q-new", "v");
      producer.flush();
      broker.awaitCommitted(group, topic, 4L * perPartition + 2);
      assertThat(ledger.size()).isEqualTo(2 * perPartition + 2);
      assertThat(ledger.creditedMoreThanOnce()).isEmpty();

      // B's rebuild of the moved partition was cancelled, and its thread had ended before the window was handed
      // back; B identified none of the moved partition's records after that, and runs no rebuild any more.
      List<LogCapture.Line> lines = log.lines();
      int cancelled = indexOf(lines, moved + ": window rebuild cancelled");
      assertThat(cancelled).as("B's rebuild of %s was cancelled", moved).isNotNegative();
      assertThat(cancelled).isLessThan(handedBack(log, moved));
      assertThat(lines).noneMatch(l -> l.message().contains("did not end within"));
      assertThat(identified.getOrDefault(moved.toString(), new AtomicLong()).get()).isEqualTo(identifiedAtHandBack);
      assertThat(b.registry.find("dedup.kafka.rebuild.in.progress").longTaskTimers())
          .allSatisfy(t -> assertThat(t.activeTasks()).isZero());
      // A long rebuild says how far it got, in journal replay's form.
      assertThat(lines).anyMatch(l -> l.level() == Level.INFO
          && l.message().matches(".*: rebuild read [\\d,]+ records, [\\d.]+% of offsets [\\d,]+\\.\\.[\\d,]+, [\\d,]+"
              + " records/s, [\\d,]+ ms"));
    }
  }

  /** @return the index of B's first "window handed back" line of {@code tp}, or -1 */
  private static int handedBack(LogCapture log, TopicPartition tp) {
    return indexOf(log.lines(), tp + ": revoked");
  }

  private static int indexOf(List<LogCapture.Line> lines, String prefix) {
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).message().startsWith(prefix)) {
        return i;
      }
    }
    return -1;
  }

  /** Work that takes {@code ms} milliseconds of the calling thread, as a slow extractor's would. */
  private static void simulateWork(long ms) {
    long end = System.nanoTime() + ms * 1_000_000L;
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
  }
}
