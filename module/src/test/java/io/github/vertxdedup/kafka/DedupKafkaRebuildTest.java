package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaMachines.name;
import static io.github.vertxdedup.kafka.KafkaMachines.simulateWork;
import static io.github.vertxdedup.kafka.KafkaTestSupport.count;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.kafka.KafkaMachines.Running;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Windows that follow their partition: two "machines" are two consumers of one group, each in a Vert.x instance of
 * its own with a journal directory of its own, so nothing of a window reaches the other machine except through the
 * source topic. A partition that arrives on a machine whose journal lacks part of its window is rebuilt from the
 * topic before any of its records is handled.
 */
class DedupKafkaRebuildTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  @RegisterExtension
  final KafkaMachines machines = new KafkaMachines(broker, "test.kafka.rebuild");

  /** @return both modes without a database, for {@code create}'s consumer and for a wrapped Vert.x consumer */
  static Stream<Arguments> modesCreatedAndWrapped() {
    // INBOX needs a database: KafkaInboxTest.
    return Stream.of(AtomicityMode.RECORD_FIRST, AtomicityMode.EFFECT_FIRST)
        .flatMap(m -> Stream.of(Arguments.of(m, false), Arguments.of(m, true)));
  }

  /** Both machines run {@code create}'s consumer, or both wrap the application's Vert.x consumer. */
  @ParameterizedTest(name = "{0}, wrapped {1}")
  @MethodSource("modesCreatedAndWrapped")
  void shouldApplyNoIdTwiceWhenTheProducerRepublishesAfterACleanMoveToAnotherMachine(AtomicityMode mode,
      boolean wrapped) throws Exception {
    String topic = name(wrapped ? "wrapped-rebuild-move" : "rebuild-move");
    String group = name("g");
    broker.createTopic(topic, 2);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = machines.consumer(group, "A", ledger).mode(mode).wrapped(wrapped).subscribe(topic);
    machines.publish(topic, 0, 300);
    broker.awaitCommitted(group, topic, 300);
    machines.stop(a);

    // Machine B has no journal of either partition; the producer publishes every id again under new offsets.
    Running b = machines.consumer(group, "B", ledger).mode(mode).wrapped(wrapped).subscribe(topic);
    machines.publish(topic, 0, 300);
    machines.publish(topic, 300, 320);
    broker.awaitCommitted(group, topic, 620);
    ledger.awaitSize(320);

    assertThat(ledger.size()).isEqualTo(320);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(b.registry(), "dedup.kafka.rebuild.records")).isEqualTo(300);
    assertThat(count(b.registry(), "dedup.kafka.rebuild.ids")).isEqualTo(300);
    assertThat(count(b.registry(), "dedup.kafka.duplicates")).isEqualTo(300);
    assertThat(b.registry().find("dedup.kafka.rebuild.duration").timers()).hasSize(2)
        .allSatisfy(t -> assertThat(t.count()).isEqualTo(1));
  }

  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldApplyNoIdTwiceWhenAPartitionComesBackToAMachineWhoseJournalIsStale(AtomicityMode mode)
      throws Exception {
    String topic = name("rebuild-stale");
    String group = name("g");
    broker.createTopic(topic, 2);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = machines.start(group, topic, mode, "A", ledger);
    machines.publish(topic, 0, 100);
    broker.awaitCommitted(group, topic, 100);
    machines.stop(a);

    // The partitions move to machine B, which handles new ids; machine A's journal knows nothing of them.
    Running b = machines.start(group, topic, mode, "B", ledger);
    machines.publish(topic, 100, 300);
    broker.awaitCommitted(group, topic, 300);
    machines.stop(b);

    // Back on machine A, whose journal stops at offset 100 of the pair; the producer re-publishes B's ids.
    Running back = machines.start(group, topic, mode, "A", ledger);
    machines.publish(topic, 100, 300);
    broker.awaitCommitted(group, topic, 500);
    ledger.awaitSize(300);

    assertThat(ledger.size()).isEqualTo(300);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    // Only what the journal lacked was read: B's 200 records, not A's own 100 again.
    assertThat(count(back.registry(), "dedup.kafka.rebuild.records")).isEqualTo(200);
    assertThat(count(back.registry(), "dedup.kafka.rebuild.ids")).isEqualTo(200);
    assertThat(count(back.registry(), "dedup.kafka.duplicates")).isEqualTo(200);

    // The rebuilt ids were journaled: restarted on A once more, nothing is left to rebuild and the ids are known.
    machines.stop(back);
    Running again = machines.start(group, topic, mode, "A", ledger);
    machines.publish(topic, 0, 300);
    broker.awaitCommitted(group, topic, 800);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(again.registry(), "dedup.kafka.rebuild.records")).isZero();
    assertThat(count(again.registry(), "dedup.kafka.duplicates")).isEqualTo(300);
  }

  @Test
  void shouldStayInTheGroupWhileARebuildOutlastsMaxPollInterval() throws Exception {
    String topic = name("rebuild-slow");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = machines.start(group, topic, AtomicityMode.EFFECT_FIRST, "A", ledger);
    machines.publish(topic, 0, 1500);
    broker.awaitCommitted(group, topic, 1500);
    machines.stop(a);

    // On machine B each identification takes 3 ms: reading 1500 records takes several times max.poll.interval.ms.
    long maxPollIntervalMs = 1500;
    Map<String, String> config = broker.consumerConfig(group);
    config.put("max.poll.interval.ms", Long.toString(maxPollIntervalMs));
    config.put("max.poll.records", "100");
    IdentityExtractor<String, String> header = IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID);
    IdentityExtractor<String, String> slow = r -> {
      simulateWork(3);
      return header.identify(r);
    };
    Running b = machines.consumer(group, "B", ledger).mode(AtomicityMode.EFFECT_FIRST).config(config)
        .identity(slow).subscribe(topic);
    machines.publish(topic, 0, 10);
    broker.awaitCommitted(group, topic, 1510);
    ledger.awaitSize(1500);

    assertThat(ledger.size()).isEqualTo(1500);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    Timer rebuilds = b.registry().find("dedup.kafka.rebuild.duration").timer();
    // One rebuild, never cancelled and started again: the consumer kept its partition, so it stayed in the group.
    assertThat(rebuilds.count()).isEqualTo(1);
    assertThat(rebuilds.totalTime(TimeUnit.MILLISECONDS)).isGreaterThan(maxPollIntervalMs);
    assertThat(count(b.registry(), "dedup.kafka.rebuild.records")).isEqualTo(1500);
    assertThat(b.consumer().assignment()).hasSize(1);
  }
}
