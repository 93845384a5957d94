package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaTestSupport.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.DedupOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.utils.Utils;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Deduplication added to an application's Vert.x {@link KafkaConsumer} ({@link DedupKafkaConsumer#wrap}) on a real
 * broker: producer duplicates, partitions that move between two wrapped consumers while copies are published, and
 * the journaled windows rebuilt on assignment. Each test runs in Vert.x instances of its own.
 */
class WrappedKafkaConsumerTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  private static final AtomicInteger NAMES = new AtomicInteger();

  @TempDir
  Path journalDir;

  private final List<Vertx> instances = new CopyOnWriteArrayList<>();
  private final List<DedupKafkaConsumer<String, String>> consumers = new CopyOnWriteArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (DedupKafkaConsumer<String, String> c : consumers) {
      c.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    for (Vertx v : instances) {
      v.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static String name(String prefix) {
    return prefix + "-" + NAMES.incrementAndGet();
  }

  private Vertx vertx() {
    Vertx vertx = Vertx.vertx();
    instances.add(vertx);
    return vertx;
  }

  private static DedupKafkaOptions options(AtomicityMode mode, Path journalDir) {
    DedupOptions dedup = new DedupOptions().setAddress("test.kafka.wrapped").setWindow(Duration.ofMinutes(10));
    if (journalDir != null) {
      dedup.setJournalDir(journalDir.toString());
    }
    return new DedupKafkaOptions()
        .setDedup(dedup)
        .setMode(mode)
        .setMaxAttempts(3)
        .setBackoffInitialMs(1)
        .setBackoffMaxMs(20)
        .setPollTimeoutMs(20)
        .setCommitIntervalMs(20);
  }

  /**
   * The application's Vert.x consumer of {@code group} (auto-commit off), wrapped: identity from the message-id header,
   * a handler crediting the record key to {@code ledger}, dead letters failing the test. Subscribed to {@code topic}.
   */
  private DedupKafkaConsumer<String, String> start(Vertx vertx, String group, String topic, DedupKafkaOptions options,
      KafkaTestSupport.Ledger ledger, SimpleMeterRegistry registry) throws Exception {
    Map<String, String> config = broker.consumerConfig(group);
    config.put("enable.auto.commit", "false");
    KafkaConsumer<String, String> kafka = KafkaConsumer.create(vertx, config);
    DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>wrap(vertx, kafka, config, options)
        .identity(IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID))
        .handler(r -> ledger.credit(r.key()))
        .deadLetterHandler(d -> Future.failedFuture("no dead letter expected: " + d))
        .meterRegistry(registry);
    consumers.add(c);
    c.subscribe(topic).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    return c;
  }

  private void close(DedupKafkaConsumer<String, String> c) throws Exception {
    c.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    consumers.remove(c);
  }

  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldCreditEachIdOnceWhenTheProducerPublishesItSeveralTimes(AtomicityMode mode) throws Exception {
    String topic = name("wrapped-producer-dups");
    String group = name("g");
    broker.createTopic(topic, 3);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    start(vertx(), group, topic, options(mode, null), ledger, registry);
    for (int copy = 0; copy < 3; copy++) {
      for (int i = 0; i < 100; i++) {
        broker.send(topic, "id-" + i, "v");
      }
    }
    broker.flush();
    broker.awaitCommitted(group, topic, 300);
    // Record-first commits a decided run's offsets before its handlers run: wait for the handlers too.
    await().atMost(Duration.ofSeconds(30)).until(() -> ledger.size() >= 100);
    assertThat(ledger.size()).isEqualTo(100);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(registry, "dedup.kafka.duplicates")).isEqualTo(200);
  }

  /**
   * Two wrapped consumers of one group in one Vert.x instance share the partitions while records flow: the second
   * joins after round 1, the first leaves after round 3. Every round publishes 200 new ids and 20 copies (10 %) of
   * ids picked at random among those published before the round (in round 0, before the copy), so copies of many
   * distinct ids reach every partition, and many of them arrive after their partition has moved. The rebalance
   * handlers do not hold the rebalance back, so the next owner reads each moved partition again from its last commit
   * while the old owner may still be finishing: no id is applied twice, every copy is a duplicate. Effect-first
   * applies every id; record-first applies every id but those a revoked owner had checked and no commit covered
   * (its documented loss where the window moves with the partition), each counted in {@code dedup.kafka.unhandled}.
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldApplyNoIdTwiceWhilePartitionsMoveBetweenTwoWrappedConsumers(AtomicityMode mode) throws Exception {
    int partitions = 4;
    String topic = name("wrapped-rebalance");
    String group = name("g");
    broker.createTopic(topic, partitions);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Vertx vertx = vertx();
    DedupKafkaConsumer<String, String> a = start(vertx, group, topic, options(mode, null), ledger, registry);
    await().atMost(Duration.ofSeconds(60)).until(() -> a.assignment().size() == partitions);
    DedupKafkaConsumer<String, String> b = null;
    Random random = new Random(7919);
    Map<Integer, Set<String>> copiedPerPartition = new HashMap<>();
    int sent = 0;
    int ids = 0;
    for (int round = 0; round < 5; round++) {
      int before = ids;
      for (int i = 0; i < 200; i++) {
        broker.send(topic, "id-" + ids++, "v");
        sent++;
        if (i % 10 == 9) {
          String copy = "id-" + random.nextInt(round == 0 ? ids : before);
          broker.send(topic, copy, "v");
          copiedPerPartition.computeIfAbsent(partitionOf(copy, partitions), p -> new HashSet<>()).add(copy);
          sent++;
        }
      }
      broker.flush();
      if (round == 1) {
        b = start(vertx, group, topic, options(mode, null), ledger, registry);
        DedupKafkaConsumer<String, String> joined = b;
        await().atMost(Duration.ofSeconds(60))
            .until(() -> a.assignment().size() == 2 && joined.assignment().size() == 2);
      } else if (round == 3) {
        close(a);
        DedupKafkaConsumer<String, String> left = b;
        await().atMost(Duration.ofSeconds(60)).until(() -> left.assignment().size() == partitions);
      }
      int expected = ids;
      try {
        await().atMost(Duration.ofSeconds(60))
            .until(() -> ledger.size() + count(registry, "dedup.kafka.unhandled") == expected);
      } catch (ConditionTimeoutException e) {
        // Name what never came: the partitions whose records stalled, and the first of them, against the log.
        Map<Integer, Set<String>> missing = new TreeMap<>();
        for (int i = 0; i < expected; i++) {
          String id = "id-" + i;
          if (!ledger.credits.containsKey(id)) {
            missing.computeIfAbsent(partitionOf(id, partitions), p -> new TreeSet<>()).add(id);
          }
        }
        throw new AssertionError("round " + round + ": " + ledger.size() + " of " + expected + " ids credited, "
            + count(registry, "dedup.kafka.unhandled") + " unhandled; missing per partition: " + missing, e);
      }
    }
    assertThat(copiedPerPartition).as("distinct ids copied, per partition").hasSize(partitions)
        .allSatisfy((p, copied) -> assertThat(copied).hasSizeGreaterThanOrEqualTo(15));
    broker.awaitCommitted(group, topic, sent);
    double unhandled = count(registry, "dedup.kafka.unhandled");
    if (mode == AtomicityMode.EFFECT_FIRST) {
      assertThat(unhandled).as("effect-first leaves no checked record unhandled").isZero();
    }
    assertThat(ledger.size() + unhandled).as("ids applied, or checked and left unhandled").isEqualTo(ids);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    // Every copy is dropped, and so is every record a moved partition's next owner read again.
    assertThat(count(registry, "dedup.kafka.duplicates")).isGreaterThanOrEqualTo(sent - ids);
  }

  /**
   * With {@code dedup.journalDir}, a wrapped consumer restarted in a new Vert.x instance rebuilds each assigned
   * partition's window from its journal before a record of it is decided: after a rewind of the group's offsets the
   * old ids (and ten of them published again) are duplicates.
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldRebuildTheWindowsFromTheJournalOnAssignment(AtomicityMode mode) throws Exception {
    String topic = name("wrapped-journal");
    String group = name("g");
    broker.createTopic(topic, 2);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Vertx first = vertx();
    DedupKafkaConsumer<String, String> c = start(first, group, topic, options(mode, journalDir), ledger,
        new SimpleMeterRegistry());
    for (int i = 0; i < 50; i++) {
      broker.send(topic, "id-" + i, "v");
    }
    broker.flush();
    broker.awaitCommitted(group, topic, 50);
    close(c);
    first.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    instances.remove(first);
    assertThat(journalDir.resolve(group).resolve(topic + "-0")).isDirectory();

    broker.rewind(group, topic, 2);
    for (int i = 40; i < 70; i++) {
      broker.send(topic, "id-" + i, "v");
    }
    broker.flush();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    start(vertx(), group, topic, options(mode, journalDir), ledger, registry);
    broker.awaitCommitted(group, topic, 80);
    // Record-first commits a decided run's offsets before its handlers run: wait for the handlers too.
    await().atMost(Duration.ofSeconds(30)).until(() -> ledger.size() >= 70);
    assertThat(ledger.size()).isEqualTo(70);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(registry, "dedup.kafka.duplicates")).isEqualTo(60);
  }

  /**
   * Where Kafka has no offset of the group (deleted), the wrapped consumer seeks each partition to the offset its
   * journal recorded, and the records before it are not read again.
   */
  @Test
  void shouldResumeAtTheJournalsOffsetWhenKafkaHasNone() throws Exception {
    String topic = name("wrapped-journal-resume");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Vertx first = vertx();
    DedupKafkaConsumer<String, String> c = start(first, group, topic, options(AtomicityMode.EFFECT_FIRST,
        journalDir), ledger, new SimpleMeterRegistry());
    for (int i = 0; i < 30; i++) {
      broker.send(topic, "id-" + i, "v");
    }
    broker.flush();
    broker.awaitCommitted(group, topic, 30);
    close(c);

    broker.deleteGroup(group);
    for (int i = 30; i < 40; i++) {
      broker.send(topic, "id-" + i, "v");
    }
    broker.flush();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    start(vertx(), group, topic, options(AtomicityMode.EFFECT_FIRST, journalDir), ledger, registry);
    broker.awaitCommitted(group, topic, 40);
    assertThat(ledger.size()).isEqualTo(40);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(registry, "dedup.kafka.duplicates")).as("nothing before the journal's offset read again")
        .isZero();
  }

  /** The partition the producer's default partitioner gives a record keyed {@code key}: murmur2 of its bytes. */
  private static int partitionOf(String key, int partitions) {
    return Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8))) % partitions;
  }
}
