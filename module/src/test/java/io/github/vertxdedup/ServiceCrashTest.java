package io.github.vertxdedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.testing.ChildJvm;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of the whole service at random moments, on the production classpath: every id the driver saw answered
 * {@code ACCEPTED} is {@code DUPLICATE} after any number of restarts (within the ten-minute window: 20 cycles last
 * about a minute), and no id is answered {@code ACCEPTED} twice. Cycles: {@code -Dcrash.cycles} (5 in CI, 20 with
 * {@code -Pcrash}).
 *
 * <p>The driver feeds a {@link ServiceCrashChild} new ids and, now and then, ids it sent before (answered or not),
 * kills it with SIGKILL ({@link Process#destroyForcibly()}) 0.3 to 1.5 s after it answers, restarts it on the same
 * {@code journalDir}, and measures kill to first answer of the new JVM. A last child gets every accepted id again.
 * The child writes a window snapshot every 1,000 journaled entries or so, so kills also hit snapshots being written
 * and restarts load one and replay the journal after it.
 * This test crosses a process boundary, so it uses real time.
 */
class ServiceCrashTest {

  /** Twice the child's snapshot threshold per partition, over its two partitions, and some. */
  private static final int MIN_ACCEPTED_BEFORE_FIRST_KILL = 5_000;

  @TempDir
  Path tmp;

  @Test
  void shouldAnswerDuplicateForEveryAcceptedIdAfterKillMinus9AndNeverAcceptAnIdTwice() throws Exception {
    int cycles = Integer.getInteger("crash.cycles", 5);
    long seed = System.nanoTime();
    Random random = new Random(seed);
    Path journalDir = tmp.resolve("journal");
    ChildJvm childJvm = childJvm();
    Map<String, Integer> acceptedTimes = new ConcurrentHashMap<>();
    List<String> sent = new ArrayList<>();
    List<String> restarts = new ArrayList<>();
    long killedAtNanos = 0;

    for (int run = 1; run <= cycles; run++) {
      Path stderr = tmp.resolve("child-" + run + ".err");
      long startNanos = System.nanoTime();
      Process child = start(childJvm, journalDir, stderr);
      Child output = new Child(child, acceptedTimes);
      Feeder feeder = new Feeder(child, run, random.nextLong(), List.copyOf(sent));
      try {
        if (!output.firstAnswer.await(60, TimeUnit.SECONDS) || output.firstAnswerNanos == 0) {
          throw new AssertionError("child " + run + " never answered (seed " + seed + "): "
              + Files.readString(stderr));
        }
        if (run > 1) {
          restarts.add(String.format("kill->first answer %d ms (JVM start->ready %d ms, deploy %d ms)",
              (output.firstAnswerNanos - killedAtNanos) / 1_000_000, output.ready.get("processMs"),
              output.ready.get("deployMs")));
        } else {
          restarts.add(String.format("first start->first answer %d ms",
              (output.firstAnswerNanos - startNanos) / 1_000_000));
        }
        if (run == 1) {
          // Enough accepted ids before the first kill that each partition journals more than the snapshot
          // threshold (ServiceCrashChild) however slowly a loaded machine feeds it, so snapshots are written.
          Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
              .failFast(() -> !child.isAlive())
              .until(() -> acceptedTimes.size() >= MIN_ACCEPTED_BEFORE_FIRST_KILL);
        }
        Thread.sleep(300 + random.nextInt(1_200)); // the kill moment: real time across processes
      } finally {
        child.destroyForcibly();
        killedAtNanos = System.nanoTime();
        child.waitFor(30, TimeUnit.SECONDS);
      }
      feeder.join();
      output.join();
      sent.addAll(feeder.written);
      assertThat(output.errors).as("failed replies (seed %d)", seed).isEmpty();
    }

    // Last run: every id ever answered ACCEPTED, once more.
    List<String> accepted = new ArrayList<>(acceptedTimes.keySet());
    Map<String, Integer> finalAccepts = new ConcurrentHashMap<>();
    Path stderr = tmp.resolve("child-final.err");
    Process child = start(childJvm, journalDir, stderr);
    Child output = new Child(child, finalAccepts);
    try (BufferedWriter in = new BufferedWriter(new OutputStreamWriter(child.getOutputStream(),
        StandardCharsets.UTF_8))) {
      for (String id : accepted) {
        in.write(id);
        in.newLine();
      }
    }
    assertThat(child.waitFor(120, TimeUnit.SECONDS)).as("the final child ends").isTrue();
    output.join();
    restarts.add(String.format("kill->first answer %d ms (JVM start->ready %d ms)",
        (output.firstAnswerNanos - killedAtNanos) / 1_000_000, output.ready.get("processMs")));
    List<String> snapshots;
    try (java.util.stream.Stream<Path> files = Files.walk(journalDir)) {
      snapshots = files.map(p -> journalDir.relativize(p).toString()).filter(n -> n.endsWith(".snap")).toList();
    }
    System.out.println("service crash test seed " + seed + ", " + cycles + " kills, " + sent.size() + " ids sent, "
        + accepted.size() + " answered ACCEPTED; restarts: " + restarts + "; window snapshots left: " + snapshots);

    assertThat(output.done).as("the final child answered everything: %s", Files.readString(stderr)).isTrue();
    assertThat(accepted).as("seed %d", seed).isNotEmpty();
    assertThat(acceptedTimes).as("ids answered ACCEPTED more than once (seed %d)", seed)
        .allSatisfy((id, times) -> assertThat(times).as(id).isEqualTo(1));
    assertThat(finalAccepts).as("ids accepted before a kill and accepted again after it (seed %d)", seed).isEmpty();
    assertThat(output.verdicts).as("verdicts of the final run").hasSize(accepted.size());
    assertThat(output.verdicts.values()).containsOnly("DUPLICATE");
    assertThat(snapshots).as("the partitions wrote window snapshots (so restarts loaded them)").isNotEmpty();
  }

  private static Process start(ChildJvm child, Path journalDir, Path stderr) throws IOException {
    return child.command(List.of(), List.of(journalDir.toString())).redirectError(stderr.toFile()).start();
  }

  /**
   * The child's production classpath ({@link ChildJvm}): this module's classes with the persistence module and
   * Chronicle among its runtime dependencies.
   */
  private ChildJvm childJvm() throws IOException {
    ChildJvm child = ChildJvm.of(ServiceCrashChild.class, tmp);
    assertThat(child.classpath()).map(e -> Path.of(e).getFileName().toString())
        .anyMatch(name -> name.contains("vertx-dedup-persistence") || name.equals("classes"))
        .anyMatch(name -> name.contains("chronicle-queue"));
    return child;
  }

  /** Writes ids to the child until its pipe breaks (the kill): mostly new ones, every tenth one sent before. */
  private static final class Feeder {
    final List<String> written = new ArrayList<>();
    private final Thread thread;

    Feeder(Process child, int run, long seed, List<String> earlier) {
      Random random = new Random(seed);
      thread = new Thread(() -> {
        try (BufferedWriter in = new BufferedWriter(new OutputStreamWriter(child.getOutputStream(),
            StandardCharsets.UTF_8))) {
          for (long n = 0; ; n++) {
            String id = n % 10 == 9 && !earlier.isEmpty()
                ? earlier.get(random.nextInt(earlier.size()))
                : "run" + run + "-" + n;
            in.write(id);
            in.newLine();
            synchronized (written) {
              written.add(id);
            }
            if (n % 64 == 63) {
              in.flush();
            }
          }
        } catch (IOException e) {
          // the child was killed
        }
      }, "crash-feeder");
      thread.setDaemon(true);
      thread.start();
    }

    void join() throws InterruptedException {
      thread.join(30_000);
    }
  }

  /** Reads the child's output on its own thread, so the child never blocks on a full pipe. */
  private static final class Child {
    final CountDownLatch firstAnswer = new CountDownLatch(1);
    final Map<String, Long> ready = new HashMap<>();
    final Map<String, String> verdicts = new ConcurrentHashMap<>();
    final List<String> errors = new ArrayList<>();
    volatile long firstAnswerNanos;
    volatile boolean done;
    private final Thread thread;

    Child(Process child, Map<String, Integer> acceptedTimes) {
      thread = new Thread(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(),
            StandardCharsets.UTF_8))) {
          String line;
          while ((line = r.readLine()) != null) {
            if (line.startsWith("ready ")) {
              for (String part : line.substring(6).split(" ")) {
                int eq = part.indexOf('=');
                ready.put(part.substring(0, eq), Long.parseLong(part.substring(eq + 1)));
              }
            } else if (line.equals("done")) {
              done = true;
            } else if (line.endsWith(";")) {
              // A line cut by the kill (no ';') is an answer the driver never received.
              int space = line.lastIndexOf(' ');
              String id = line.substring(0, space);
              String verdict = line.substring(space + 1, line.length() - 1);
              if (firstAnswerNanos == 0) {
                firstAnswerNanos = System.nanoTime();
                firstAnswer.countDown();
              }
              verdicts.put(id, verdict);
              if (verdict.equals("ACCEPTED")) {
                acceptedTimes.merge(id, 1, Integer::sum);
              } else if (verdict.startsWith("ERR")) {
                errors.add(line);
              }
            }
          }
        } catch (IOException e) {
          // the child died
        } finally {
          firstAnswer.countDown();
        }
      }, "crash-child-output");
      thread.setDaemon(true);
      thread.start();
    }

    void join() throws InterruptedException {
      thread.join(30_000);
    }
  }
}
