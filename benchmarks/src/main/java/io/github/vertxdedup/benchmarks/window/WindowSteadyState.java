package io.github.vertxdedup.benchmarks.window;

import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.window.WindowStats;
import io.github.vertxdedup.window.WindowVerdict;
import java.time.Duration;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The window's cost per event once it is full: as many ids expire as arrive, so every accepted id is also swept out
 * of the table once. The seed workload ({@link WindowInterleaved}) spends its first window filling the table, with
 * nothing to delete; this harness runs the same rate, window and bucket ({@link Workload#SEED}: 100,000 events/s,
 * W 60 s, b 1 s, 10 % redeliveries of an id accepted within the last 5 s) for as long as asked, and reports only the
 * windows after the first two (the fill, then the first window of expiries).
 *
 * <p>Events go through {@link DedupWindow#checkBatch} in batches of {@link Contender#POLL_BATCH}, each followed by
 * {@link DedupWindow#upkeep} of all the sweep work owed, as a partition's timer runs it between polls. Each window
 * prints the wall time per event inside {@code checkBatch} and inside {@code upkeep} (the upkeep is nearly all the
 * sweep: visiting the table's expiry words and deleting the dead entries), and the process's CPU time per event
 * beside them ({@link CpuTime}). Ids are random 64-bit values; the table is not presized. Single-threaded.
 *
 * <p>Run: {@code java <dedup.jvm.flags> -Xmx4g -XX:+UseParallelGC -cp benchmarks/target/benchmarks.jar
 * io.github.vertxdedup.benchmarks.window.WindowSteadyState [windows]} (default 4 measured windows, after 2 not
 * measured). Only the window's public API is used, so the same class can time another build of the window put ahead
 * of this jar on the class path, side by side with this one.
 */
public final class WindowSteadyState {

  private static final long EVENT_NS = 1_000_000_000L / Workload.SEED.eventsPerSecond();
  private static final int UNMEASURED_WINDOWS = 2;

  private WindowSteadyState() {}

  /**
   * @param args optional: the number of measured windows, {@code >= 1} (default 4)
   * @throws IllegalArgumentException if the number of windows is below 1
   */
  public static void main(String[] args) {
    int measured = args.length > 0 ? Integer.parseInt(args[0]) : 4;
    if (measured < 1) {
      throw new IllegalArgumentException("windows must be >= 1 but was " + measured);
    }
    Workload workload = Workload.SEED;
    SimulatedClock clock = new SimulatedClock(EventStream.START_MS);
    DedupWindow window = DedupWindow.builder()
        .window(Duration.ofMillis(workload.windowMs()))
        .bucket(Duration.ofMillis(workload.bucketMs()))
        .clock(clock)
        .build();
    long eventsPerWindow = workload.windowMs() * workload.eventsPerSecond() / 1_000;
    SplittableRandom random = new SplittableRandom(workload.seed());
    long[] batch = new long[Contender.POLL_BATCH];
    WindowVerdict[] verdicts = new WindowVerdict[Contender.POLL_BATCH];
    // Redeliveries repeat one of the ids accepted within the workload's redelivery span.
    long[] recent = new long[(int) (workload.redeliverySpanMs() * workload.eventsPerSecond()
        * (1 - workload.redeliveryShare()) / 1_000)];
    long recentCount = 0;
    long nowNs = EventStream.START_MS * 1_000_000L;
    System.out.printf(Locale.ROOT, "%-6s %12s %12s %12s %12s %12s%n", "window", "checkBatch", "upkeep", "CPU",
        "ids held", "table slots");
    for (int w = 0; w < UNMEASURED_WINDOWS + measured; w++) {
      long batchNs = 0;
      long upkeepNs = 0;
      long cpu0 = CpuTime.nowNs();
      for (long e = 0; e < eventsPerWindow; e += batch.length) {
        for (int i = 0; i < batch.length; i++) {
          boolean redelivery = recentCount > 0 && random.nextDouble() < workload.redeliveryShare();
          batch[i] = redelivery ? recent[random.nextInt((int) Math.min(recentCount, recent.length))]
              : random.nextLong();
          nowNs += EVENT_NS;
        }
        clock.setMs(nowNs / 1_000_000L);
        long t0 = System.nanoTime();
        window.checkBatch(batch, 0, batch.length, verdicts);
        long t1 = System.nanoTime();
        window.upkeep(Long.MAX_VALUE);
        long t2 = System.nanoTime();
        batchNs += t1 - t0;
        upkeepNs += t2 - t1;
        for (int i = 0; i < batch.length; i++) {
          if (verdicts[i] == WindowVerdict.ACCEPTED) {
            recent[(int) (recentCount++ % recent.length)] = batch[i];
          }
        }
      }
      double cpu = (CpuTime.nowNs() - cpu0) / (double) eventsPerWindow;
      WindowStats stats = window.stats();
      System.out.printf(Locale.ROOT, "%-6s %9.1f ns %9.1f ns %9.1f ns %,12d %,12d%n",
          w < UNMEASURED_WINDOWS ? w + " (not measured)" : Integer.toString(w),
          batchNs / (double) eventsPerWindow, upkeepNs / (double) eventsPerWindow, cpu, window.held(),
          stats.tableSlots());
    }
  }
}
