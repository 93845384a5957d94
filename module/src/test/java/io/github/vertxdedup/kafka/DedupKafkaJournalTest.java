package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaMachines.name;
import static io.github.vertxdedup.kafka.KafkaTestSupport.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.kafka.KafkaMachines.Running;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The consumer with {@code dedup.journalDir}: its windows outlive the Vert.x instance (and the process) that held
 * them. Each consumer here runs in a Vert.x instance of its own, closed before the next one starts, as a restarted
 * application would.
 */
class DedupKafkaJournalTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  @RegisterExtension
  final KafkaMachines machines = new KafkaMachines(broker, "test.kafka.journal");

  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldFindThePreviousIdsAfterARestartInANewVertxOnTheSameJournalDir(AtomicityMode mode) throws Exception {
    Path journalDir = machines.dir("A");
    String topic = name("journal-restart");
    String group = name("g");
    broker.createTopic(topic, 2);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running first = machines.start(group, topic, mode, "A", ledger);
    for (int i = 0; i < 50; i++) {
      broker.send(topic, "id-" + i, "v");
    }
    broker.flush();
    broker.awaitCommitted(group, topic, 50);
    machines.stop(first);
    assertThat(journalDir.resolve(group).resolve(topic + "-0")).isDirectory();
    assertThat(journalDir.resolve(group).resolve(topic + "-1")).isDirectory();

    // Kafka redelivers everything, and the producer publishes ten of the old ids again beside twenty new ones.
    broker.rewind(group, topic, 2);
    for (int i = 40; i < 70; i++) {
      broker.send(topic, "id-" + i, "v");
    }
    broker.flush();
    Running second = machines.start(group, topic, mode, "A", ledger);
    broker.awaitCommitted(group, topic, 80);
    // Record-first commits a decided run's offsets before its handlers run: wait for the handlers too.
    await().atMost(Duration.ofSeconds(30)).until(() -> ledger.size() >= 70);

    assertThat(ledger.size()).isEqualTo(70);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(second.registry(), "dedup.kafka.duplicates")).isEqualTo(60);
  }

  @Test
  void shouldResumeAtTheJournalsOffsetWhenKafkaHasNone() throws Exception {
    Path journalDir = machines.dir("A");
    String topic = name("journal-resume");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running first = machines.start(group, topic, AtomicityMode.EFFECT_FIRST, "A", ledger);
    for (int i = 0; i < 30; i++) {
      broker.send(topic, "id-" + i, "v");
    }
    broker.flush();
    broker.awaitCommitted(group, topic, 30);
    machines.stop(first);

    // The group's offsets are gone from Kafka (auto.offset.reset is earliest): only the journal knows where to go on.
    broker.deleteGroup(group);
    for (int i = 30; i < 40; i++) {
      broker.send(topic, "id-" + i, "v");
    }
    broker.flush();
    Running second = machines.start(group, topic, AtomicityMode.EFFECT_FIRST, "A", ledger);
    broker.awaitCommitted(group, topic, 40);

    assertThat(ledger.size()).isEqualTo(40);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    // Resumed at offset 30: the thirty records before it were not even read again.
    assertThat(count(second.registry(), "dedup.kafka.records")).isEqualTo(10);
    assertThat(count(second.registry(), "dedup.kafka.duplicates")).isZero();
    assertThat(Files.list(journalDir.resolve(group))).hasSize(1);
  }

  @Test
  void shouldStopLeaveTheGroupAndCallTheExceptionHandlerWhenAWindowCannotOpen() throws Exception {
    Path journalDir = machines.dir("A");
    String topic = name("journal-unopenable");
    String group = name("g");
    broker.createTopic(topic, 2);
    for (int i = 0; i < 20; i++) {
      broker.send(topic, "id-" + i, "v");
    }
    broker.flush();
    // Partition 0's journal directory is a regular file: its window cannot be opened.
    Path blocked = journalDir.resolve(group).resolve(topic + "-0");
    Files.createDirectories(blocked.getParent());
    Files.writeString(blocked, "not a directory");

    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    CompletableFuture<Throwable> reported = new CompletableFuture<>();
    List<Throwable> reports = new CopyOnWriteArrayList<>();
    Running first = machines.consumer(group, "A", ledger).mode(AtomicityMode.EFFECT_FIRST)
        .exceptionHandler(e -> {
          reports.add(e);
          reported.complete(e);
        })
        .subscribe(topic);
    DedupKafkaConsumer<String, String> c = first.consumer();
    SimpleMeterRegistry registry = first.registry();

    Throwable failure = reported.get(60, TimeUnit.SECONDS);
    assertThat(failure).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("failed to start the window of " + topic + "-0");
    assertThat(count(registry, "dedup.kafka.window.open.failures")).isEqualTo(1);
    assertThat(registry.find("dedup.kafka.window.open.failures").tag("partition", "0").counter().count())
        .isEqualTo(1);
    assertThatThrownBy(() -> c.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class).cause().isSameAs(failure);
    assertThat(c.assignment()).isEmpty();
    assertThat(reports).containsExactly(failure);
    machines.closeVertx(first.vertx());

    // The stopped consumer handed partition 1's window back and left the group: once the directory is mended, a new
    // consumer takes both partitions and every record is credited once.
    Files.delete(blocked);
    Running second = machines.start(group, topic, AtomicityMode.EFFECT_FIRST, "A", ledger);
    broker.awaitCommitted(group, topic, 20);
    assertThat(ledger.size()).isEqualTo(20);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(second.registry(), "dedup.kafka.window.open.failures")).isZero();
  }
}
