package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaMachines.WINDOW_MS;
import static io.github.vertxdedup.kafka.KafkaMachines.name;
import static io.github.vertxdedup.kafka.KafkaTestSupport.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.kafka.KafkaMachines.Running;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The changelog topic, and rewinds of the group's offsets: two "machines" are two consumers of one group, each in a
 * Vert.x instance of its own with a journal directory of its own. With the changelog on, a partition that arrives on
 * a machine without a journal of it reads the ids its previous owners accepted from the changelog, not the source
 * topic's records, and the ids of records after a rewound offset are among them.
 */
class DedupKafkaChangelogTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  @RegisterExtension
  final KafkaMachines machines = new KafkaMachines(broker, "test.kafka.changelog");

  private Running start(String group, String topic, AtomicityMode mode, String machine, boolean changelog,
      KafkaTestSupport.Ledger ledger) throws Exception {
    return machines.consumer(group, machine, ledger).mode(mode).changelog(changelog).subscribe(topic);
  }

  /** Waits until the handler was called {@code total} times over all ids. */
  private static void awaitHandled(KafkaTestSupport.Ledger ledger, int total) {
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
        .until(() -> ledger.total() >= total);
  }

  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldRestoreTheIdsFromTheChangelogNotTheSourceTopicAfterACleanMoveToAnotherMachine(AtomicityMode mode)
      throws Exception {
    String topic = name("changelog-move");
    String group = name("g");
    broker.createTopic(topic, 2);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, mode, "A", true, ledger);
    machines.publish(topic, 0, 300);
    broker.awaitCommitted(group, topic, 300);
    awaitHandled(ledger, 300);
    machines.stop(a);

    // The changelog topic was created beside the source topic: same partition count, retention W + 1 h, delete.
    String changelog = group + "-" + topic + "-dedup-changelog";
    assertThat(broker.admin().describeTopics(List.of(changelog)).allTopicNames().get(10, TimeUnit.SECONDS)
        .get(changelog).partitions()).hasSize(2);
    ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, changelog);
    Config config = broker.admin().describeConfigs(List.of(resource)).all().get(10, TimeUnit.SECONDS).get(resource);
    assertThat(config.get("retention.ms").value()).isEqualTo(Long.toString(WINDOW_MS + 3_600_000));
    assertThat(config.get("cleanup.policy").value()).isEqualTo("delete");

    // Machine B has no journal of either partition; the producer publishes every id again under new offsets.
    Running b = start(group, topic, mode, "B", true, ledger);
    machines.publish(topic, 0, 300);
    machines.publish(topic, 300, 320);
    broker.awaitCommitted(group, topic, 620);
    awaitHandled(ledger, 320);

    assertThat(ledger.size()).isEqualTo(320);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    // The ids came from the changelog's entries: no record of the source topic was read to rebuild.
    assertThat(count(b.registry(), "dedup.kafka.rebuild.changelog.entries")).isEqualTo(300);
    assertThat(count(b.registry(), "dedup.kafka.rebuild.records")).isZero();
    assertThat(count(b.registry(), "dedup.kafka.rebuild.ids")).isEqualTo(300);
    assertThat(count(b.registry(), "dedup.kafka.duplicates")).isEqualTo(300);
  }

  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldDropTheRecordsAfterARewoundOffsetOnAMachineWithoutAJournalWithTheChangelog(AtomicityMode mode)
      throws Exception {
    String topic = name("changelog-rewind");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, mode, "A", true, ledger);
    machines.publish(topic, 0, 200);
    broker.awaitCommitted(group, topic, 200);
    awaitHandled(ledger, 200);
    machines.stop(a);

    // The operator moves the stopped group back to offset 50; the partition then goes to machine B (no journal).
    broker.rewind(group, topic, 1, 50);
    Running b = start(group, topic, mode, "B", true, ledger);
    broker.awaitCommitted(group, topic, 200);

    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(b.registry(), "dedup.kafka.rebuild.changelog.entries")).isEqualTo(200);
    assertThat(count(b.registry(), "dedup.kafka.rebuild.records")).isZero();
    assertThat(count(b.registry(), "dedup.kafka.duplicates")).isEqualTo(150);
  }

  /**
   * A machine whose journal of the partition is stale gets it back after a rewind below the journal's offset: the
   * records handled on the other machine since are in the changelog, so they are duplicates.
   */
  @Test
  void shouldDropTheRecordsHandledElsewhereAfterARewindBelowAStaleJournalsOffsetWithTheChangelog() throws Exception {
    String topic = name("changelog-stale-rewind");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, AtomicityMode.EFFECT_FIRST, "A", true, ledger);
    machines.publish(topic, 0, 100);
    broker.awaitCommitted(group, topic, 100);
    awaitHandled(ledger, 100);
    machines.stop(a);
    // Machine B handles 100..199; machine A's journal stops at offset 100.
    Running b = start(group, topic, AtomicityMode.EFFECT_FIRST, "B", true, ledger);
    machines.publish(topic, 100, 200);
    broker.awaitCommitted(group, topic, 200);
    awaitHandled(ledger, 200);
    machines.stop(b);

    // The stopped group is rewound to 50, below A's journal; the partition goes back to A.
    broker.rewind(group, topic, 1, 50);
    Running again = start(group, topic, AtomicityMode.EFFECT_FIRST, "A", true, ledger);
    broker.awaitCommitted(group, topic, 200);

    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(again.registry(), "dedup.kafka.rebuild.changelog.entries")).isGreaterThanOrEqualTo(100);
    assertThat(count(again.registry(), "dedup.kafka.duplicates")).isEqualTo(150);
  }

  /**
   * Without the changelog a machine without a journal rebuilds from the source topic up to the rewound committed
   * offset only: the records after it, handled before the rewind, are read again as new and applied again
   * (docs/kafka.md, "What happens on assignment").
   */
  @Test
  void shouldApplyAgainTheRecordsAfterARewoundOffsetOnAMachineWithoutAJournalWithoutTheChangelog() throws Exception {
    String topic = name("rewind-no-changelog");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, AtomicityMode.EFFECT_FIRST, "A", false, ledger);
    machines.publish(topic, 0, 200);
    broker.awaitCommitted(group, topic, 200);
    awaitHandled(ledger, 200);
    machines.stop(a);

    broker.rewind(group, topic, 1, 50);
    Running b = start(group, topic, AtomicityMode.EFFECT_FIRST, "B", false, ledger);
    broker.awaitCommitted(group, topic, 200);
    awaitHandled(ledger, 350);

    // The rebuild read offsets 0..49 (their ids are duplicates no more); ids 50..199 were applied a second time.
    assertThat(count(b.registry(), "dedup.kafka.rebuild.records")).isEqualTo(50);
    assertThat(ledger.creditedMoreThanOnce()).hasSize(150).containsKeys("id-50", "id-199")
        .doesNotContainKey("id-49");
    assertThat(count(b.registry(), "dedup.kafka.duplicates")).isZero();
  }

  /**
   * An operator rewind after the partition arrived on a machine (rebuilt there from the topic, then handled there):
   * the machine's journal holds the rebuilt ids with its own, so every rewound record is a duplicate.
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldDropEveryRewoundRecordAfterThePartitionArrivedOnAMachine(AtomicityMode mode) throws Exception {
    String topic = name("rewind-arrived");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, mode, "A", false, ledger);
    machines.publish(topic, 0, 100);
    broker.awaitCommitted(group, topic, 100);
    machines.stop(a);
    Running b = start(group, topic, mode, "B", false, ledger);
    machines.publish(topic, 100, 150);
    broker.awaitCommitted(group, topic, 150);
    awaitHandled(ledger, 150);
    machines.stop(b);

    broker.rewind(group, topic, 1, 0);
    Running again = start(group, topic, mode, "B", false, ledger);
    broker.awaitCommitted(group, topic, 150);

    assertThat(ledger.size()).isEqualTo(150);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(again.registry(), "dedup.kafka.duplicates")).isEqualTo(150);
    assertThat(count(again.registry(), "dedup.kafka.rebuild.records")).isZero();
  }

  @Test
  void shouldRefuseToSubscribeWhenTheChangelogTopicHasAnotherPartitionCount() throws Exception {
    String topic = name("changelog-mismatch");
    String group = name("g");
    broker.createTopic(topic, 2);
    String changelog = group + "-" + topic + "-dedup-changelog";
    broker.admin().createTopics(List.of(new NewTopic(changelog, 3, (short) 1))).all().get(30, TimeUnit.SECONDS);

    DedupKafkaConsumer<String, String> c = machines.consumer(group, "A", new KafkaTestSupport.Ledger())
        .mode(AtomicityMode.EFFECT_FIRST).changelog(true).build(machines.vertx())
        .identity(IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID))
        .handler(r -> Future.succeededFuture());
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
        () -> c.subscribe(topic).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS));
    assertThat(e.getCause()).isInstanceOf(IllegalStateException.class).hasMessage("the changelog topic " + changelog
        + " has 3 partitions but its source topic " + topic + " has 2; they must be equal (partition p of the"
        + " changelog holds the ids of source partition p): recreate the changelog topic with 2 partitions, or"
        + " switch the changelog off");
  }
}
