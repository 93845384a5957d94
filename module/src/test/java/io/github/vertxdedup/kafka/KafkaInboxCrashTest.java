package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaChildren.stop;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.inbox.DedupInbox;
import io.github.vertxdedup.inbox.PostgresTestSupport;
import io.github.vertxdedup.kafka.KafkaChildren.Producer;
import io.github.vertxdedup.testing.ChildJvm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of an {@link AtomicityMode#INBOX} consumer mid-stream, on the production classpath, against a real broker
 * and a real PostgreSQL server. A producer publishes ids keyed by themselves, one in ten a copy of an earlier id; a
 * {@link KafkaInboxConsumerChild} (no journal: each restart rebuilds its window from the inbox rows) writes each
 * effect as a ledger row in the inbox's transaction; the driver kills it with SIGKILL 0.2 to 1.2 s after it applied
 * effects of its own and restarts it, then lets a last child consume everything. The ledger, which has no unique key,
 * must then hold every produced id exactly once: 0 missing, 0 twice, however the kills fell between the transaction's
 * commit and the offset's. A second case kills a child while its COMMIT is held in the server, so that the next
 * child's rebuilt window cannot know the id and the inbox's unique key decides the copy.
 *
 * <p>Kills: {@code -Dkafka.crash.cycles} (3 in the default build, 10 with {@code -Pcrash}). This test crosses a process
 * boundary, so it uses real time.
 */
class KafkaInboxCrashTest {

  private static final int PARTITIONS = 2;

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  @RegisterExtension
  static final PostgresTestSupport db = new PostgresTestSupport();

  @TempDir
  Path tmp;

  @Test
  void shouldApplyEveryEventExactlyOnceAcrossKillMinus9() throws Exception {
    int cycles = Integer.getInteger("kafka.crash.cycles", 3);
    long seed = System.nanoTime();
    Random random = new Random(seed);
    String topic = "inbox-crash";
    String group = "inbox-crash";
    broker.createTopic(topic, PARTITIONS);
    db.server().psql(DedupInbox.ddl("inbox_crash") + "; CREATE TABLE ledger_crash (event_id text NOT NULL,"
        + " kafka_partition integer NOT NULL, kafka_offset bigint NOT NULL)");
    ChildJvm childJvm = ChildJvm.of(KafkaInboxConsumerChild.class, tmp, ChildConsole.class);
    assertThat(childJvm.classpath()).map(e -> Path.of(e).getFileName().toString())
        .anyMatch(name -> name.contains("vertx-pg-client"));

    Producer producer = new Producer(broker, topic, random.nextLong(), "inbox-crash-producer");
    List<String> runs = new ArrayList<>();
    try {
      for (int run = 1; run <= cycles; run++) {
        long before = ledgerRows();
        long startNanos = System.nanoTime();
        Process child = start(childJvm, topic, group, run);
        try {
          Awaitility.await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(20))
              .failFast(() -> !child.isAlive())
              .until(() -> ledgerRows() > before);
          runs.add("start->first effect " + (System.nanoTime() - startNanos) / 1_000_000 + " ms");
          Thread.sleep(200 + random.nextInt(1_000)); // the kill moment: real time across processes
        } finally {
          child.destroyForcibly();
          child.waitFor(30, TimeUnit.SECONDS);
        }
      }
    } finally {
      producer.stop();
    }
    int total = producer.sent.size();

    Process last = start(childJvm, topic, group, cycles + 1);
    try {
      broker.awaitCommitted(group, topic, total);
    } finally {
      stop(last);
    }

    Set<String> produced = new HashSet<>(producer.sent);
    Map<String, Integer> effects = new HashMap<>();
    for (String line : db.server().psql("SELECT event_id, count(*) FROM ledger_crash GROUP BY event_id").trim()
        .split("\n")) {
      String[] f = line.split("\\|");
      effects.put(f[0], Integer.parseInt(f[1]));
    }
    Set<String> missing = new HashSet<>(produced);
    missing.removeAll(effects.keySet());
    long twice = effects.values().stream().filter(n -> n > 1).count();
    String report = String.format("inbox crash test seed %d: %d kills, %d records (%d ids, %d producer-side copies),"
        + " %d ledger rows, %d missing, %d applied more than once; %s", seed, cycles, total, produced.size(),
        total - produced.size(), ledgerRows(), missing.size(), twice, runs);
    System.out.println(report);
    assertThat(total - produced.size()).as("producer-side duplicates were published").isPositive();
    assertThat(effects.keySet()).as("effects of ids never produced (%s)", report).isSubsetOf(produced);
    assertThat(missing).as("missing (%s)", report).isEmpty();
    assertThat(twice).as("applied twice (%s)", report).isZero();
    assertThat(Files.readString(tmp.resolve("child-" + (cycles + 1) + ".out"))).doesNotContain("dead-letter");
  }

  /**
   * A consumer killed while its transaction's COMMIT is under way, and a next owner whose window cannot know the id:
   * a deferred trigger on the ledger holds the commit of {@code t-5} in the server until the test opens a gate, the
   * child that sent it is killed meanwhile, and the next child (the same static member) rebuilds its window from the
   * inbox rows, which do not show the uncommitted row yet. It reads {@code t-5} again (its offset was never
   * committed), and its inbox insert waits on the killed child's row; the test checks that it waits while the row is
   * still uncommitted, then opens the gate: the killed child's transaction commits in the server, and the unique key,
   * not the window, makes the next child's copy a duplicate. The ledger holds every id once.
   */
  @Test
  void shouldLetTheUniqueKeyDecideACopyWhoseKilledOwnerCommitsAfterTheNextOwnersRebuild() throws Exception {
    String topic = "inbox-takeover";
    String group = "inbox-takeover";
    broker.createTopic(topic, 1);
    db.server().psql(DedupInbox.ddl("inbox_takeover") + "; CREATE TABLE ledger_takeover (event_id text NOT NULL,"
        + " kafka_partition integer NOT NULL, kafka_offset bigint NOT NULL); CREATE TABLE gate_takeover (open int);"
        + " CREATE FUNCTION hold_takeover() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        + "   IF NEW.event_id = 't-5' THEN"
        + "     FOR i IN 1..1200 LOOP" // at most 60 s
        + "       EXIT WHEN EXISTS (SELECT 1 FROM gate_takeover);"
        + "       PERFORM pg_sleep(0.05);"
        + "     END LOOP;"
        + "   END IF;"
        + "   RETURN NULL;"
        + " END $$; CREATE CONSTRAINT TRIGGER hold_takeover AFTER INSERT ON ledger_takeover DEFERRABLE INITIALLY"
        + " DEFERRED FOR EACH ROW EXECUTE FUNCTION hold_takeover()");
    for (int i = 0; i < 10; i++) {
      broker.send(topic, "t-" + i, "1");
    }
    broker.flush();
    ChildJvm childJvm = ChildJvm.of(KafkaInboxConsumerChild.class, tmp, ChildConsole.class);

    Process first = start(childJvm, topic, group, "takeover-1", "inbox_takeover", "ledger_takeover");
    try {
      // t-5's COMMIT is in the server, held by the trigger: kill the child that sent it.
      Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
          .failFast(() -> !first.isAlive())
          .until(() -> !db.server().psql("SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'").isBlank());
    } finally {
      first.destroyForcibly();
      first.waitFor(30, TimeUnit.SECONDS);
    }
    Process next = start(childJvm, topic, group, "takeover-2", "inbox_takeover", "ledger_takeover");
    try {
      // The next owner's insert of t-5 waits on the killed owner's row, which its rebuild could not read.
      Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
          .failFast(() -> !next.isAlive())
          .until(() -> !db.server().psql("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
              + " AND query LIKE 'INSERT INTO inbox_takeover%'").isBlank());
      assertThat(db.server().psql("SELECT count(*) FROM inbox_takeover WHERE event_id = 't-5'").trim())
          .as("t-5's inbox row, committed").isEqualTo("0");
      db.server().psql("INSERT INTO gate_takeover VALUES (1)");
      broker.awaitCommitted(group, topic, 10);
    } finally {
      stop(next);
    }
    Map<String, Integer> effects = new HashMap<>();
    for (String line : db.server().psql("SELECT event_id, count(*) FROM ledger_takeover GROUP BY event_id").trim()
        .split("\n")) {
      String[] f = line.split("\\|");
      effects.put(f[0], Integer.parseInt(f[1]));
    }
    assertThat(effects).hasSize(10).allSatisfy((id, rows) -> assertThat(rows).as(id).isEqualTo(1));
    assertThat(Files.readString(tmp.resolve("child-takeover-2.out"))).doesNotContain("dead-letter");
  }

  private long ledgerRows() {
    return Long.parseLong(db.server().psql("SELECT count(*) FROM ledger_crash").trim());
  }

  private Process start(ChildJvm child, String topic, String group, int run) throws IOException {
    return start(child, topic, group, Integer.toString(run), "inbox_crash", "ledger_crash");
  }

  private Process start(ChildJvm child, String topic, String group, String run, String table, String ledger)
      throws IOException {
    return child.command(List.of(), List.of(broker.bootstrapServers(), topic, group, group + "-child",
            db.server().host(), Integer.toString(db.server().port()), table, ledger))
        .redirectOutput(tmp.resolve("child-" + run + ".out").toFile())
        .redirectError(tmp.resolve("child-" + run + ".err").toFile())
        .start();
  }
}
