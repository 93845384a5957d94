package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaMachines.name;
import static io.github.vertxdedup.kafka.KafkaMachines.simulateWork;
import static io.github.vertxdedup.kafka.KafkaTestSupport.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.github.vertxdedup.kafka.KafkaMachines.Running;
import io.github.vertxdedup.testing.LogCapture;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Faults during a rebuild from the source topic, on the real in-process broker, with real faults: a record the new
 * machine's deserializer rejects is a topic that cannot be read (the partition is left unhandled, reported and
 * rebuilt again until it can be read); records without identity are skipped and counted; a revocation in the middle
 * of a long rebuild cancels it cleanly. Each "machine" is a consumer with a journal directory of its own.
 */
class DedupKafkaRebuildFaultsTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  @RegisterExtension
  final KafkaMachines machines = new KafkaMachines(broker, "test.kafka.faults");

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

  /** A consumer on one machine that takes dead letters and ignores the failures it reports. */
  private KafkaMachines.Start consumer(String group, String machine, KafkaTestSupport.Ledger ledger)
      throws Exception {
    return machines.consumer(group, machine, ledger).takeDeadLetters().exceptionHandler(e -> { });
  }

  private Running start(String group, String topic, String machine, KafkaTestSupport.Ledger ledger)
      throws Exception {
    return consumer(group, machine, ledger).subscribe(topic);
  }

  @Test
  void shouldLeaveAPartitionWhoseRecordsCannotBeReadUnhandledAndHandleItOnceTheyCan() throws Exception {
    leaveAnUnreadablePartitionUnhandledUntilItCanBeRead("faults-unreadable", false);
  }

  @Test
  void shouldLeaveAPartitionWhoseRecordsCannotBeReadUnhandledOnAWrappedConsumerToo() throws Exception {
    leaveAnUnreadablePartitionUnhandledUntilItCanBeRead("faults-unreadable-wrapped", true);
  }

  /**
   * Machine B's deserializer rejects a record in partition 0's window: that partition waits, unhandled, and is
   * rebuilt again every {@code backoffMaxMs}, reported once; partition 1 flows and the consumer ({@code create}'s, or
   * the wrapper if {@code wrapped}) keeps running; once the record is gone the partition flows too.
   */
  private void leaveAnUnreadablePartitionUnhandledUntilItCanBeRead(String prefix, boolean wrapped) throws Exception {
    String topic = name(prefix);
    String group = name("g");
    broker.createTopic(topic, 2);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, "A", ledger);
    for (int i = 0; i < 10; i++) {
      broker.send(topic, 0, "p-" + i, "v");
    }
    broker.send(topic, 0, "p-poison", "poison"); // offset 10: machine A reads it as text, machine B cannot read it
    for (int i = 10; i < 20; i++) {
      broker.send(topic, 0, "p-" + i, "v");
      broker.send(topic, 1, "q-" + i, "v");
    }
    broker.flush();
    broker.awaitCommitted(group, topic, 31);
    machines.stop(a);

    // Machine B's deserializer rejects the poison record, which lies in partition 0's window, before its committed
    // offset: the rebuild of partition 0 cannot read its topic, partition 1's can.
    Map<String, String> strict = broker.consumerConfig(group);
    strict.put("value.deserializer", RejectingDeserializer.class.getName());
    List<Throwable> reported = new CopyOnWriteArrayList<>();
    TopicPartition p0 = new TopicPartition(topic, 0);
    Running b = consumer(group, "B", ledger).wrapped(wrapped).config(strict).backoffMaxMs(200)
        .exceptionHandler(reported::add).subscribe(topic);
    await().atMost(Duration.ofSeconds(60)).until(() -> b.count("dedup.kafka.rebuild.failures", 0) >= 1);
    double failures = b.count("dedup.kafka.rebuild.failures", 0);
    broker.send(topic, 0, "later-0", "v");
    broker.send(topic, 1, "later-1", "v");
    broker.flush();
    // Partition 1 flows; partition 0 is rebuilt again (and fails again) at least twice, and its record waits.
    await().atMost(Duration.ofSeconds(60)).until(() -> ledger.credits.containsKey("later-1")
        && b.count("dedup.kafka.rebuild.failures", 0) >= failures + 2);
    assertThat(ledger.credits).doesNotContainKey("later-0");
    if (!wrapped) {
      assertThat(b.consumer().assignment()).hasSize(2);
    }
    assertThat(reported).as("one report per episode").singleElement()
        .satisfies(e -> assertThat(e.getMessage()).contains(p0.toString()));
    // Its health says so: partition 0 unhandled, its rebuild failed (or being tried again), partition 1 ready.
    Status unhandled = b.consumer().health();
    assertThat(unhandled.isOk()).isFalse();
    JsonObject partitions = unhandled.getData().getJsonObject("partitions");
    assertThat(partitions.getJsonObject(p0.toString()).getString("state")).isIn("REBUILD_FAILED", "REBUILDING");
    assertThat(partitions.getJsonObject(p0.toString()).getString("failure")).contains("failed to rebuild");
    assertThat(partitions.getJsonObject(topic + "-1").getString("state")).isEqualTo("READY");

    // The unreadable record goes (as retention would take it): the next attempt reads the rest, the partition flows.
    broker.admin().deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(11))).all().get(30, TimeUnit.SECONDS);
    broker.awaitCommitted(group, topic, 33);
    assertThat(ledger.credits).containsKeys("later-0", "later-1");
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    assertThat(reported).hasSize(1);
    assertThat(b.consumer().health().isOk()).as("healthy once partition 0 was rebuilt").isTrue();
  }

  @Test
  void shouldSkipAndCountRecordsWithoutIdentityDuringARebuild() throws Exception {
    String topic = name("faults-no-identity");
    String group = name("g");
    broker.createTopic(topic, 1);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    Running a = start(group, topic, "A", ledger);
    for (int i = 0; i < 10; i++) {
      broker.send(topic, 0, "id-" + i, "v");
    }
    for (int i = 0; i < 3; i++) {
      broker.send(topic, 0, null, "no id");
    }
    broker.send(topic, 0, "id-boom", "boom");
    broker.flush();
    broker.awaitCommitted(group, topic, 14);
    machines.stop(a);

    // On machine B the extractor throws for the value 'boom', and finds nothing in the records without a header.
    IdentityExtractor<String, String> header = IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID);
    IdentityExtractor<String, String> throwing = r -> {
      if ("boom".equals(r.value())) {
        throw new IllegalArgumentException("cannot parse 'boom'");
      }
      return header.identify(r);
    };
    Running b = consumer(group, "B", ledger).identity(throwing).subscribe(topic);
    broker.send(topic, 0, "id-3", "v"); // a re-publish: a duplicate
    broker.send(topic, 0, "id-10", "v");
    broker.flush();
    broker.awaitCommitted(group, topic, 16);
    assertThat(count(b.registry(), "dedup.kafka.rebuild.records")).isEqualTo(14);
    assertThat(count(b.registry(), "dedup.kafka.rebuild.no.identity")).isEqualTo(4);
    assertThat(count(b.registry(), "dedup.kafka.rebuild.ids")).isEqualTo(10);
    assertThat(count(b.registry(), "dedup.kafka.rebuild.failures")).isZero();
    assertThat(count(b.registry(), "dedup.kafka.duplicates")).isEqualTo(1);
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
    Running a = start(group, topic, "A", ledger);
    for (int i = 0; i < perPartition; i++) {
      broker.send(topic, 0, "p-" + i, "v");
      broker.send(topic, 1, "q-" + i, "v");
    }
    broker.flush();
    broker.awaitCommitted(group, topic, 2L * perPartition);
    machines.stop(a);

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
      b = consumer(group, "B", ledger).config(config).identity(slow).subscribe(topic);
      await().atMost(Duration.ofSeconds(60)).until(() -> count(b.registry(), "dedup.kafka.rebuild.records") >= 200);

      // Machine C joins mid-rebuild: the group moves a partition from B to C.
      c = start(group, topic, "C", ledger);
      await().atMost(Duration.ofSeconds(60)).until(() -> !c.consumer().assignment().isEmpty());
      TopicPartition moved = c.consumer().assignment().iterator().next();
      await().atMost(Duration.ofSeconds(60)).until(() -> handedBack(log, moved) >= 0);
      long identifiedAtHandBack = identified.getOrDefault(moved.toString(), new AtomicLong()).get();

      // Every id is re-published, and new ones follow: none is applied twice, whoever owns its partition now.
      for (int i = 0; i < perPartition; i++) {
        broker.send(topic, 0, "p-" + i, "v");
        broker.send(topic, 1, "q-" + i, "v");
      }
      broker.send(topic, 0, "p-new", "v");
      broker.send(topic, 1, "q-new", "v");
      broker.flush();
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
      assertThat(b.registry().find("dedup.kafka.rebuild.in.progress").longTaskTimers())
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
}
