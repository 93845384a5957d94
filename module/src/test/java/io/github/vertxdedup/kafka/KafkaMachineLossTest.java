package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaChildren.stop;
import static io.github.vertxdedup.kafka.KafkaChildren.wholeLines;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.kafka.KafkaChildren.Producer;
import io.github.vertxdedup.testing.ChildJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Two machines of one consumer group, each a {@link KafkaConsumerChild} JVM with a journal directory and a ledger of
 * its own, static membership and a 6 s session timeout; the test JVM runs the broker and publishes up to 300 records
 * a second on two partitions, one in ten a copy of an earlier id. One machine is lost mid-stream (SIGKILL), or stalls
 * past its session timeout and comes back (SIGSTOP, then SIGCONT: a zombie); the other takes its partition over,
 * rebuilding its window from the topic up to the group's committed offset. The effects are counted from both ledgers,
 * outside the processes:
 *
 * <ul>
 *   <li>{@link AtomicityMode#RECORD_FIRST}: no id is applied twice, across the loss and across the zombie; losses
 *       are at most the decision runs of the lost partition awaiting their offset commits.</li>
 *   <li>{@link AtomicityMode#EFFECT_FIRST}: no id is lost; the repeats are records of the lost partition at or after
 *       the offset the survivor started from, at most {@code maxUnansweredCommits + 1} plus what the lost machine
 *       settled within one {@code commitIntervalMs} and a commit's round trip (bounded here by the producer's
 *       rate).</li>
 * </ul>
 *
 * <p>This test crosses a process boundary, so it uses real time.
 */
class KafkaMachineLossTest {

  private static final int PARTITIONS = 2;
  /**
   * What a commit's round trip and the poll loop's turn add to {@code commitIntervalMs} in the effect-first bound. The
   * broker runs in this JVM and shares two cores with both machines: a commit can take most of a second to be
   * accepted there while the machines' own handlers keep settling records. The bound still fails a consumer that
   * commits only on revocation, or seconds late.
   */
  private static final long ROUND_TRIP_ALLOWANCE_MS = 1_000;
  private static final Pattern READING_FROM =
      Pattern.compile("(\\S+)-(\\d+): window .* reading from offset (\\d+) \\(committed in Kafka\\)");

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();

  @TempDir
  Path tmp;

  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldKeepItsModesPromiseWhenAMachineIsLost(AtomicityMode mode) throws Exception {
    String name = "loss-" + mode.name().toLowerCase();
    broker.createTopic(name, PARTITIONS);
    ChildJvm jvm = ChildJvm.of(KafkaConsumerChild.class, tmp, ChildConsole.class);
    Producer producer = new Producer(broker, name, new Random().nextLong(), "machine-loss-producer");
    Machine a = new Machine(jvm, "machine-a", mode, name);
    Machine b = new Machine(jvm, "machine-b", mode, name);
    long lossNanos;
    int lostPartition;
    try {
      int ownedByA = awaitSplitAndCaughtUp(name, producer, a, b);
      lostPartition = ownedByA;
      a.process.destroyForcibly();
      a.process.waitFor(30, TimeUnit.SECONDS);
      lossNanos = System.nanoTime();
      // The survivor takes the partition over once the lost member's session timed out, and handles its records.
      long before = b.linesOf(lostPartition);
      Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
          .failFast(() -> !b.process.isAlive())
          .until(() -> b.linesOf(lostPartition) > before + 100);
    } catch (Throwable t) {
      a.process.destroyForcibly();
      stop(b.process);
      throw t;
    } finally {
      producer.stop();
    }
    long takeoverMs = (System.nanoTime() - lossNanos) / 1_000_000;
    int total = producer.sent.size();
    try {
      broker.awaitCommitted(name, name, total);
    } finally {
      stop(b.process);
    }

    long survivorStart = b.lastReadingFrom(name, lostPartition);
    List<Line> lines = new ArrayList<>(a.lines());
    lines.addAll(b.lines());
    Map<String, Integer> effects = new HashMap<>();
    for (Line l : lines) {
      effects.merge(l.id, 1, Integer::sum);
    }
    Set<String> produced = new HashSet<>(producer.sent);
    Set<String> lost = new TreeSet<>(produced);
    lost.removeAll(effects.keySet());
    Set<String> repeatedIds = new TreeSet<>();
    effects.forEach((id, n) -> {
      if (n > 1) {
        repeatedIds.add(id);
      }
    });
    int repeats = effects.values().stream().mapToInt(n -> n - 1).sum();
    List<Line> repeatedLines = lines.stream().filter(l -> repeatedIds.contains(l.id)).toList();
    double ratePerSecond = producer.ratePerSecond();
    int bound = DedupKafkaOptions.DEFAULT_MAX_UNANSWERED_COMMITS + 1
        + (int) Math.ceil(ratePerSecond * (KafkaConsumerChild.COMMIT_INTERVAL_MS + ROUND_TRIP_ALLOWANCE_MS) / 1000.0);
    String report = String.format("kafka machine loss test %s: %d records (%d ids), machine-a lost with partition %d,"
            + " machine-b took it over from offset %d after %d ms; %d effects applied (a %d, b %d), %d repeated,"
            + " %d lost; producer %.0f records/s, effect-first bound %d", mode, total, produced.size(), lostPartition,
        survivorStart, takeoverMs, lines.size(), a.lines().size(), b.lines().size(), repeats, lost.size(),
        ratePerSecond, bound);
    System.out.println(report);

    assertThat(effects.keySet()).as("effects of ids never produced (%s)", report).isSubsetOf(produced);
    if (mode == AtomicityMode.RECORD_FIRST) {
      assertThat(repeatedLines).as("ids whose effect was applied twice (%s)", report).isEmpty();
      assertThat(lost.size()).as("losses: at most the runs of the lost partition awaiting their commits (%s)", report)
          .isLessThanOrEqualTo(KafkaConsumerChild.RECORD_FIRST_LOSS_BOUND);
    } else {
      assertThat(lost).as("ids whose effect was lost (%s)", report).isEmpty();
      assertThat(repeats).as("repeats within the bound (%s)", report).isLessThanOrEqualTo(bound);
      assertThat(repeatedLines).as("repeats are records of the lost partition from the survivor's start (%s)", report)
          .allSatisfy(l -> {
            assertThat(l.partition).isEqualTo(lostPartition);
            assertThat(l.offset).isGreaterThanOrEqualTo(survivorStart);
          });
    }
  }

  /**
   * Record-first, a zombie: machine-a stops (SIGSTOP) past its session timeout while records flow, machine-b takes its
   * partition over from the group's committed offset and handles its records; then machine-a resumes (SIGCONT) with
   * the records it had decided or fetched before it stopped. Its commits are refused (it is no longer in the group's
   * generation), so it handles none of the records machine-b handles: no id is applied twice.
   */
  @Test
  void shouldNotLetAStoppedOwnerThatResumesApplyWhatTheNextOwnerApplies() throws Exception {
    String name = "zombie";
    broker.createTopic(name, PARTITIONS);
    ChildJvm jvm = ChildJvm.of(KafkaConsumerChild.class, tmp, ChildConsole.class);
    Producer producer = new Producer(broker, name, new Random().nextLong(), "machine-loss-producer");
    Machine a = new Machine(jvm, "machine-a", AtomicityMode.RECORD_FIRST, name);
    Machine b = new Machine(jvm, "machine-b", AtomicityMode.RECORD_FIRST, name);
    int stalled;
    long aLinesAtStop;
    long aLinesAtResume;
    String aLog;
    try {
      try {
        stalled = awaitSplitAndCaughtUp(name, producer, a, b);
        signal(a.process, "STOP");
        // kill returns once the signal is sent; a thread inside a write finishes it before it stops. Count the
        // ledger only once every thread of the process has stopped.
        awaitStopped(a.process);
        aLinesAtStop = a.lines().size();
        long before = b.linesOf(stalled);
        Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
            .failFast(() -> !b.process.isAlive())
            .until(() -> b.linesOf(stalled) > before + 100);
        aLinesAtResume = a.lines().size();
        signal(a.process, "CONT");
        // The resumed machine learns it was out of the group: a refused commit, or its partitions reported lost.
        Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
            .failFast(() -> !a.process.isAlive())
            .until(() -> a.log().contains("offset commit refused") || a.log().contains("lost (another member"));
        aLog = a.log();
      } finally {
        producer.stop();
      }
      broker.awaitCommitted(name, name, producer.sent.size());
    } finally {
      if (a.process.isAlive()) {
        signal(a.process, "CONT"); // if the test failed while it was stopped
      }
      stop(a.process);
      stop(b.process);
    }

    List<Line> lines = new ArrayList<>(a.lines());
    lines.addAll(b.lines());
    Map<String, Integer> effects = new HashMap<>();
    for (Line l : lines) {
      effects.merge(l.id, 1, Integer::sum);
    }
    List<Line> repeated = lines.stream().filter(l -> effects.get(l.id) > 1).toList();
    Set<String> lost = new TreeSet<>(producer.sent);
    lost.removeAll(effects.keySet());
    boolean refused = aLog.contains("offset commit refused");
    String report = String.format("kafka zombie test: %d records, machine-a stopped on partition %d with %d effects,"
            + " %d while stopped, resumed: commit refused %s, partitions lost %s; %d effects applied (a %d, b %d),"
            + " %d repeated, %d lost", producer.sent.size(), stalled, aLinesAtStop, aLinesAtResume - aLinesAtStop,
        refused, aLog.contains("lost (another member"), lines.size(), a.lines().size(), b.lines().size(),
        repeated.size(), lost.size());
    System.out.println(report);
    assertThat(aLinesAtResume).as("a stopped machine applies nothing").isEqualTo(aLinesAtStop);
    assertThat(repeated).as("records applied by both the zombie and the next owner (%s)", report).isEmpty();
  }

  /**
   * Starts both machines and waits until each applies records of a partition of its own and the group has committed
   * nearly everything produced (the machines keep up with the producer).
   *
   * @return the partition machine-a owns
   */
  private int awaitSplitAndCaughtUp(String topic, Producer producer, Machine a, Machine b) throws IOException {
    Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
        .failFast(() -> !a.process.isAlive() || !b.process.isAlive())
        .until(() -> {
          Set<Integer> pa = a.partitionsSince(b.firstLine());
          Set<Integer> pb = b.partitionsSince(a.firstLine());
          return pa.size() == 1 && pb.size() == 1 && !pa.equals(pb)
              && broker.committed(topic, topic) >= producer.sent.size() - 150;
        });
    return a.partitionsSince(b.firstLine()).iterator().next();
  }

  private static void signal(Process p, String signal) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kill.exitValue()).as("kill -%s %d", signal, p.pid()).isZero();
  }

  /**
   * Waits until every thread of {@code p} is in the stopped state ({@code T} in {@code /proc/<pid>/task/<tid>/stat}),
   * so that nothing it does reaches its files any more.
   */
  private static void awaitStopped(Process p) {
    Path tasks = Path.of("/proc", Long.toString(p.pid()), "task");
    Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
        .failFast(() -> !p.isAlive())
        .until(() -> {
          try (var threads = Files.list(tasks)) {
            return threads.allMatch(KafkaMachineLossTest::threadStopped);
          }
        });
  }

  private static boolean threadStopped(Path task) {
    try {
      String stat = Files.readString(task.resolve("stat"));
      // The state follows the command name, which is in parentheses and may itself hold spaces.
      char state = stat.charAt(stat.lastIndexOf(')') + 2);
      return state == 'T' || state == 't';
    } catch (IOException exited) {
      return true; // a thread that ended in between does nothing either
    }
  }

  /** One effect: the id, where the record was consumed. */
  private record Line(String id, int partition, long offset) {
  }

  /** A child JVM, its ledger and its standard error. */
  private final class Machine {
    final Process process;
    final Path ledger;
    final Path err;

    Machine(ChildJvm jvm, String instanceId, AtomicityMode mode, String topic) throws IOException {
      ledger = tmp.resolve(instanceId + ".ledger");
      err = tmp.resolve(instanceId + ".err");
      Path journal = tmp.resolve(instanceId + "-journal");
      process = jvm.command(List.of(), List.of(broker.bootstrapServers(), topic, topic, instanceId,
              journal.toString(), mode.name(), ledger.toString()))
          .redirectOutput(tmp.resolve(instanceId + ".out").toFile())
          .redirectError(err.toFile())
          .start();
    }

    /** @return the whole lines of the ledger (a line cut by a kill has no newline and is not an effect) */
    List<Line> lines() throws IOException {
      List<Line> out = new ArrayList<>();
      for (String s : wholeLines(ledger)) {
        String[] f = s.split(" ");
        out.add(new Line(f[0], Integer.parseInt(f[1]), Long.parseLong(f[2])));
      }
      return out;
    }

    long linesOf(int partition) throws IOException {
      return lines().stream().filter(l -> l.partition == partition).count();
    }

    Line firstLine() throws IOException {
      List<Line> l = lines();
      return l.isEmpty() ? null : l.get(0);
    }

    /**
     * @return the partitions of the effects this machine applied in its last 50 effects, once the other machine has
     *     applied one ({@code other} not null); empty before
     */
    Set<Integer> partitionsSince(Line other) throws IOException {
      List<Line> l = lines();
      Set<Integer> out = new HashSet<>();
      if (other == null || l.size() < 50) {
        return out;
      }
      for (Line line : l.subList(l.size() - 50, l.size())) {
        out.add(line.partition);
      }
      return out;
    }

    String log() throws IOException {
      return Files.exists(err) ? Files.readString(err, StandardCharsets.UTF_8) : "";
    }

    /** @return the offset this machine last started reading {@code partition} from, by its window-ready log line */
    long lastReadingFrom(String topic, int partition) throws IOException {
      long from = -1;
      Matcher m = READING_FROM.matcher(log());
      while (m.find()) {
        if (m.group(1).endsWith(topic) && Integer.parseInt(m.group(2)) == partition) {
          from = Long.parseLong(m.group(3));
        }
      }
      assertThat(from).as("%s started reading partition %d from a committed offset", process, partition)
          .isNotNegative();
      return from;
    }
  }
}
