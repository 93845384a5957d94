package io.github.vertxdedup.benchmarks.window;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The window side-by-side with the contenders interleaved in one JVM, set against the machine's memory floor measured
 * in the same rounds: round after round, each contender runs the whole reference stream once on a fresh structure, in
 * turn, and then {@link MemoryFloor} measures the independent and the dependent random-load cost of a table the size
 * of our window's. On a shared machine whose load drifts, interleaving puts the same drift on every contender and on
 * the floor, so the ratios are steadier than those of separate JMH forks (which run one after the other); the
 * absolute figures are not better than JMH's. The first round is a warm-up and is not reported.
 *
 * <p>Times are the process's CPU time per event ({@link CpuTime}: the benchmark's thread and the garbage collector's),
 * wall time beside it: on a machine shared with other work, wall time also counts the time the scheduler gives to
 * other processes.
 *
 * <p>Run: {@code java <dedup.jvm.flags> -Xmx8g -XX:+UseParallelGC -cp benchmarks/target/benchmarks.jar
 * io.github.vertxdedup.benchmarks.window.WindowInterleaved [rounds] [contender keys...]} (default 6 rounds of
 * dedupWindow, dedupWindowBatch, dedupWindowBatchUpkeep, caffeine). {@code dedupWindowBatchUpkeep} also prints the
 * split of its CPU time between {@code checkBatch} and the {@code upkeep} between batches (by the wall time around
 * each call), and its batches' share is the measure of the batch path's floor target. Prints each round, the median
 * ns/event of each contender and its ratio to the first, and the floor ratios with their targets
 * ({@link WindowReport#floorTargets}).
 */
public final class WindowInterleaved {

  /** This round's ns per event of {@code dedupWindowBatchUpkeep}'s batches alone, their upkeep left out. */
  private static final String BATCH_PATH = "dedupWindowBatchUpkeep (checkBatch alone)";

  private WindowInterleaved() {}

  /**
   * @param args optional: the number of rounds (default 6, the first one a warm-up, at least 2), then contender keys
   * @throws IllegalArgumentException if rounds is below 2 or a key names no contender
   */
  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
    if (rounds < 2) {
      throw new IllegalArgumentException("rounds must be >= 2 (the first is a warm-up) but was " + rounds);
    }
    List<String> keys = args.length > 1 ? Arrays.asList(args).subList(1, args.length)
        : List.of("dedupWindow", "dedupWindowBatch", "dedupWindowBatchUpkeep", "caffeine");
    keys.forEach(Contender::ofKey);
    EventStream stream = EventStream.generate(Workload.SEED);
    Map<String, List<Double>> cpuNs = new LinkedHashMap<>();
    Map<String, List<Double>> wallNs = new LinkedHashMap<>();
    keys.forEach(k -> {
      cpuNs.put(k, new ArrayList<>());
      wallNs.put(k, new ArrayList<>());
    });
    List<WindowReport.FloorRound> floorRounds = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      long tableBytes = 0;
      Map<String, Double> thisRound = new LinkedHashMap<>();
      for (String key : keys) {
        System.gc();
        SimulatedClock clock = new SimulatedClock(EventStream.START_MS);
        DedupContender structure = Contender.ofKey(key).create(stream.workload(), clock);
        long c0 = CpuTime.nowNs();
        long t0 = System.nanoTime();
        long accepted = Contender.run(stream, structure, clock);
        double wall = (System.nanoTime() - t0) / (double) stream.size();
        double cpu = (CpuTime.nowNs() - c0) / (double) stream.size();
        if (accepted != stream.expectedAccepted()) {
          throw new IllegalStateException(key + " accepted " + accepted + ", expected " + stream.expectedAccepted());
        }
        if (structure instanceof DedupWindowContender ours) {
          tableBytes = Math.max(tableBytes, ours.tableBytes());
        }
        thisRound.put(key, cpu);
        if (round > 0) {
          cpuNs.get(key).add(cpu);
          wallNs.get(key).add(wall);
        }
        System.out.printf(Locale.ROOT, "round %d %-20s %7.1f ns/event CPU %7.1f wall%n", round, key, cpu, wall);
        if (structure instanceof DedupWindowContender ours && !Double.isNaN(ours.batchShare())) {
          // CPU time split by the wall time measured around each call: the share of checkBatch in both calls' time.
          System.out.printf(Locale.ROOT, "round %d %-20s %7.1f ns/event CPU in checkBatch, %.1f in upkeep%n", round,
              key, cpu * ours.batchShare(), cpu * (1 - ours.batchShare()));
          thisRound.put(BATCH_PATH, cpu * ours.batchShare());
        }
      }
      // Collect this round's structures before the floor allocates its own table.
      System.gc();
      if (tableBytes > 0) {
        MemoryFloor.Floor floor = MemoryFloor.measure(tableBytes);
        System.out.printf(Locale.ROOT, "round %d memory floor, %,d B table: independent %.1f ns, dependent %.1f ns%n",
            round, floor.tableBytes(), floor.independentNs(), floor.dependentNs());
        if (round > 0) {
          floorRounds.add(new WindowReport.FloorRound(thisRound.getOrDefault("dedupWindow", Double.NaN),
              thisRound.getOrDefault("dedupWindowBatch", Double.NaN), thisRound.getOrDefault("caffeine", Double.NaN),
              floor.independentNs(), floor.dependentNs(), thisRound.getOrDefault(BATCH_PATH, Double.NaN)));
        }
      }
    }
    double first = median(cpuNs.get(keys.get(0)));
    System.out.printf(Locale.ROOT, "%n%-20s %12s %12s %10s%n", "contender", "median CPU", "median wall",
        "vs " + keys.get(0));
    for (String key : keys) {
      double m = median(cpuNs.get(key));
      System.out.printf(Locale.ROOT, "%-20s %12.1f %12.1f %9.2fx%n", key, m, median(wallNs.get(key)), m / first);
    }
    if (!floorRounds.isEmpty()) {
      System.out.println();
      System.out.print(WindowReport.floorTargets(floorRounds));
    }
  }

  private static double median(List<Double> values) {
    return MemoryFloor.median(values.stream().mapToDouble(Double::doubleValue).toArray());
  }
}
