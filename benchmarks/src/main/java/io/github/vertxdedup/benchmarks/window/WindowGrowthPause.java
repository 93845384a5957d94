package io.github.vertxdedup.benchmarks.window;

import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.window.WindowVerdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * The pauses a window's growth puts on its owner's thread, with the doublings made there (no growth executor) and
 * built by a worker thread ({@link DedupWindow.Builder#growthExecutor}), alternated in one JVM: each round fills an
 * unsized window (64 slots at the start) with {@value #IDS} new ids (the table ends at 2^23 slots), one
 * {@code check} each, at a paced rate (the owner parks between chunks of {@value #CHUNK} ids, as an event loop waits
 * for its next requests) or flat out, with an {@code upkeep} every {@value #UPKEEP_PERIOD_MS} ms of the pace (a
 * partition's upkeep timer for buckets of 1 s) or, flat out, every {@value #CHUNK} x 64 ids; and it times every call
 * on the owner's thread; with the worker, also an {@code upkeep} at the first chunk after it has built a doubling (a
 * partition runs one as soon as its worker is done). Nothing expires (W one hour, the clock still). The first round of each mode is a warm-up and
 * is not reported.
 *
 * <p>Prints, per round and mode: the longest call (the owner's longest pause; a doubling on the owner is one call), the
 * 99.99th percentile of the calls' times, the owner's busy time per id (checks and upkeeps), the table's final size.
 * The timer around each call costs the same in both modes.
 *
 * <p>Run: {@code java <dedup.jvm.flags> -Xmx8g -cp benchmarks/target/benchmarks.jar
 * io.github.vertxdedup.benchmarks.window.WindowGrowthPause [rounds] [ids per second]} (default 4 rounds, the first
 * a warm-up, at 500,000 ids per second; 0 for flat out).
 */
public final class WindowGrowthPause {

  static final int IDS = 6_000_000;
  static final int CHUNK = 1_024;
  static final long UPKEEP_PERIOD_MS = 250;

  private WindowGrowthPause() {}

  /**
   * @param args optional: the number of rounds per mode (default 4, the first a warm-up, at least 2)
   * @throws InterruptedException if interrupted while the worker stops
   */
  public static void main(String[] args) throws InterruptedException {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 4;
    if (rounds < 2) {
      throw new IllegalArgumentException("rounds must be >= 2 (the first is a warm-up) but was " + rounds);
    }
    long rate = args.length > 1 ? Long.parseLong(args[1]) : 500_000;
    if (rate < 0) {
      throw new IllegalArgumentException("ids per second must be >= 0 but was " + rate);
    }
    System.out.printf(Locale.ROOT, "%d ids per round, %s%n", IDS,
        rate == 0 ? "flat out" : rate + " ids per second, upkeep every " + UPKEEP_PERIOD_MS + " ms");
    long[] ids = new long[IDS];
    SplittableRandom random = new SplittableRandom(42);
    for (int i = 0; i < IDS; i++) {
      ids[i] = random.nextLong() | 1;
    }
    ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "growth-worker");
      t.setDaemon(true);
      return t;
    });
    List<double[]> owner = new ArrayList<>();
    List<double[]> beside = new ArrayList<>();
    try {
      for (int round = 0; round < rounds; round++) {
        for (boolean withWorker : new boolean[] {false, true}) {
          double[] r = fill(ids, withWorker ? worker : null, rate);
          System.out.printf(Locale.ROOT, "round %d %-7s longest %8.2f ms  p99.99 %8.1f us  %6.1f ns/id  slots %d%n",
              round, withWorker ? "worker" : "owner", r[0] / 1e6, r[1] / 1e3, r[2], (long) r[3]);
          if (round > 0) {
            (withWorker ? beside : owner).add(r);
          }
        }
      }
    } finally {
      worker.shutdown();
      worker.awaitTermination(10, TimeUnit.SECONDS);
    }
    System.out.printf(Locale.ROOT, "median over %d rounds: longest call owner %.2f ms, worker %.2f ms (%.3fx); "
        + "p99.99 owner %.1f us, worker %.1f us; ns/id owner %.1f, worker %.1f (%.2fx)%n", rounds - 1,
        median(owner, 0) / 1e6, median(beside, 0) / 1e6, median(beside, 0) / median(owner, 0),
        median(owner, 1) / 1e3, median(beside, 1) / 1e3, median(owner, 2), median(beside, 2),
        median(beside, 2) / median(owner, 2));
  }

  /** @return longest call ns, 99.99th percentile call ns, owner ns per id, final table slots */
  private static double[] fill(long[] ids, ExecutorService worker, long rate) {
    // As a partition does, an upkeep installs a doubling as soon as the worker has built it (at the next chunk here).
    AtomicBoolean built = new AtomicBoolean();
    DedupWindow window = DedupWindow.builder()
        .window(Duration.ofHours(1))
        .bucket(Duration.ofMinutes(1))
        .clock(() -> 0L)
        .growthExecutor(worker == null ? null : task -> worker.execute(() -> {
          try {
            task.run();
          } finally {
            built.set(true);
          }
        }))
        .build();
    // Paced: an upkeep per period, so at most one per chunk at any rate up to CHUNK ids per period.
    long[] calls = new long[ids.length + ids.length / CHUNK + 1];
    int n = 0;
    long total = 0;
    final long start = System.nanoTime();
    final long periodNs = TimeUnit.MILLISECONDS.toNanos(UPKEEP_PERIOD_MS);
    long nextUpkeepNs = start + periodNs;
    for (int i = 0; i < ids.length; i++) {
      if (i % CHUNK == 0 && i > 0) {
        boolean upkeepDue;
        if (rate == 0) {
          upkeepDue = i % (CHUNK * 64) == 0;
        } else {
          long due = start + (long) (i * 1e9 / rate);
          for (long now = System.nanoTime(); now < due; now = System.nanoTime()) {
            LockSupport.parkNanos(due - now);
          }
          upkeepDue = System.nanoTime() >= nextUpkeepNs;
          if (built.getAndSet(false)) {
          upkeepDue = true;
        }
        if (upkeepDue) {
            nextUpkeepNs += periodNs;
          }
        }
        if (built.getAndSet(false)) {
          upkeepDue = true;
        }
        if (upkeepDue) {
          long t2 = System.nanoTime();
          window.upkeep(1 << 16);
          long t3 = System.nanoTime();
          calls[n++] = t3 - t2;
          total += t3 - t2;
        }
      }
      long t0 = System.nanoTime();
      WindowVerdict v = window.check(ids[i]);
      long t1 = System.nanoTime();
      if (v != WindowVerdict.ACCEPTED) {
        throw new IllegalStateException("id " + i + " answered " + v);
      }
      calls[n++] = t1 - t0;
      total += t1 - t0;
    }
    long[] sorted = Arrays.copyOf(calls, n);
    Arrays.sort(sorted);
    return new double[] {sorted[n - 1], sorted[(int) Math.min(n - 1, Math.ceil(n * 0.9999) - 1)],
        (double) total / ids.length, window.stats().tableSlots()};
  }

  private static double median(List<double[]> rounds, int field) {
    double[] v = rounds.stream().mapToDouble(r -> r[field]).sorted().toArray();
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }
}
