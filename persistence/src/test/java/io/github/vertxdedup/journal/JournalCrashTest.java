package io.github.vertxdedup.journal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
    List<String> classpath = productionClasspath();
    Set<Long> acked = new HashSet<>();
    long highestOffset = -1;
    List<String> restarts = new ArrayList<>();
    // The children's java.io.tmpdir, to check that they leave nothing there.
    Path childTmp = Files.createDirectories(tmp.resolve("child-tmp"));

    for (int run = 1; run <= cycles; run++) {
      Process child = start(classpath, dir, childTmp, run, tmp.resolve("child-" + run + ".err"));
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
    try (Journal j = Journal.open(dir, new JournalOptions().setRollCycle(java.time.Duration.ofSeconds(1)))) {
      j.replay(new JournalVisitor() {
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
    Set<Long> missing = new HashSet<>(acked);
    missing.removeAll(replayed);
    assertThat(missing).as("acknowledged ids missing after restart (seed %d)", seed).isEmpty();
    assertThat(duplicates[0]).as("ids journaled twice").isZero();
    assertThat(offsets.get("orders", 0)).isGreaterThanOrEqualTo(highestOffset);
  }

  private static Process start(List<String> classpath, Path dir, Path childTmp, int run, Path stderr)
      throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(Arrays.asList(System.getProperty("dedup.jvm.flags", "").trim().split("\\s+")));
    cmd.add("-Xmx256m");
    cmd.add("-Djava.io.tmpdir=" + childTmp);
    cmd.add("-cp");
    cmd.add(String.join(java.io.File.pathSeparator, classpath));
    cmd.add(CrashChild.class.getName());
    cmd.add(dir.toString());
    cmd.add(Integer.toString(run));
    cmd.removeIf(String::isEmpty);
    return new ProcessBuilder(cmd).redirectError(stderr.toFile()).start();
  }

  /**
   * This module's classes and its runtime dependencies (written by the build to a file), plus the child's own class
   * copied alone into a directory: no JUnit, no AssertJ, no other test class.
   */
  private List<String> productionClasspath() throws IOException {
    String classes = System.getProperty("journal.classes");
    String runtime = System.getProperty("journal.runtime.classpath");
    assertThat(classes).as("system property journal.classes (set by the build)").isNotNull();
    assertThat(runtime).as("system property journal.runtime.classpath (set by the build)").isNotNull();
    Path childDir = tmp.resolve("child-classes");
    String relative = CrashChild.class.getName().replace('.', '/');
    Path source = Path.of(CrashChild.class.getProtectionDomain().getCodeSource().getLocation().getPath());
    Path packageDir = source.resolve(relative).getParent();
    Files.createDirectories(childDir.resolve(relative).getParent());
    try (Stream<Path> files = Files.list(packageDir)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        String name = f.getFileName().toString();
        if (name.equals("CrashChild.class") || name.startsWith("CrashChild$")) {
          Files.copy(f, childDir.resolve(relative).getParent().resolve(name));
        }
      }
    }
    List<String> cp = new ArrayList<>();
    cp.add(classes);
    cp.addAll(Arrays.asList(Files.readString(Path.of(runtime)).trim().split(java.io.File.pathSeparator)));
    cp.add(childDir.toString());
    assertThat(cp).map(e -> Path.of(e).getFileName().toString())
        .noneMatch(name -> name.contains("junit") || name.contains("assertj") || name.equals("test-classes"));
    return cp;
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
