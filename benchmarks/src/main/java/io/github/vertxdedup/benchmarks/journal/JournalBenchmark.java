package io.github.vertxdedup.benchmarks.journal;

import io.github.vertxdedup.examples.tools.Processes;
import io.github.vertxdedup.journal.AcceptBatch;
import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.JournalOptions;
import io.github.vertxdedup.journal.JournalVisitor;
import io.github.vertxdedup.journal.ReplayResult;
import io.github.vertxdedup.journal.SyncPolicy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.io.FileUtils;

/**
 * Measures the journal: append cost per accepted id under each sync policy, and recovery (replay) rate and time.
 * A harness with a {@code main()}, not JMH: the figures that matter here are throughput over millions of appends,
 * the cost of {@code fsync} shared by group commit, and a replay in a fresh JVM, none of which fit a
 * microbenchmark's per-call loop. See {@code docs/benchmarks-journal.md} for the command and the figures.
 *
 * <pre>
 *   append [dir]                          append cost per id: NONE, ASYNC, SYNC (group commit); single and batched;
 *                                         with -Dbench.results=file, also a JSON results file for JournalReport
 *   build  dir ids idsPerRecord           writes a journal of {@code ids} live accepts
 *   replay dir                            opens and replays it (run in a fresh JVM: the restart figure)
 * </pre>
 */
public final class JournalBenchmark {

  private static final int WARM_UP_IDS = 1_000_000;
  private static final int MEASURED_IDS = 5_000_000;
  private static final int BATCH = 64;
  private static final long REMEMBER_MS = 3_600_000;

  private JournalBenchmark() {
  }

  /**
   * Runs one mode.
   *
   * @param args see the class comment
   * @throws Exception on any failure
   */
  public static void main(String[] args) throws Exception {
    Locale.setDefault(Locale.ROOT);
    String mode = args.length == 0 ? "append" : args[0];
    switch (mode) {
      case "append":
        append(args.length > 1 ? Path.of(args[1]) : Files.createTempDirectory("journal-bench"));
        break;
      case "build":
        build(Path.of(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        break;
      case "replay":
        replay(Path.of(args[1]));
        break;
      default:
        throw new IllegalArgumentException("mode must be append, build or replay but was " + mode);
    }
  }

  private static JournalOptions options(SyncPolicy policy) {
    return new JournalOptions().setSyncPolicy(policy).setProgressListener((dir, p, done) -> { });
  }

  /** The rows of the append run, in order, for the results file. */
  private static final List<JournalAppendResults.Row> ROWS = new ArrayList<>();

  private static void append(Path base) throws Exception {
    String date = Instant.now().toString();
    double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    System.out.printf("load average %.2f%n", load);
    System.out.printf("append cost per accepted id (%,d ids after %,d warm-up; journal in %s)%n", MEASURED_IDS,
        WARM_UP_IDS, base);
    System.out.printf("%-34s %12s %14s %s%n", "policy / form", "ns per id", "ids per s", "notes");
    for (SyncPolicy policy : new SyncPolicy[] {SyncPolicy.NONE, SyncPolicy.ASYNC}) {
      for (int perRecord : new int[] {1, BATCH}) {
        Path dir = base.resolve(policy + "-" + perRecord);
        try (Journal j = Journal.open(dir, options(policy))) {
          j.replay(new JournalVisitor() { });
          appendIds(j, WARM_UP_IDS, perRecord, 1);
          long start = System.nanoTime();
          appendIds(j, MEASURED_IDS, perRecord, WARM_UP_IDS + 1);
          long nanos = System.nanoTime() - start;
          print(policy + (policy == SyncPolicy.ASYNC ? " (default)" : ""), perRecord, nanos, MEASURED_IDS,
              policy == SyncPolicy.ASYNC ? "background fsync every 1 s; " + j.syncFailures() + " failures" : "");
        }
        deleteRecursively(dir);
      }
    }
    for (int perRecord : new int[] {1, BATCH}) {
      Path dir = base.resolve("SYNC-" + perRecord);
      try (Journal j = Journal.open(dir, options(SyncPolicy.SYNC))) {
        j.replay(new JournalVisitor() { });
        appendIds(j, WARM_UP_IDS, perRecord, 1);
        j.sync();
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong syncs = new AtomicLong();
        AtomicLong syncNanos = new AtomicLong();
        Thread syncer = new Thread(() -> {
          while (running.get()) {
            long s = System.nanoTime();
            long before = j.syncedIndex();
            long after = j.sync();
            if (after != before) {
              syncs.incrementAndGet();
              syncNanos.addAndGet(System.nanoTime() - s);
            }
          }
        }, "group-commit");
        syncer.start();
        long start = System.nanoTime();
        appendIds(j, MEASURED_IDS, perRecord, WARM_UP_IDS + 1);
        long nanos = System.nanoTime() - start;
        running.set(false);
        syncer.join();
        long n = Math.max(1, syncs.get());
        print("SYNC, group commit", perRecord, nanos, MEASURED_IDS, String.format(
            "%,d fsyncs, %,.0f ids per fsync, %.0f us per fsync (the wait before an answer)", syncs.get(),
            (double) MEASURED_IDS / n, syncNanos.get() / 1e3 / n));
      }
      deleteRecursively(dir);
    }
    for (int perRecord : new int[] {1, BATCH}) {
      Path dir = base.resolve("SYNC-each-" + perRecord);
      int ids = 20_000;
      try (Journal j = Journal.open(dir, options(SyncPolicy.SYNC))) {
        j.replay(new JournalVisitor() { });
        appendIds(j, 2_000, perRecord, 1);
        long start = System.nanoTime();
        long fp = 2_001;
        for (int done = 0; done < ids; done += perRecord) {
          appendIds(j, perRecord, perRecord, fp);
          fp += perRecord;
          j.sync();
        }
        long nanos = System.nanoTime() - start;
        print("SYNC, one fsync per record", perRecord, nanos, ids, "no group commit: the cost SYNC must hide");
      }
      deleteRecursively(dir);
    }
    String results = System.getProperty("bench.results");
    if (results != null) {
      new JournalAppendResults(date, load, List.copyOf(ROWS)).write(Path.of(results));
      System.out.println("wrote " + results);
    }
  }

  private static void print(String policy, int perRecord, long nanos, long ids, String notes) {
    ROWS.add(new JournalAppendResults.Row(policy, perRecord, (double) nanos / ids, ids * 1e9 / nanos, notes));
    System.out.printf("%-34s %12.1f %,14.0f %s%n", policy + (perRecord == 1 ? ", 1 id/record" : ", " + perRecord
        + " ids/record"), (double) nanos / ids, ids * 1e9 / nanos, notes);
  }

  private static final AcceptBatch BATCH_BUFFER = new AcceptBatch(BATCH);

  /** Appends {@code ids} accepts with fingerprints from {@code firstFingerprint}, {@code perRecord} per record. */
  private static void appendIds(Journal j, int ids, int perRecord, long firstFingerprint) {
    long now = System.currentTimeMillis();
    long fp = firstFingerprint;
    if (perRecord == 1) {
      for (int i = 0; i < ids; i++) {
        if ((i & 1023) == 0) {
          now = System.currentTimeMillis();
        }
        j.appendAccept(fp++, 0, 0, now, now + REMEMBER_MS);
      }
      return;
    }
    AcceptBatch b = BATCH_BUFFER;
    for (int done = 0; done < ids; ) {
      now = System.currentTimeMillis();
      b.clear();
      int n = Math.min(perRecord, ids - done);
      for (int k = 0; k < n; k++) {
        b.add(fp++, 0, 0, now, now + REMEMBER_MS);
      }
      j.appendAccepts(b);
      done += n;
    }
  }

  private static void build(Path dir, int ids, int perRecord) throws IOException {
    deleteRecursively(dir);
    long start = System.nanoTime();
    try (Journal j = Journal.open(dir, options(SyncPolicy.NONE))) {
      j.replay(new JournalVisitor() { });
      appendIds(j, ids, Math.min(perRecord, AcceptBatch.MAX_SIZE), 1);
    }
    System.out.printf("built %s: %,d ids, %d per record, in %d ms; %s on disk%n", dir, ids, perRecord,
        (System.nanoTime() - start) / 1_000_000, diskUsage(dir));
  }

  private static void replay(Path dir) {
    for (int round = 1; round <= 3; round++) {
      long start = System.nanoTime();
      long[] sum = {0};
      ReplayResult r;
      long openNanos;
      try (Journal j = Journal.open(dir, options(SyncPolicy.NONE))) {
        openNanos = System.nanoTime() - start;
        r = j.replay(new JournalVisitor() {
          @Override
          public void onAccept(long fp, long key, long payload, long acceptedAtMs, long expiresAtMs) {
            sum[0] += fp ^ expiresAtMs;
          }
        });
      }
      long total = System.nanoTime() - start;
      System.out.printf("replay %d%s: %,d ids from %,d records; open %.0f ms, replay %.0f ms, open + replay %.0f ms;"
          + " %,.0f ids/s (checksum %d)%n", round, round == 1 ? " (first in this JVM: the restart figure)" : "",
          r.accepts(), r.recordsRead(), openNanos / 1e6, r.elapsed().toNanos() / 1e6, total / 1e6,
          r.accepts() * 1e9 / r.elapsed().toNanos(), sum[0]);
    }
  }

  private static String diskUsage(Path dir) {
    try {
      return String.format("%,d KiB (du)", Processes.duKib(dir));
    } catch (IOException | InterruptedException | NumberFormatException e) {
      return "unknown";
    }
  }

  private static void deleteRecursively(Path dir) {
    try {
      FileUtils.deleteDirectory(dir.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

}
