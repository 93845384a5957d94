package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaChildren.stop;
import static io.github.vertxdedup.kafka.KafkaChildren.wholeLines;
import static org.assertj.core.api.Assertions.assertThat;

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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * kill -9 of a journaled dedup consumer mid-stream, on the production classpath, in both atomicity modes. The test
 * JVM runs the broker and a producer that publishes ids keyed by themselves (so copies share a partition), one in ten
 * a copy of an earlier id (producer-side duplicates). A {@link KafkaConsumerChild} consumes them and appends each
 * effect to a ledger; the driver kills it with SIGKILL ({@link Process#destroyForcibly()}) 0.2 to 1.2 s after it has
 * applied effects, restarts it on the same {@code journalDir} with the same {@code group.instance.id}, and after the
 * last kill lets a final child consume everything. Then it counts the ledger's lines per id:
 *
 * <ul>
 *   <li>{@link AtomicityMode#RECORD_FIRST}: no id's effect is applied twice; lost effects (ids recorded as accepted
 *       whose handler the kill cut off) are at most the decision runs awaiting their offset commits
 *       ({@code maxUnansweredOffsetCommits} runs of {@code maxBatch}) per partition per kill.
 *   <li>{@link AtomicityMode#EFFECT_FIRST}: no id is lost; repeats are at most the records in flight at each kill.
 *       A partition runs one handler at a time, and at most {@code maxUnansweredCommits} handled records wait for
 *       their commit's reply, so at most that plus one record per partition is between its effect and its commit:
 *       the bound is kills x partitions x (maxUnansweredCommits + 1).
 * </ul>
 *
 * <p>Kills: {@code -Dkafka.crash.cycles} (3 in CI). This test crosses a process boundary, so it uses real time.
 */
class KafkaCrashTest {

  private static final int PARTITIONS = 2;

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();

  @TempDir
  Path tmp;

  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldKeepItsModesPromiseAcrossKillMinus9(AtomicityMode mode) throws Exception {
    int cycles = Integer.getInteger("kafka.crash.cycles", 3);
    long seed = System.nanoTime();
    Random random = new Random(seed);
    String topic = "crash-" + mode.name().toLowerCase();
    String group = "crash-" + mode.name().toLowerCase();
    broker.createTopic(topic, PARTITIONS);
    Path journalDir = tmp.resolve("journal");
    Path ledger = tmp.resolve("ledger.txt");
    ChildJvm childJvm = childJvm();

    Producer producer = new Producer(broker, topic, random.nextLong(), "crash-producer");
    List<String> runs = new ArrayList<>();
    try {
      for (int run = 1; run <= cycles; run++) {
        long before = lines(ledger);
        long startNanos = System.nanoTime();
        Process child = start(childJvm, mode, topic, group, journalDir, ledger, run);
        try {
          // Wait until this child applies effects of its own, then kill it at a random moment.
          Awaitility.await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(20))
              .failFast(() -> !child.isAlive())
              .until(() -> lines(ledger) > before);
          long firstEffectMs = (System.nanoTime() - startNanos) / 1_000_000;
          Thread.sleep(200 + random.nextInt(1_000)); // the kill moment: real time across processes
          runs.add("start->first effect " + firstEffectMs + " ms");
        } finally {
          child.destroyForcibly();
          child.waitFor(30, TimeUnit.SECONDS);
        }
      }
    } finally {
      producer.stop();
    }
    int total = producer.sent.size();

    // The final child consumes everything: every record is done with once the group committed all offsets.
    Process last = start(childJvm, mode, topic, group, journalDir, ledger, cycles + 1);
    try {
      broker.awaitCommitted(group, topic, total);
    } finally {
      stop(last); // SIGTERM: the drain runs the handlers of the records whose offsets the child committed
    }

    Set<String> produced = new HashSet<>(producer.sent);
    Map<String, Integer> effects = ledgerCounts(ledger);
    int repeats = 0;
    for (int n : effects.values()) {
      repeats += n - 1;
    }
    Set<String> lost = new HashSet<>(produced);
    lost.removeAll(effects.keySet());
    String report = String.format("kafka crash test %s seed %d: %d kills, %d records (%d ids, %d producer-side"
            + " copies), %d effects applied, %d repeated, %d lost; %s", mode, seed, cycles, total, produced.size(),
        total - produced.size(), effects.values().stream().mapToInt(Integer::intValue).sum(), repeats, lost.size(),
        runs);
    System.out.println(report);

    assertThat(effects.keySet()).as("effects of ids never produced (%s)", report).isSubsetOf(produced);
    assertThat(total - produced.size()).as("producer-side duplicates were published").isPositive();
    if (mode == AtomicityMode.RECORD_FIRST) {
      assertThat(effects).as("ids whose effect was applied twice (%s)", report)
          .allSatisfy((id, n) -> assertThat(n).as(id).isEqualTo(1));
      assertThat(lost.size()).as("losses: at most the runs awaiting their commits (%d records) per partition at each"
          + " kill (%s)", KafkaConsumerChild.RECORD_FIRST_LOSS_BOUND, report)
          .isLessThanOrEqualTo(cycles * PARTITIONS * KafkaConsumerChild.RECORD_FIRST_LOSS_BOUND);
    } else {
      assertThat(lost).as("ids whose effect was lost (%s)", report).isEmpty();
      int perPartition = DedupKafkaOptions.DEFAULT_MAX_UNANSWERED_COMMITS + 1;
      assertThat(repeats).as("repeats: at most %d records in flight per partition at each kill (%s)", perPartition,
          report).isLessThanOrEqualTo(cycles * PARTITIONS * perPartition);
    }
  }

  /**
   * Effect-first, a child killed while a claim is open (its handler holds the record "stuck" and never completes):
   * the child restarted with the same {@code group.instance.id} releases its orphaned claim when it takes the
   * partition back and handles "stuck" at once, well inside the 60 s lease it would otherwise wait out.
   */
  @Test
  void shouldHandleTheRecordOfItsOwnOrphanedClaimWithoutWaitingOutTheLease() throws Exception {
    String topic = "orphan";
    String group = "orphan";
    long leaseMs = 60_000;
    broker.createTopic(topic, 1);
    Path journalDir = tmp.resolve("journal");
    Path ledger = tmp.resolve("ledger.txt");
    ChildJvm childJvm = childJvm();
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      ids.add("before-" + i);
    }
    ids.add("stuck");
    for (int i = 0; i < 5; i++) {
      ids.add("after-" + i);
    }
    for (String id : ids) {
      broker.send(topic, id, "v");
    }
    broker.flush();

    Process held = start(childJvm, AtomicityMode.EFFECT_FIRST, topic, group, journalDir, ledger, 1, leaseMs,
        "stuck");
    long claimedNanos;
    try {
      Path out = tmp.resolve("child-1.out");
      Awaitility.await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(20))
          .failFast(() -> !held.isAlive())
          .until(() -> Files.exists(out) && Files.readString(out).contains("holding stuck"));
      claimedNanos = System.nanoTime(); // the claim was journaled before the handler ran, so no later than now
    } finally {
      held.destroyForcibly();
      held.waitFor(30, TimeUnit.SECONDS);
    }
    assertThat(ledgerCounts(ledger)).as("the effects before the held record").containsOnlyKeys(ids.subList(0, 5));

    Process restarted = start(childJvm, AtomicityMode.EFFECT_FIRST, topic, group, journalDir, ledger, 2, leaseMs,
        null);
    long handledMs;
    try {
      Awaitility.await().atMost(Duration.ofSeconds(leaseMs / 1000 - 10)).pollInterval(Duration.ofMillis(20))
          .failFast(() -> !restarted.isAlive())
          .until(() -> ledgerCounts(ledger).containsKey("stuck"));
      handledMs = (System.nanoTime() - claimedNanos) / 1_000_000;
      broker.awaitCommitted(group, topic, ids.size());
    } finally {
      restarted.destroyForcibly();
      restarted.waitFor(30, TimeUnit.SECONDS);
    }
    System.out.println("kafka orphaned claim test: the record of the orphaned claim was handled " + handledMs
        + " ms after it was claimed (lease " + leaseMs + " ms)");
    assertThat(handledMs).as("handled long before the lease would have ended").isLessThan(leaseMs / 2);
    // The held record's claim, the claims decided with it in one claimBatch (the records after it), and perhaps the
    // one before it if the kill beat its commit's reply (a repeat that effect-first allows: handled, not committed).
    assertThat(Files.readString(tmp.resolve("child-2.err")))
        .as("the restarted child released the claims its previous run left open")
        .containsPattern("released ([2-9]|1[0-2]?) claims that orphan-child left open");
    Map<String, Integer> effects = ledgerCounts(ledger);
    assertThat(effects.keySet()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(effects.get("stuck")).isEqualTo(1);
    assertThat(effects.values().stream().mapToInt(n -> n - 1).sum()).as("repeats: %s", effects).isLessThanOrEqualTo(1);
  }

  private Process start(ChildJvm child, AtomicityMode mode, String topic, String group, Path journalDir,
      Path ledger, int run) throws IOException {
    return start(child, mode, topic, group, journalDir, ledger, run, 2_000, null);
  }

  private Process start(ChildJvm child, AtomicityMode mode, String topic, String group, Path journalDir,
      Path ledger, int run, long leaseMs, String holdId) throws IOException {
    List<String> args = new ArrayList<>(List.of(broker.bootstrapServers(), topic, group, group.equals("orphan")
        ? "orphan-child" : "crash-child", journalDir.toString(), mode.name(), ledger.toString(),
        Long.toString(leaseMs)));
    if (holdId != null) {
      args.add(holdId);
    }
    return child.command(List.of(), args)
        .redirectOutput(tmp.resolve("child-" + run + ".out").toFile())
        .redirectError(tmp.resolve("child-" + run + ".err").toFile())
        .start();
  }

  /** Whole lines in the ledger (a line cut by the kill has no newline and is not an effect). */
  private static long lines(Path ledger) throws IOException {
    return wholeLines(ledger).size();
  }

  private static Map<String, Integer> ledgerCounts(Path ledger) throws IOException {
    Map<String, Integer> counts = new HashMap<>();
    for (String line : wholeLines(ledger)) {
      counts.merge(line.substring(0, line.indexOf(' ')), 1, Integer::sum); // <id> <partition> <offset>
    }
    return counts;
  }

  /**
   * The child's production classpath ({@link ChildJvm}): this module's classes with the Kafka client and Chronicle
   * among its runtime dependencies.
   */
  private ChildJvm childJvm() throws IOException {
    ChildJvm child = ChildJvm.of(KafkaConsumerChild.class, tmp, ChildConsole.class);
    assertThat(child.classpath()).map(e -> Path.of(e).getFileName().toString())
        .anyMatch(name -> name.contains("kafka-clients"))
        .anyMatch(name -> name.contains("chronicle-queue"));
    return child;
  }
}
