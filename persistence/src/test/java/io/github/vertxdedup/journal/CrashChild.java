package io.github.vertxdedup.journal;

import io.github.vertxdedup.journal.internal.CommittedOffsets;
import io.github.vertxdedup.journal.internal.Recovery;
import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * The process {@link JournalCrashTest} kills: started with the production classpath only (this module's classes,
 * Chronicle and its dependencies; no JUnit), it opens and replays the journal, then appends accepted ids and
 * offsets until it is killed, printing each one after its append returned, and writes a window snapshot every 200 ms
 * on another thread; it replays from the newest snapshot. Real time, one-second cycles.
 *
 * <p>Output: {@code ready run=R openMs=O firstAppendMs=F processMs=P recovered=N} (open and replay, open to first
 * append, JVM start to first append), then {@code ack FP;} and
 * {@code offset N;} lines (the {@code ;} tells a whole line from one cut by the kill).
 */
public final class CrashChild {

  /** The window the snapshots are written for (their owner key), and every accept's remember-for. */
  static final long WINDOW_MS = 600_000;

  private CrashChild() {
  }

  /**
   * Runs the child.
   *
   * @param args journal directory, run number
   * @throws Exception on any failure (the driver sees the exit code)
   */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    long run = Long.parseLong(args[1]);
    long jvmStartMs = java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
    // Load Chronicle's classes and native bindings before timing, on a throwaway journal: a cost of starting the
    // JVM (about a second, once per process), not of recovering this journal. Deleted before "ready", so the
    // kill that follows cannot leave it behind.
    Path warmUp = Files.createTempDirectory("journal-warm-up");
    try {
      try (Journal j = Journal.open(warmUp, new JournalOptions().setSyncPolicy(SyncPolicy.NONE))) {
        j.replay(new JournalVisitor() {
        });
        j.appendAccept(1, 0, 0, 0, 1);
      }
    } finally {
      deleteTree(warmUp);
    }

    CommittedOffsets offsets = new CommittedOffsets();
    long[] recovered = {0};
    long startNanos = System.nanoTime();
    JournalOptions options = new JournalOptions()
        .setRollCycle(Duration.ofSeconds(1))
        .setSyncPolicy(SyncPolicy.ASYNC)
        .setSyncInterval(Duration.ofMillis(50))
        // Long enough that any wait on the dead writer's leftovers would break the driver's 3 s guard.
        .setChronicleTimeout(Duration.ofSeconds(5))
        .setRollSnapshotSource(offsets::writeTo);
    Journal journal = Journal.open(dir, options);
    journal.replayFromSnapshot(WINDOW_MS, new JournalVisitor() {
      @Override
      public void onAccept(long fp, long key, long payload, long acceptedAtMs, long expiresAtMs) {
        recovered[0]++;
      }

      @Override
      public void onOffsetCommit(String topic, int partition, long offset) {
        offsets.record(topic, partition, offset);
      }
    });
    long openNanos = System.nanoTime() - startNanos; // open and replay

    // Window snapshots beside the appends, as a partition writes them, so that kills also hit a snapshot being
    // written and each restart loads one and replays the journal after it.
    Thread snapshots = new Thread(() -> {
      while (true) {
        LockSupport.parkNanos(200_000_000L);
        journal.writeSnapshot(WINDOW_MS, o -> Recovery.compaction(System.currentTimeMillis(), WINDOW_MS, o));
      }
    }, "snapshots");
    snapshots.setDaemon(true);
    snapshots.start();

    BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.US_ASCII), 1 << 16);
    AcceptBatch batch = new AcceptBatch(8);
    long seq = 0;
    long loops = 0;
    long offset = Math.max(0, offsets.get("orders", 0));
    boolean first = true;
    while (true) {
      long now = System.currentTimeMillis();
      if (seq % 5 == 4) {
        batch.clear();
        for (int i = 0; i < 4; i++) {
          batch.add((run << 32) | ++seq, 0, 0, now, now + WINDOW_MS);
        }
        journal.appendAccepts(batch);
        for (int i = 3; i >= 0; i--) {
          out.write("ack " + ((run << 32) | (seq - i)) + ";\n");
        }
      } else {
        long fp = (run << 32) | ++seq;
        journal.appendAccept(fp, 0, 0, now, now + WINDOW_MS);
        if (first) {
          first = false;
          long firstNanos = System.nanoTime() - startNanos;
          out.write("ready run=" + run + " openMs=" + openNanos / 1_000_000 + " firstAppendMs="
              + firstNanos / 1_000_000 + " processMs=" + (System.currentTimeMillis() - jvmStartMs)
              + " recovered=" + recovered[0] + "\n");
        }
        out.write("ack " + fp + ";\n");
      }
      if (loops % 50 == 49) {
        journal.appendOffsetCommit("orders", 0, ++offset);
        offsets.record("orders", 0, offset);
        out.write("offset " + offset + ";\n");
      }
      if (++loops % 10 == 0) {
        out.flush();
        LockSupport.parkNanos(1_000_000); // at most 10,000 ids per second: the journal stays small, replay short
      }
    }
  }

  /** Deletes {@code root} and everything under it, deepest first. */
  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }
}
