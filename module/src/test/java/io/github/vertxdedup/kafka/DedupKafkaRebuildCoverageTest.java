package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaTestSupport.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.testing.LogCapture;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Coverage after a rebuild from the source topic: a window rebuilt on a new machine covers the event times the topic
 * gave it, not only those since the machine first opened its journal, and keeps that across a restart; where the
 * topic lost records of the window ({@code Admin.deleteRecords}, as retention would), it says so (a WARN line and
 * {@code dedup.kafka.coverage.start}) and takes the records older than what it can vouch for as uncovered. Two
 * "machines" are two consumers with journal directories of their own, on the real in-process broker; the record
 * timestamps are set by the producer, minutes before now, against a window of {@value #WINDOW_MINUTES} minutes.
 */
class DedupKafkaRebuildCoverageTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  private static final AtomicInteger NAMES = new AtomicInteger();
  private static final long WINDOW_MINUTES = 10;
  private static final long MINUTE_MS = 60_000;
  private static KafkaProducer<String, String> producer;
  private static Admin admin;

  @TempDir
  Path machineA;
  @TempDir
  Path machineB;

  private final List<Vertx> instances = new CopyOnWriteArrayList<>();

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

  private record Running(Vertx vertx, DedupKafkaConsumer<String, String> consumer, SimpleMeterRegistry registry,
      List<DeadLetter<String, String>> deadLetters) {}

  /** A consumer on one machine, taking records its window does not cover to the dead-letter handler. */
  private Running start(String group, String topic, Path journalDir, KafkaTestSupport.Ledger ledger)
      throws Exception {
    return start(group, topic, journalDir, false, ledger);
  }

  /** The same, with the changelog topic on or off. */
  private Running start(String group, String topic, Path journalDir, boolean changelog,
      KafkaTestSupport.Ledger ledger) throws Exception {
    Vertx vertx = Vertx.vertx();
    instances.add(vertx);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    List<DeadLetter<String, String>> deadLetters = new CopyOnWriteArrayList<>();
    DedupKafkaOptions options = new DedupKafkaOptions()
        .setDedup(new DedupOptions().setAddress("test.kafka.coverage")
            .setWindow(Duration.ofMinutes(WINDOW_MINUTES)).setJournalDir(journalDir.toString()))
        .setUncoveredRecords(UncoveredRecordPolicy.DEAD_LETTER)
        .setChangelog(changelog)
        .setBackoffInitialMs(1)
        .setBackoffMaxMs(20)
        .setPollTimeoutMs(20);
    DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>create(vertx,
            broker.consumerConfig(group), options)
        .identity(IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID))
        .handler(r -> ledger.credit(r.key()))
        .deadLetterHandler(d -> {
          deadLetters.add(d);
          return Future.succeededFuture();
        })
        .meterRegistry(registry);
    c.subscribe(topic).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    return new Running(vertx, c, registry, deadLetters);
  }

  private void stop(Running r) throws Exception {
    r.consumer.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    r.vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    instances.remove(r.vertx);
  }

  /** Sends {@code id} to partition 0 of {@code topic}, stamped {@code timestampMs}, keyed and headed by the id. */
  private static void sendAt(String topic, String id, long timestampMs) {
    ProducerRecord<String, String> r = new ProducerRecord<>(topic, 0, timestampMs, id, "v");
    r.headers().add(KafkaTestSupport.MESSAGE_ID, id.getBytes(StandardCharsets.UTF_8));
    producer.send(r);
  }

  private static void flush() {
    producer.flush();
  }

  /** @return the coverage start the consumer's rebuild of partition 0 set, epoch ms, or NaN */
  private static double coverageStart(Running r) {
    Gauge g = r.registry.find("dedup.kafka.coverage.start").tag("partition", "0").gauge();
    return g == null ? Double.NaN : g.value();
  }

  private static String name(String prefix) {
    return prefix + "-" + NAMES.incrementAndGet();
  }

  @Test
  void shouldCoverFromTheRebuildsStartAndKeepItAcrossARestartOnTheNewMachine() throws Exception {
    String topic = name("cover-move");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    long startedMs = System.currentTimeMillis();
    Running a = start(group, topic, machineA, ledger);
    for (int i = 0; i < 100; i++) {
      sendAt(topic, "id-" + i, startedMs - 3 * MINUTE_MS);
    }
    flush();
    broker.awaitCommitted(group, topic, 100);
    stop(a);

    // Machine B rebuilds the window from the topic; a record stamped two minutes ago arrives late. The topic gave B
    // every id of the last W, so B covers it: it is handled, not taken as uncovered.
    Running b = start(group, topic, machineB, ledger);
    sendAt(topic, "late-1", System.currentTimeMillis() - 2 * MINUTE_MS);
    sendAt(topic, "id-7", startedMs - 3 * MINUTE_MS); // a re-publish: a duplicate
    flush();
    broker.awaitCommitted(group, topic, 102);
    assertThat(b.deadLetters).as("dead letters").isEmpty();
    assertThat(ledger.credits).containsKey("late-1");
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(b.registry, "dedup.kafka.duplicates")).isEqualTo(1);
    assertThat(coverageStart(b)).isBetween((double) startedMs - WINDOW_MINUTES * MINUTE_MS - MINUTE_MS,
        (double) System.currentTimeMillis() - WINDOW_MINUTES * MINUTE_MS);

    // Restarted on B, nothing is left to rebuild; the coverage came back from B's journal.
    stop(b);
    Running again = start(group, topic, machineB, ledger);
    sendAt(topic, "late-2", System.currentTimeMillis() - 2 * MINUTE_MS);
    flush();
    broker.awaitCommitted(group, topic, 103);
    assertThat(count(again.registry, "dedup.kafka.rebuild.records")).isZero();
    assertThat(again.deadLetters).as("dead letters").isEmpty();
    assertThat(ledger.credits).containsKey("late-2");
  }

  @Test
  void shouldCoverFromTheCutoffAfterAMoveThroughTheChangelog() throws Exception {
    String topic = name("cover-changelog");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    long startedMs = System.currentTimeMillis();
    Running a = start(group, topic, machineA, true, ledger);
    for (int i = 0; i < 100; i++) {
      sendAt(topic, "id-" + i, startedMs - 3 * MINUTE_MS);
    }
    flush();
    broker.awaitCommitted(group, topic, 100);
    stop(a);

    // Machine B restores the window from the changelog alone (it covers every committed offset), so no rebuild from
    // the source topic sets the coverage: the changelog's rebuild does, and a late record inside W is handled.
    Running b = start(group, topic, machineB, true, ledger);
    sendAt(topic, "late-1", System.currentTimeMillis() - 2 * MINUTE_MS);
    sendAt(topic, "id-7", startedMs - 3 * MINUTE_MS); // a re-publish: a duplicate
    flush();
    broker.awaitCommitted(group, topic, 102);
    assertThat(count(b.registry, "dedup.kafka.rebuild.changelog.entries")).isEqualTo(100);
    assertThat(count(b.registry, "dedup.kafka.rebuild.records")).isZero();
    assertThat(b.deadLetters).as("dead letters").isEmpty();
    assertThat(ledger.credits).containsKey("late-1");
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(coverageStart(b)).isBetween((double) startedMs - WINDOW_MINUTES * MINUTE_MS - MINUTE_MS,
        (double) System.currentTimeMillis() - WINDOW_MINUTES * MINUTE_MS);
  }

  @Test
  void shouldWarnAndTakeRecordsOlderThanWhatIsLeftAsUncoveredWhenTheTopicLostRecordsOfTheWindow()
      throws Exception {
    String topic = name("cover-lost");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    long nowMs = System.currentTimeMillis();
    long olderMs = nowMs - 6 * MINUTE_MS;
    long newerMs = nowMs - 4 * MINUTE_MS;
    Running a = start(group, topic, machineA, ledger);
    for (int i = 0; i < 100; i++) {
      sendAt(topic, "id-" + i, olderMs);
    }
    for (int i = 100; i < 200; i++) {
      sendAt(topic, "id-" + i, newerMs);
    }
    flush();
    broker.awaitCommitted(group, topic, 200);
    stop(a);
    // The first 100 records, all inside the window, are removed from the topic; machine B has no journal of them.
    TopicPartition tp = new TopicPartition(topic, 0);
    admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(100))).all().get(30, TimeUnit.SECONDS);

    Running b;
    try (LogCapture log = LogCapture.of("io.github.vertxdedup", Level.WARN)) {
      b = start(group, topic, machineB, ledger);
      await().atMost(Duration.ofSeconds(60)).until(() -> !Double.isNaN(coverageStart(b)));
      assertThat(log.at(Level.WARN)).filteredOn(l -> l.message().contains("lost records of the window"))
          .singleElement().satisfies(l -> assertThat(l.message()).contains(tp.toString(),
              "log starts at offset 100", Long.toString(newerMs + 1),
              java.time.Instant.ofEpochMilli(newerMs + 1).toString()));
    }
    // What is left starts at the first record kept: B vouches only for what is newer than it.
    assertThat(coverageStart(b)).isEqualTo((double) newerMs + 1);

    sendAt(topic, "id-50", olderMs);                                // a lost id, re-published: B cannot tell
    sendAt(topic, "id-150", newerMs);                               // a kept id, re-published: a duplicate
    sendAt(topic, "new-1", olderMs);                                // a new id as old as the lost ones
    sendAt(topic, "new-2", System.currentTimeMillis());             // a new id: handled
    flush();
    broker.awaitCommitted(group, topic, 204);
    assertThat(b.deadLetters).extracting(d -> d.record().key()).containsExactlyInAnyOrder("id-50", "new-1");
    assertThat(b.deadLetters).allSatisfy(d -> assertThat(d.reason()).isEqualTo(DeadLetter.Reason.UNCOVERED));
    assertThat(ledger.credits).containsKey("new-2");
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(b.registry, "dedup.kafka.duplicates")).isEqualTo(1);
  }
}
