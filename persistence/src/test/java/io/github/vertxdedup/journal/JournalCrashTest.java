package io.github.vertxdedup.journal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.journal.internal.CommittedOffsets;
import io.github.vertxdedup.testing.ChildJvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 at random moments, on the production classpath: every id whose append returned before the kill is
 * replayed after the restart, and the restart appends at once (Chronicle's lock of the dead writer does not make
 * it wait). Cycles: {@code -Dcrash.cycles} (5 in CI, 20 with {@code -Pcrash}).
 *
 * <p>This test crosses a process boundary, so it uses real time; the child writes with one-second roll cycles so
 * kills also land around rolls.
 */
class JournalCrashTest {

  private static final long HANG_GUARD_MS = 3_000;

  @TempDir
  Path tmp;

  @Test
  void shouldReplayEveryAcknowledgedIdAfterKillMinus9AndAppendAtOnce() throws Exception {
    int cycles = Integer.getInteger("crash.cycles", 5);
    long seed = System.nanoTime();
    Random random = new Random(seed);
    Path dir = tmp.resolve("journal");
    ChildJvm childJvm = ChildJvm.of(CrashChild.class, tmp);
    Set<Long> acked = new HashSet<>();
    long highestOffset = -1;
    List<String> restarts = new ArrayList<>();
    // The children's java.io.tmpdir, to check that they leave nothing there.
    Path childTmp = Files.createDirectories(tmp.resolve("child-tmp"));

    for (int run = 1; run <= cycles; run++) {
      Process child = start(childJvm, dir, childTmp, run, tmp.resolve("child-" + run + ".err"));
      ChildOutput output = new ChildOutput(child);
      try {
        String ready = output.awaitReady(60, TimeUnit.SECONDS);
        if (ready == null) {
          throw new AssertionError("child " + run + " did not start (seed " + seed + "): "
              + Files.readString(tmp.resolve("child-" + run + ".err")));
        }
        Map<String, Long> figures = parseReady(ready);
        restarts.add(ready);
        if (run > 1) {
          assertThat(figures.get("firstAppendMs"))
              .as("open to first append after kill -9 (run %d, seed %d); child log:%n%s", run, seed,
                  Files.readString(tmp.resolve("child-" + run + ".err")))
              .isLessThan(HANG_GUARD_MS);
          assertThat(figures.get("recovered")).isGreaterThanOrEqualTo(acked.size());
        }
        if (run == 1) {
          assertThatThrownBy(() -> Journal.open(dir, new JournalOptions()))
              .isInstanceOf(JournalLockedException.class)
              .hasMessageContaining("pid=" + child.pid());
        }
        Thread.sleep(50 + random.nextInt(950)); // the kill moment: real time across processes
      } finally {
        child.destroyForcibly();
        child.waitFor(30, TimeUnit.SECONDS);
      }
      output.join();
      try (Stream<Path> left = Files.list(childTmp)) {
        assertThat(left.map(p -> p.getFileName().toString()))
            .as("temporary files child %d left behind", run).noneMatch(n -> n.startsWith("journal-warm-up"));
      }
      acked.addAll(output.acked);
      highestOffset = Math.max(highestOffset, output.highestOffset.get());
    }

    Set<Long> replayed = new HashSet<>();
    long[] duplicates = {0};
    CommittedOffsets offsets = new CommittedOffsets();
    ReplayResult result;
    try (Journal j = Journal.open(dir, new JournalOptions().setRollCycle(java.time.Duration.ofSeconds(1)))) {
      result = j.replayFromSnapshot(CrashChild.WINDOW_MS, new JournalVisitor() {
        @Override
        public void onAccept(long fp, long key, long payload, long acceptedAtMs, long expiresAtMs) {
          if (!replayed.add(fp)) {
            duplicates[0]++;
          }
        }

        @Override
        public void onOffsetCommit(String topic, int partition, long offset) {
          offsets.record(topic, partition, offset);
        }
      });
    }
    System.out.println("crash test seed " + seed + ", " + cycles + " kills, " + acked.size() + " ids acknowledged, "
        + replayed.size() + " replayed; restarts: " + restarts);
    assertThat(acked).as("seed %d", seed).isNotEmpty();
    assertThat(result.snapshotIndex()).as("the children wrote window snapshots, and the replay started from one")
        .isNotEqualTo(Journal.NO_INDEX);
    Set<Long> missing = new HashSet<>(acked);
    missing.removeAll(replayed);
    assertThat(missing).as("acknowledged ids missing after restart (seed %d)", seed).isEmpty();
    assertThat(duplicates[0]).as("ids journaled twice").isZero();
    assertThat(offsets.get("orders", 0)).isGreaterThanOrEqualTo(highestOffset);
  }

  private static Process start(ChildJvm child, Path dir, Path childTmp, int run, Path stderr) throws IOException {
    return child.command(List.of("-Djava.io.tmpdir=" + childTmp), List.of(dir.toString(), Integer.toString(run)))
        .redirectError(stderr.toFile()).start();
  }

  private static Map<String, Long> parseReady(String line) {
    Map<String, Long> m = new HashMap<>();
    for (String part : line.split(" ")) {
      int eq = part.indexOf('=');
      if (eq > 0) {
        m.put(part.substring(0, eq), Long.parseLong(part.substring(eq + 1)));
      }
    }
    return m;
  }

  /** Reads the child's stdout on its own thread, so the child never blocks on a full pipe. */
  private static final class ChildOutput {
    final Set<Long> acked = new HashSet<>();
    final AtomicLong highestOffset = new AtomicLong(-1);
    private final CountDownLatch ready = new CountDownLatch(1);
    private volatile String readyLine;
    private final Thread thread;

    ChildOutput(Process child) {
      thread = new Thread(() -> {
        try (BufferedReader r = new BufferedReader(
            new InputStreamReader(child.getInputStream(), StandardCharsets.US_ASCII))) {
          String line;
          while ((line = r.readLine()) != null) {
            // A line cut by the kill (no ';') is not an acknowledgement the driver received.
            if (line.startsWith("ack ") && line.endsWith(";")) {
              acked.add(Long.parseLong(line.substring(4, line.length() - 1)));
            } else if (line.startsWith("offset ") && line.endsWith(";")) {
              highestOffset.accumulateAndGet(Long.parseLong(line.substring(7, line.length() - 1)), Math::max);
            } else if (line.startsWith("ready ")) {
              readyLine = line;
              ready.countDown();
            }
          }
        } catch (IOException e) {
          // the child died
        } finally {
          ready.countDown();
        }
      }, "crash-child-output");
      thread.setDaemon(true);
      thread.start();
    }

    String awaitReady(long timeout, TimeUnit unit) throws InterruptedException {
      ready.await(timeout, unit);
      return readyLine;
    }

    void join() throws InterruptedException {
      thread.join(30_000);
    }
  }
}
