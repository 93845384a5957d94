package io.github.vertxdedup.benchmarks.window;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The window side-by-side with the contenders interleaved in one JVM: round after round, each contender runs the whole
 * reference stream once on a fresh structure, in turn. On a shared machine whose load drifts, interleaving puts the
 * same drift on every contender, so the ratios are steadier than those of separate JMH forks (which run one after the
 * other); the absolute figures are not better than JMH's. The first round is a warm-up and is not reported.
 *
 * <p>Run: {@code java <dedup.jvm.flags> -Xmx8g -XX:+UseParallelGC -cp benchmarks/target/benchmarks.jar
 * io.github.vertxdedup.benchmarks.window.WindowInterleaved [rounds] [contender keys...]} (default 5 rounds of
 * dedupWindow, dedupWindowBatch, directDesign). Prints the median ns/event of each and its ratio to our window.
 */
public final class WindowInterleaved {

  private WindowInterleaved() {}

  /**
   * @param args optional: the number of rounds (default 5, the first one a warm-up), then contender keys
   */
  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    List<String> keys = args.length > 1 ? Arrays.asList(args).subList(1, args.length)
        : List.of("dedupWindow", "dedupWindowBatch", "directDesign");
    EventStream stream = EventStream.generate(Workload.SEED);
    Map<String, List<Double>> nsPerEvent = new LinkedHashMap<>();
    keys.forEach(k -> nsPerEvent.put(k, new ArrayList<>()));
    for (int round = 0; round < rounds; round++) {
      for (String key : keys) {
        System.gc();
        SimulatedClock clock = new SimulatedClock(EventStream.START_MS);
        DedupContender structure = Contender.ofKey(key).create(stream.workload(), clock);
        long t0 = System.nanoTime();
        long accepted = Contender.run(stream, structure, clock);
        double ns = (System.nanoTime() - t0) / (double) stream.size();
        if (accepted != stream.expectedAccepted()) {
          throw new IllegalStateException(key + " accepted " + accepted + ", expected " + stream.expectedAccepted());
        }
        if (round > 0) {
          nsPerEvent.get(key).add(ns);
        }
        System.out.printf(Locale.ROOT, "round %d %-20s %7.1f ns/event%n", round, key, ns);
      }
    }
    double ours = median(nsPerEvent.get(keys.get(0)));
    System.out.printf(Locale.ROOT, "%n%-20s %10s %10s%n", "contender", "median ns", "vs " + keys.get(0));
    for (Map.Entry<String, List<Double>> e : nsPerEvent.entrySet()) {
      double m = median(e.getValue());
      System.out.printf(Locale.ROOT, "%-20s %10.1f %9.2fx%n", e.getKey(), m, m / ours);
    }
  }

  private static double median(List<Double> values) {
    double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return v.length == 0 ? Double.NaN : v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }
}
