package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaMachines.name;
import static io.github.vertxdedup.kafka.KafkaMachines.simulateWork;
import static io.github.vertxdedup.kafka.KafkaTestSupport.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.kafka.KafkaMachines.Running;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Windows that follow their partition, for a wrapped Vert.x consumer ({@link DedupKafkaConsumer#wrap}): two
 * "machines" are two wrapped consumers of one group, each in a Vert.x instance of its own with a journal directory of
 * its own, so nothing of a window reaches the other machine except through the source topic. The clean move of a
 * wrapped consumer's partitions to another machine is tested beside {@code create}'s, in {@link DedupKafkaRebuildTest}.
 */
class WrappedKafkaRebuildTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  @RegisterExtension
  final KafkaMachines machines = new KafkaMachines(broker, "test.kafka.wrapped.rebuild");

  /** The application's Vert.x consumer on one machine (auto-commit off), wrapped and subscribed. */
  private Running start(String group, String topic, AtomicityMode mode, String machine,
      KafkaTestSupport.Ledger ledger) throws Exception {
    return machines.consumer(group, machine, ledger).mode(mode).wrapped().subscribe(topic);
  }

  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldCancelARebuildWhenThePartitionIsGivenUpAndHandItsWindowBack(AtomicityMode mode) throws Exception {
    String topic = name("wrapped-rebuild-cancel");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, mode, "A", ledger);
    machines.publish(topic, 0, 1500);
    broker.awaitCommitted(group, topic, 1500);
    machines.stop(a);

    // On machine B each identification takes 3 ms: the rebuild of 1,500 records takes several seconds.
    IdentityExtractor<String, String> header = IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID);
    IdentityExtractor<String, String> slow = r -> {
      simulateWork(3);
      return header.identify(r);
    };
    Running b = machines.consumer(group, "B", ledger).mode(mode).wrapped().identity(slow)
        .subscribe(topic);
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(5))
        .until(() -> count(b.registry(), "dedup.kafka.rebuild.records") > 0);
    machines.stop(b); // gives the partition up while its window is being rebuilt

    // The rebuild was cancelled: it did not put every id into the window (it reads ahead of the identification, which
    // is the slow part here), and nothing was handled.
    assertThat(count(b.registry(), "dedup.kafka.rebuild.ids")).isLessThan(1500);
    assertThat(b.registry().find("dedup.kafka.rebuild.duration").timer().count()).isEqualTo(1);
    ledger.awaitSize(1500);
    assertThat(ledger.size()).isEqualTo(1500);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();

    // The window was handed back (its journal unlocked): the next consumer on machine B takes it and rebuilds it (the
    // ids the cancelled rebuild journaled are there already), and the re-published ids are duplicates.
    Running again = start(group, topic, mode, "B", ledger);
    machines.publish(topic, 0, 1500);
    broker.awaitCommitted(group, topic, 3000);
    ledger.awaitSize(1500);
    assertThat(ledger.size()).isEqualTo(1500);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(again.registry(), "dedup.kafka.duplicates")).isEqualTo(1500);
  }
}
