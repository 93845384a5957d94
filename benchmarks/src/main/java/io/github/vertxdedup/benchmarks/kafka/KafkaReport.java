package io.github.vertxdedup.benchmarks.kafka;

import io.github.vertxdedup.benchmarks.report.MarkdownTable;
import io.github.vertxdedup.benchmarks.report.Plots;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.jfree.chart.JFreeChart;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * Turns {@link KafkaConsumerThroughput}'s results file into the figures of {@code docs/benchmarks-kafka.md}: a
 * Markdown table of records per second per round and scenario, the ratios of the dedup consumer to the plain
 * consumer and to Kafka Streams within each round (never across rounds: the machine's load drifts), where the
 * targets land, the CPU per record by thread kind, each dedup mode's wall-time and consumer-CPU ratios to the plain
 * consumer per round and their median and range over rounds 2..n (round 1 is warm-up), and a PNG plot. Files written
 * before the harness stored CPU figures read with those figures absent ("-").
 *
 * <p>Usage: {@code KafkaReport <results.json> <plot.png>}.
 */
public final class KafkaReport {

  /** Target: the dedup consumer's throughput over the plain Vert.x consumer's (issue 5). */
  static final double TARGET_VS_PLAIN = 0.9;
  /** Target: the dedup consumer's throughput over the Kafka Streams topology's (issue 5). */
  static final double TARGET_VS_STREAMS = 3.0;

  private static final List<String> ORDER = List.of(KafkaResults.PLAIN, KafkaResults.RECORD_FIRST,
      KafkaResults.EFFECT_FIRST, KafkaResults.STREAMS);
  private static final List<String> DEDUP = List.of(KafkaResults.RECORD_FIRST, KafkaResults.EFFECT_FIRST);

  private KafkaReport() {}

  /**
   * Prints the tables and targets and writes the plot.
   *
   * @param args the results JSON and the PNG to write
   * @throws IOException if a file cannot be read or written
   * @throws IllegalArgumentException if the arguments are not two paths, or the file holds no round
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      throw new IllegalArgumentException(
          "arguments must be <results.json> <plot.png> but were " + Arrays.toString(args));
    }
    KafkaResults results = KafkaResults.read(Path.of(args[0]));
    System.out.print(table(results));
    System.out.println();
    System.out.println("Time to the first record:");
    System.out.println();
    System.out.print(startupTable(results));
    System.out.println();
    System.out.print(targets(results));
    System.out.println();
    System.out.println("CPU of the harness's JVM per record by thread kind, µs (- where not measured):");
    System.out.println();
    System.out.print(cpuTable(results));
    System.out.println();
    System.out.println("Against plain-vertx of the same round: wall time (plain's / the scenario's, the throughput"
        + " ratio) and consumer CPU per record (plain's / the scenario's); above 1x the scenario beat plain:");
    System.out.println();
    System.out.print(ratioTable(results));
    System.out.println();
    System.out.print(ratioSummary(results));
    writePlot(results, Path.of(args[1]));
    System.out.println();
    System.out.println("wrote " + args[1]);
  }

  /**
   * One row per round: load average, records per second of each scenario that ran, and the ratios of each dedup
   * mode to the plain consumer and to Kafka Streams of the same round ("n/a" where either did not run).
   *
   * @param results the run
   * @return a Markdown table, lines ending in a newline
   */
  static String table(KafkaResults results) {
    List<String> present = present(results);
    MarkdownTable t = new MarkdownTable().column("round", true).column("load avg", true);
    for (String s : present) {
      t.column(s + " (rec/s)", true);
    }
    for (String d : DEDUP) {
      if (present.contains(d)) {
        t.column(d + " / plain", true).column(d + " / streams", true);
      }
    }
    for (KafkaResults.Round r : results.rounds()) {
      List<String> row = new ArrayList<>();
      row.add(Integer.toString(r.round()));
      row.add(String.format(Locale.ROOT, "%.2f", r.loadAverage()));
      for (String s : present) {
        KafkaResults.Scenario m = r.scenario(s);
        row.add(m == null ? "n/a" : String.format(Locale.ROOT, "%,.0f", m.recordsPerSec()));
      }
      for (String d : DEDUP) {
        if (present.contains(d)) {
          row.add(ratioText(r, d, KafkaResults.PLAIN));
          row.add(ratioText(r, d, KafkaResults.STREAMS));
        }
      }
      t.row(row);
    }
    return t.toString();
  }

  /**
   * One row per round: seconds from subscribe (Kafka Streams: {@code start()}) until the first record reached the
   * handler or processor, per scenario: the group join and first fetch, which every throughput figure includes.
   *
   * @param results the run
   * @return a Markdown table, lines ending in a newline
   */
  static String startupTable(KafkaResults results) {
    List<String> present = present(results);
    MarkdownTable t = new MarkdownTable().column("round", true);
    for (String s : present) {
      t.column(s + " (s)", true);
    }
    for (KafkaResults.Round r : results.rounds()) {
      List<String> row = new ArrayList<>();
      row.add(Integer.toString(r.round()));
      for (String s : present) {
        KafkaResults.Scenario m = r.scenario(s);
        row.add(m == null ? "n/a" : String.format(Locale.ROOT, "%.2f", m.firstRecordNs() / 1e9));
      }
      t.row(row);
    }
    return t.toString();
  }

  /**
   * States each target for each dedup mode: the ratio in every round, and how many rounds met it.
   *
   * @param results the run
   * @return one line per target and mode
   */
  static String targets(KafkaResults results) {
    StringBuilder sb = new StringBuilder();
    for (String d : DEDUP) {
      target(sb, results, d, KafkaResults.PLAIN, TARGET_VS_PLAIN);
      target(sb, results, d, KafkaResults.STREAMS, TARGET_VS_STREAMS);
    }
    return sb.toString();
  }

  private static void target(StringBuilder sb, KafkaResults results, String dedup, String other, double target) {
    List<String> ratios = new ArrayList<>();
    int met = 0;
    for (KafkaResults.Round r : results.rounds()) {
      double x = ratio(r, dedup, other);
      if (!Double.isNaN(x)) {
        ratios.add(String.format(Locale.ROOT, "%.2fx", x));
        if (x >= target) {
          met++;
        }
      }
    }
    if (ratios.isEmpty()) {
      return;
    }
    sb.append(String.format(Locale.ROOT, "- %s >= %.1fx %s: %s by round; met in %d of %d rounds%n", dedup, target,
        other, String.join(", ", ratios), met, ratios.size()));
  }

  /**
   * The throughput of {@code a} over that of {@code b} in one round.
   *
   * @return the ratio, or NaN if either did not run in the round
   */
  static double ratio(KafkaResults.Round r, String a, String b) {
    KafkaResults.Scenario x = r.scenario(a);
    KafkaResults.Scenario y = r.scenario(b);
    return x == null || y == null ? Double.NaN : x.recordsPerSec() / y.recordsPerSec();
  }

  private static String ratioText(KafkaResults.Round r, String a, String b) {
    double x = ratio(r, a, b);
    return Double.isNaN(x) ? "n/a" : String.format(Locale.ROOT, "%.2fx", x);
  }

  /**
   * One row per round and scenario, in the order they ran: CPU microseconds per record of the poll threads, the
   * event loops, the two together (the consumer), the harness's main thread, and every other thread (the broker and
   * the clients' background threads). "-" where the scenario has no CPU figures (Kafka Streams, files written before
   * the harness stored them).
   *
   * @param results the run
   * @return a Markdown table, lines ending in a newline
   */
  static String cpuTable(KafkaResults results) {
    MarkdownTable t = new MarkdownTable().column("round", true).column("scenario", false).column("poll", true)
        .column("event loops", true).column("consumer", true).column("harness", true)
        .column("broker and clients", true);
    for (KafkaResults.Round r : results.rounds()) {
      for (KafkaResults.Scenario m : r.scenarios()) {
        KafkaResults.Cpu c = m.cpu();
        List<String> row = new ArrayList<>(List.of(Integer.toString(r.round()), m.name()));
        for (long ns : c == null ? new long[0]
            : new long[] {c.pollNs(), c.eventLoopNs(), c.consumerNs(), c.harnessNs(), c.brokerNs()}) {
          row.add(String.format(Locale.ROOT, "%.2f", ns / 1e3 / results.records()));
        }
        while (row.size() < 7) {
          row.add("-");
        }
        t.row(row);
      }
    }
    return t.toString();
  }

  /**
   * One row per round: for each dedup mode that ran, its wall-time ratio and its consumer-CPU-per-record ratio to
   * the plain consumer of the same round ({@link #wallRatio}, {@link #cpuRatio}); "n/a" where either scenario did
   * not run in the round, "-" where either has no CPU figures.
   *
   * @param results the run
   * @return a Markdown table, lines ending in a newline
   */
  static String ratioTable(KafkaResults results) {
    List<String> dedup = presentDedup(results);
    MarkdownTable t = new MarkdownTable().column("round", true);
    for (String d : dedup) {
      t.column(d + " wall", true).column(d + " consumer CPU", true);
    }
    for (KafkaResults.Round r : results.rounds()) {
      List<String> row = new ArrayList<>();
      row.add(Integer.toString(r.round()));
      for (String d : dedup) {
        boolean ran = r.scenario(d) != null && r.scenario(KafkaResults.PLAIN) != null;
        row.add(ran ? ratioText(wallRatio(r, d)) : "n/a");
        row.add(ran ? ratioText(cpuRatio(r, d)) : "n/a");
      }
      t.row(row);
    }
    return t.toString();
  }

  /**
   * For each dedup mode, both ratios to the plain consumer ({@link #wallRatio}, {@link #cpuRatio}) over rounds 2 to
   * n: round 1 is left out as warm-up (it includes the JIT compiling every scenario). Gives how many rounds had the
   * ratio, its median, its range, and how many reached {@link #TARGET_VS_PLAIN}.
   *
   * @param results the run
   * @return a heading line, then a Markdown table (or a line saying there is no round after the warm-up), lines
   *     ending in a newline
   */
  static String ratioSummary(KafkaResults results) {
    List<KafkaResults.Round> measured = results.rounds().stream().filter(r -> r.round() >= 2).toList();
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
        "Against plain-vertx over rounds 2..%d (round 1 is warm-up: the JIT compiles every scenario in it):%n%n",
        results.rounds().stream().mapToInt(KafkaResults.Round::round).max().orElse(1)));
    if (measured.isEmpty()) {
      return sb.append("no round after the warm-up round").append(System.lineSeparator()).toString();
    }
    MarkdownTable t = new MarkdownTable().column("scenario", false).column("ratio", false).column("rounds", true)
        .column("median", true).column("range", true)
        .column(String.format(Locale.ROOT, ">= %.1fx", TARGET_VS_PLAIN), true);
    for (String d : presentDedup(results)) {
      summaryRow(t, d, "wall time", measured.stream().map(r -> wallRatio(r, d)).toList());
      summaryRow(t, d, "consumer CPU per record", measured.stream().map(r -> cpuRatio(r, d)).toList());
    }
    return sb.append(t).toString();
  }

  private static void summaryRow(MarkdownTable t, String scenario, String ratio, List<Double> perRound) {
    Spread s = Spread.of(perRound, TARGET_VS_PLAIN);
    t.row(s.rounds() == 0
        ? List.of(scenario, ratio, "0", "-", "-", "-")
        : List.of(scenario, ratio, Integer.toString(s.rounds()), ratioText(s.median()),
            ratioText(s.min()) + " - " + ratioText(s.max()), s.reached() + " of " + s.rounds()));
  }

  /**
   * The median, range and target count of one ratio over rounds.
   *
   * @param rounds how many rounds had the ratio (NaN entries left out)
   * @param median the middle ratio, or the mean of the two middle ones for an even count; NaN if {@code rounds == 0}
   * @param min the smallest; NaN if {@code rounds == 0}
   * @param max the largest; NaN if {@code rounds == 0}
   * @param reached how many were at or above the target
   */
  record Spread(int rounds, double median, double min, double max, int reached) {

    /**
     * Summarizes ratios, leaving out NaN (a round where a scenario or its CPU figures were missing). O(n log n).
     *
     * @param ratios one per round, NaN where the round had none
     * @param target the ratio a round must reach to count in {@link #reached}
     * @return the summary
     */
    static Spread of(List<Double> ratios, double target) {
      double[] x = ratios.stream().mapToDouble(Double::doubleValue).filter(v -> !Double.isNaN(v)).sorted()
          .toArray();
      int n = x.length;
      if (n == 0) {
        return new Spread(0, Double.NaN, Double.NaN, Double.NaN, 0);
      }
      double median = n % 2 == 1 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
      int reached = (int) Arrays.stream(x).filter(v -> v >= target).count();
      return new Spread(n, median, x[0], x[n - 1], reached);
    }
  }

  /**
   * The plain consumer's wall time over that of {@code dedup} in one round: the same records, so the same figure as
   * the throughput ratio; above 1 the dedup consumer was faster.
   *
   * @return the ratio, or NaN if either did not run in the round
   */
  static double wallRatio(KafkaResults.Round r, String dedup) {
    KafkaResults.Scenario plain = r.scenario(KafkaResults.PLAIN);
    KafkaResults.Scenario d = r.scenario(dedup);
    return plain == null || d == null ? Double.NaN : (double) plain.ns() / d.ns();
  }

  /**
   * The plain consumer's CPU per record (poll threads and event loops) over that of {@code dedup} in one round;
   * above 1 the dedup consumer used less CPU per record than the plain one.
   *
   * @return the ratio, or NaN if either did not run in the round or has no CPU figures
   */
  static double cpuRatio(KafkaResults.Round r, String dedup) {
    KafkaResults.Scenario plain = r.scenario(KafkaResults.PLAIN);
    KafkaResults.Scenario d = r.scenario(dedup);
    if (plain == null || d == null || plain.cpu() == null || d.cpu() == null || d.cpu().consumerNs() <= 0) {
      return Double.NaN;
    }
    // Both read the same topic, so the records cancel out of CPU per record.
    return (double) plain.cpu().consumerNs() / d.cpu().consumerNs();
  }

  private static String ratioText(double x) {
    return Double.isNaN(x) ? "-" : String.format(Locale.ROOT, "%.2fx", x);
  }

  private static List<String> presentDedup(KafkaResults results) {
    return present(results).stream().filter(DEDUP::contains).toList();
  }

  /** The scenarios that ran in any round, in the harness's order. */
  private static List<String> present(KafkaResults results) {
    return ORDER.stream()
        .filter(s -> results.rounds().stream().anyMatch(r -> r.scenario(s) != null))
        .toList();
  }

  /**
   * The consumer's CPU per record ({@link KafkaResults.Cpu#consumerNs()}: poll threads and event loops) of each
   * Vert.x scenario in each round, in µs, for the fourth chart of {@link #writePlot}. Scenarios without CPU figures
   * (Kafka Streams, and every scenario of a results file written before the harness measured CPU) are left out.
   *
   * @param results the run
   * @return rows: scenario names; columns: rounds as {@code "round n"}; empty if no scenario has CPU figures
   */
  static DefaultCategoryDataset cpuDataset(KafkaResults results) {
    DefaultCategoryDataset cpu = new DefaultCategoryDataset();
    for (KafkaResults.Round r : results.rounds()) {
      for (String s : present(results)) {
        KafkaResults.Scenario m = r.scenario(s);
        if (m != null && m.cpu() != null) {
          cpu.addValue(m.cpu().consumerNs() / (double) results.records() / 1000.0, s, "round " + r.round());
        }
      }
    }
    return cpu;
  }

  /**
   * Draws three charts side by side: records per second of each scenario in each round; each dedup mode over the
   * plain consumer of its round, with the 0.9x target; each dedup mode over Kafka Streams of its round, with the
   * 3x target. Where the results hold CPU figures a fourth chart follows: the consumer's CPU per record
   * ({@link #cpuDataset}). Each chart is 700 by 700 pixels.
   *
   * @param results the run
   * @param png the file to write
   * @throws IOException if it cannot be written
   */
  static void writePlot(KafkaResults results, Path png) throws IOException {
    DefaultCategoryDataset rates = new DefaultCategoryDataset();
    DefaultCategoryDataset vsPlain = new DefaultCategoryDataset();
    DefaultCategoryDataset vsStreams = new DefaultCategoryDataset();
    for (KafkaResults.Round r : results.rounds()) {
      String round = String.format(Locale.ROOT, "round %d (load %.1f)", r.round(), r.loadAverage());
      for (String s : present(results)) {
        KafkaResults.Scenario m = r.scenario(s);
        if (m != null) {
          rates.addValue(m.recordsPerSec() / 1000.0, s, round);
        }
      }
      for (String d : DEDUP) {
        double p = ratio(r, d, KafkaResults.PLAIN);
        if (!Double.isNaN(p)) {
          vsPlain.addValue(p, d + " / plain", round);
        }
        double k = ratio(r, d, KafkaResults.STREAMS);
        if (!Double.isNaN(k)) {
          vsStreams.addValue(k, d + " / streams", round);
        }
      }
    }
    JFreeChart rateChart = Plots.barChart("Records per second (higher is better)", "thousand records/s", rates,
        "#,##0");
    Plots.subtitle(rateChart, String.format(Locale.ROOT,
        "%,d records (%,d distinct ids), %d partitions; handler: ledger credit%s; dedup id from the %s, journal:"
            + " %s; Kafka Streams: %s store, %d thread(s)",
        results.records(), results.distinct(), results.partitions(),
        results.handlerDigests() == 0 ? "" : " + " + results.handlerDigests() + " SHA-256 of the value",
        results.identity() == null ? "header" : results.identity(),
        results.journal() == null ? "none" : results.journal(), results.streamsStore(), results.streamThreads()));
    JFreeChart plainChart = Plots.barChart("Dedup consumer / plain Vert.x consumer", "ratio, same round", vsPlain,
        "0.00");
    Plots.subtitle(plainChart, String.format(Locale.ROOT, "target >= %.1fx (dashed line)", TARGET_VS_PLAIN));
    targetLine(plainChart, TARGET_VS_PLAIN);
    JFreeChart streamsChart = Plots.barChart("Dedup consumer / Kafka Streams", "ratio, same round", vsStreams,
        "0.0");
    Plots.subtitle(streamsChart, String.format(Locale.ROOT, "target >= %.1fx (dashed line)", TARGET_VS_STREAMS));
    targetLine(streamsChart, TARGET_VS_STREAMS);
    List<JFreeChart> charts = new ArrayList<>(List.of(rateChart, plainChart, streamsChart));
    DefaultCategoryDataset cpu = cpuDataset(results);
    if (cpu.getRowCount() > 0) {
      JFreeChart cpuChart = Plots.barChart("Consumer CPU per record (lower is better)", "µs per record", cpu,
          "0.00");
      Plots.subtitle(cpuChart, "poll threads + event loops of the harness's JVM; Kafka Streams not measured");
      charts.add(cpuChart);
    }
    Plots.writePng(png, 700 * charts.size(), 700, charts);
  }

  private static void targetLine(JFreeChart chart, double at) {
    chart.getCategoryPlot().addRangeMarker(Plots.targetLine(at));
    // Keep the line in view when every bar is below it.
    chart.getCategoryPlot().getRangeAxis().setLowerMargin(0);
    if (chart.getCategoryPlot().getRangeAxis().getUpperBound() < at * 1.1) {
      chart.getCategoryPlot().getRangeAxis().setUpperBound(at * 1.1);
    }
  }
}
