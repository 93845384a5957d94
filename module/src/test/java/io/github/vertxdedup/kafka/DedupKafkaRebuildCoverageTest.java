package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaMachines.WINDOW_MS;
import static io.github.vertxdedup.kafka.KafkaMachines.name;
import static io.github.vertxdedup.kafka.KafkaTestSupport.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.github.vertxdedup.kafka.KafkaMachines.Running;
import io.github.vertxdedup.testing.LogCapture;
import io.micrometer.core.instrument.Gauge;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

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
  @RegisterExtension
  final KafkaMachines machines = new KafkaMachines(broker, "test.kafka.coverage");
  private static final long MINUTE_MS = 60_000;
  private static final long WINDOW_MINUTES = WINDOW_MS / MINUTE_MS;

  /** A consumer on one machine, taking records its window does not cover to the dead-letter handler. */
  private Running start(String group, String topic, String machine, KafkaTestSupport.Ledger ledger)
      throws Exception {
    return start(group, topic, machine, false, ledger);
  }

  /** The same, with the changelog topic on or off. */
  private Running start(String group, String topic, String machine, boolean changelog,
      KafkaTestSupport.Ledger ledger) throws Exception {
    return machines.consumer(group, machine, ledger).uncoveredRecords(UncoveredRecordPolicy.DEAD_LETTER)
        .changelog(changelog).takeDeadLetters().subscribe(topic);
  }

  /** Sends {@code id} to {@code topic} (one partition), stamped {@code timestampMs}, keyed and headed by the id. */
  private static void sendAt(String topic, String id, long timestampMs) {
    broker.sendAt(topic, id, "v", timestampMs);
  }

  /** @return the coverage start the consumer's rebuild of partition 0 set, epoch ms, or NaN */
  private static double coverageStart(Running r) {
    Gauge g = r.registry().find("dedup.kafka.coverage.start").tag("partition", "0").gauge();
    return g == null ? Double.NaN : g.value();
  }

  @Test
  void shouldCoverFromTheRebuildsStartAndKeepItAcrossARestartOnTheNewMachine() throws Exception {
    String topic = name("cover-move");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    long startedMs = System.currentTimeMillis();
    Running a = start(group, topic, "A", ledger);
    for (int i = 0; i < 100; i++) {
      sendAt(topic, "id-" + i, startedMs - 3 * MINUTE_MS);
    }
    broker.flush();
    broker.awaitCommitted(group, topic, 100);
    machines.stop(a);

    // Machine B rebuilds the window from the topic; a record stamped two minutes ago arrives late. The topic gave B
    // every id of the last W, so B covers it: it is handled, not taken as uncovered.
    Running b = start(group, topic, "B", ledger);
    sendAt(topic, "late-1", System.currentTimeMillis() - 2 * MINUTE_MS);
    sendAt(topic, "id-7", startedMs - 3 * MINUTE_MS); // a re-publish: a duplicate
    broker.flush();
    broker.awaitCommitted(group, topic, 102);
    assertThat(b.deadLetters()).as("dead letters").isEmpty();
    assertThat(ledger.credits).containsKey("late-1");
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(b.registry(), "dedup.kafka.duplicates")).isEqualTo(1);
    assertThat(coverageStart(b)).isBetween((double) startedMs - WINDOW_MINUTES * MINUTE_MS - MINUTE_MS,
        (double) System.currentTimeMillis() - WINDOW_MINUTES * MINUTE_MS);

    // Restarted on B, nothing is left to rebuild; the coverage came back from B's journal.
    machines.stop(b);
    Running again = start(group, topic, "B", ledger);
    sendAt(topic, "late-2", System.currentTimeMillis() - 2 * MINUTE_MS);
    broker.flush();
    broker.awaitCommitted(group, topic, 103);
    assertThat(count(again.registry(), "dedup.kafka.rebuild.records")).isZero();
    assertThat(again.deadLetters()).as("dead letters").isEmpty();
    assertThat(ledger.credits).containsKey("late-2");
  }

  @Test
  void shouldCoverFromTheCutoffAfterAMoveThroughTheChangelog() throws Exception {
    String topic = name("cover-changelog");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    long startedMs = System.currentTimeMillis();
    Running a = start(group, topic, "A", true, ledger);
    for (int i = 0; i < 100; i++) {
      sendAt(topic, "id-" + i, startedMs - 3 * MINUTE_MS);
    }
    broker.flush();
    broker.awaitCommitted(group, topic, 100);
    machines.stop(a);

    // Machine B restores the window from the changelog alone (it covers every committed offset), so no rebuild from
    // the source topic sets the coverage: the changelog's rebuild does, and a late record inside W is handled.
    Running b = start(group, topic, "B", true, ledger);
    sendAt(topic, "late-1", System.currentTimeMillis() - 2 * MINUTE_MS);
    sendAt(topic, "id-7", startedMs - 3 * MINUTE_MS); // a re-publish: a duplicate
    broker.flush();
    broker.awaitCommitted(group, topic, 102);
    assertThat(count(b.registry(), "dedup.kafka.rebuild.changelog.entries")).isEqualTo(100);
    assertThat(count(b.registry(), "dedup.kafka.rebuild.records")).isZero();
    assertThat(b.deadLetters()).as("dead letters").isEmpty();
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
    Running a = start(group, topic, "A", ledger);
    for (int i = 0; i < 100; i++) {
      sendAt(topic, "id-" + i, olderMs);
    }
    for (int i = 100; i < 200; i++) {
      sendAt(topic, "id-" + i, newerMs);
    }
    broker.flush();
    broker.awaitCommitted(group, topic, 200);
    machines.stop(a);
    // The first 100 records, all inside the window, are removed from the topic; machine B has no journal of them.
    TopicPartition tp = new TopicPartition(topic, 0);
    broker.admin().deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(100))).all().get(30, TimeUnit.SECONDS);

    Running b;
    try (LogCapture log = LogCapture.of("io.github.vertxdedup", Level.WARN)) {
      b = start(group, topic, "B", ledger);
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
    broker.flush();
    broker.awaitCommitted(group, topic, 204);
    assertThat(b.deadLetters()).extracting(d -> d.record().key()).containsExactlyInAnyOrder("id-50", "new-1");
    assertThat(b.deadLetters()).allSatisfy(d -> assertThat(d.reason()).isEqualTo(DeadLetter.Reason.UNCOVERED));
    assertThat(ledger.credits).containsKey("new-2");
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(count(b.registry(), "dedup.kafka.duplicates")).isEqualTo(1);
  }
}
