package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaTestSupport.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.DedupOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Windows that follow their partition, for a wrapped Vert.x consumer ({@link DedupKafkaConsumer#wrap}): two
 * "machines" are two wrapped consumers of one group, each in a Vert.x instance of its own with a journal directory of
 * its own, so nothing of a window reaches the other machine except through the source topic.
 */
class WrappedKafkaRebuildTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  private static final AtomicInteger NAMES = new AtomicInteger();

  @TempDir
  Path machineA;
  @TempDir
  Path machineB;

  private final List<Vertx> instances = new CopyOnWriteArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (Vertx v : instances) {
      v.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static String name(String prefix) {
    return prefix + "-" + NAMES.incrementAndGet();
  }

  private record Running(Vertx vertx, DedupKafkaConsumer<String, String> consumer, SimpleMeterRegistry registry) {}

  /** The application's Vert.x consumer on one machine (auto-commit off), wrapped and subscribed. */
  private Running start(String group, String topic, AtomicityMode mode, Path journalDir,
      KafkaTestSupport.Ledger ledger) throws Exception {
    return start(group, topic, mode, journalDir, IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID), ledger);
  }

  private Running start(String group, String topic, AtomicityMode mode, Path journalDir,
      IdentityExtractor<String, String> identity, KafkaTestSupport.Ledger ledger) throws Exception {
    Vertx vertx = Vertx.vertx();
    instances.add(vertx);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Map<String, String> config = broker.consumerConfig(group);
    config.put("enable.auto.commit", "false");
    KafkaConsumer<String, String> kafka = KafkaConsumer.create(vertx, config);
    DedupKafkaOptions options = new DedupKafkaOptions()
        .setDedup(new DedupOptions().setAddress("test.kafka.wrapped.rebuild").setWindow(Duration.ofMinutes(10))
            .setJournalDir(journalDir.toString()))
        .setMode(mode)
        .setBackoffInitialMs(1)
        .setBackoffMaxMs(20)
        .setPollTimeoutMs(20)
        .setCommitIntervalMs(20);
    DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>wrap(vertx, kafka, config, options)
        .identity(identity)
        .handler(r -> ledger.credit(r.key()))
        .deadLetterHandler(d -> Future.failedFuture("no dead letter expected: " + d))
        .meterRegistry(registry);
    c.subscribe(topic).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    return new Running(vertx, c, registry);
  }

  private void stop(Running r) throws Exception {
    r.consumer.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    r.vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    instances.remove(r.vertx);
  }

  private void publish(String topic, int from, int to) {
    for (int i = from; i < to; i++) {
      broker.send(topic, "id-" + i, "v");
    }
    broker.flush();
  }

  @ParameterizedTest
  @EnumSource(AtomicityMode.class)
  void shouldApplyNoIdTwiceWhenTheProducerRepublishesAfterACleanMoveToAnotherMachine(AtomicityMode mode)
      throws Exception {
    String topic = name("wrapped-rebuild-move");
    String group = name("g");
    broker.createTopic(topic, 2);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, mode, machineA, ledger);
    publish(topic, 0, 300);
    broker.awaitCommitted(group, topic, 300);
    stop(a);

    // Machine B has no journal of either partition; the producer publishes every id again under new offsets.
    Running b = start(group, topic, mode, machineB, ledger);
    publish(topic, 0, 300);
    publish(topic, 300, 320);
    broker.awaitCommitted(group, topic, 620);

    assertThat(ledger.size()).isEqualTo(320);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(b.registry, "dedup.kafka.rebuild.records")).isEqualTo(300);
    assertThat(count(b.registry, "dedup.kafka.rebuild.ids")).isEqualTo(300);
    assertThat(count(b.registry, "dedup.kafka.duplicates")).isEqualTo(300);
    assertThat(b.registry.find("dedup.kafka.rebuild.duration").timers()).hasSize(2)
        .allSatisfy(t -> assertThat(t.count()).isEqualTo(1));
  }

  @ParameterizedTest
  @EnumSource(AtomicityMode.class)
  void shouldCancelARebuildWhenThePartitionIsGivenUpAndHandItsWindowBack(AtomicityMode mode) throws Exception {
    String topic = name("wrapped-rebuild-cancel");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, mode, machineA, ledger);
    publish(topic, 0, 1500);
    broker.awaitCommitted(group, topic, 1500);
    stop(a);

    // On machine B each identification takes 3 ms: the rebuild of 1,500 records takes several seconds.
    IdentityExtractor<String, String> header = IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID);
    IdentityExtractor<String, String> slow = r -> {
      simulateWork(3);
      return header.identify(r);
    };
    Running b = start(group, topic, mode, machineB, slow, ledger);
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(5))
        .until(() -> count(b.registry, "dedup.kafka.rebuild.records") > 0);
    stop(b); // gives the partition up while its window is being rebuilt

    // The rebuild was cancelled: it did not put every id into the window (it reads ahead of the identification, which
    // is the slow part here), and nothing was handled.
    assertThat(count(b.registry, "dedup.kafka.rebuild.ids")).isLessThan(1500);
    assertThat(b.registry.find("dedup.kafka.rebuild.duration").timer().count()).isEqualTo(1);
    assertThat(ledger.size()).isEqualTo(1500);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();

    // The window was handed back (its journal unlocked): the next consumer on machine B takes it and rebuilds it (the
    // ids the cancelled rebuild journaled are there already), and the re-published ids are duplicates.
    Running again = start(group, topic, mode, machineB, ledger);
    publish(topic, 0, 1500);
    broker.awaitCommitted(group, topic, 3000);
    assertThat(ledger.size()).isEqualTo(1500);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(again.registry, "dedup.kafka.duplicates")).isEqualTo(1500);
  }

  /** Work that takes {@code ms} milliseconds of the calling thread, as a slow extractor's would. */
  private static void simulateWork(long ms) {
    long end = System.nanoTime() + ms * 1_000_000L;
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
  }
}
