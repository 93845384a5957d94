package io.github.vertxdedup.benchmarks.service;

import io.github.vertxdedup.benchmarks.report.MarkdownTable;
import io.github.vertxdedup.benchmarks.report.Plots;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jfree.chart.JFreeChart;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * Turns {@link ServiceThroughput}'s results file into the figures of {@code docs/benchmarks-service.md}: a
 * Markdown table of decisions per second (one row per scenario, one column per round), each {@code check} scenario
 * also as a share of the echo of the same transport in the same round, and a PNG plot (single requests and
 * {@code checkBatch} in two charts: their rates differ tenfold).
 *
 * <p>Usage: {@code ServiceReport <results.json> <plot.png>}.
 */
public final class ServiceReport {

  private ServiceReport() {}

  /**
   * Prints the table and writes the plot.
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
    ServiceResults results = ServiceResults.read(Path.of(args[0]));
    System.out.print(table(results));
    writePlot(results, Path.of(args[1]));
    System.out.println();
    System.out.println("wrote " + args[1]);
  }

  /**
   * The table: rates per scenario and round; for {@code check-json} and {@code check-local} (journaled variants
   * included), the share of the echo of the same transport and round in parentheses.
   *
   * @param results the run
   * @return a Markdown table, lines ending in a newline
   */
  static String table(ServiceResults results) {
    MarkdownTable t = new MarkdownTable().column("scenario", false);
    for (ServiceResults.Round r : results.rounds()) {
      t.column(String.format(Locale.ROOT, "round %d (load %.1f)", r.round(), r.loadAverage()), true);
    }
    for (String name : names(results)) {
      List<String> row = new ArrayList<>();
      row.add(name);
      for (ServiceResults.Round r : results.rounds()) {
        ServiceResults.Scenario s = r.scenario(name);
        if (s == null) {
          row.add("n/a");
          continue;
        }
        double share = shareOfEcho(r, name);
        row.add(rate(s.decisionsPerSec()) + (Double.isNaN(share) ? ""
            : String.format(Locale.ROOT, " (%.0f %% of echo)", share * 100)));
      }
      t.row(row);
    }
    return t.toString();
  }

  /**
   * A single-{@code check} scenario's rate over the echo of the same transport in the same round.
   *
   * @return the share, or NaN for other scenarios or if the echo did not run in the round
   */
  static double shareOfEcho(ServiceResults.Round r, String name) {
    if (!name.startsWith("check-")) {
      return Double.NaN;
    }
    String transport = name.substring("check-".length()).split("\\+")[0];
    ServiceResults.Scenario echo = r.scenario("echo-" + transport);
    ServiceResults.Scenario s = r.scenario(name);
    return echo == null || s == null ? Double.NaN : s.decisionsPerSec() / echo.decisionsPerSec();
  }

  /** 412 k, 3.42 M: the form the page uses. */
  static String rate(double perSec) {
    return perSec >= 1e6 ? String.format(Locale.ROOT, "%.2f M", perSec / 1e6)
        : String.format(Locale.ROOT, "%.0f k", perSec / 1e3);
  }

  private static List<String> names(ServiceResults results) {
    Set<String> names = new LinkedHashSet<>();
    results.rounds().forEach(r -> r.scenarios().forEach(s -> names.add(s.name())));
    return new ArrayList<>(names);
  }

  /**
   * Two charts side by side: single requests (echo and {@code check}) and {@code checkBatch}, thousand decisions
   * per second, one bar per round in each scenario.
   *
   * @param results the run
   * @param png the file to write
   * @throws IOException if it cannot be written
   */
  static void writePlot(ServiceResults results, Path png) throws IOException {
    DefaultCategoryDataset single = new DefaultCategoryDataset();
    DefaultCategoryDataset batch = new DefaultCategoryDataset();
    for (String name : names(results)) {
      for (ServiceResults.Round r : results.rounds()) {
        ServiceResults.Scenario s = r.scenario(name);
        if (s != null) {
          String round = String.format(Locale.ROOT, "round %d (load %.1f)", r.round(), r.loadAverage());
          (name.startsWith("batch-") ? batch : single).addValue(s.decisionsPerSec() / 1e3, round, name);
        }
      }
    }
    String setup = String.format(Locale.ROOT, "%,d requests in flight, one partition, %d s measured per scenario",
        results.inFlight(), results.measureSec());
    JFreeChart singleChart = Plots.barChart("Single requests: echo beside check", "thousand per second", single,
        "#,##0");
    Plots.subtitle(singleChart, setup);
    JFreeChart batchChart = Plots.barChart("checkBatch of " + results.batch() + " events",
        "thousand decisions per second", batch, "#,##0");
    Plots.subtitle(batchChart, setup);
    Plots.writePng(png, 1600, 700, List.of(singleChart, batchChart));
  }
}
