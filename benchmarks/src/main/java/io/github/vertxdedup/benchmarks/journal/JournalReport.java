package io.github.vertxdedup.benchmarks.journal;

import io.github.vertxdedup.benchmarks.report.Plots;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * Turns the results file of {@code JournalBenchmark append} into the append figures of
 * {@code docs/benchmarks-journal.md}: a Markdown table (ns per accepted id and ids per second, per sync policy and
 * record form), whether the default policy meets its target, and a PNG plot on a logarithmic axis (the rows span
 * four orders of magnitude, from a batched append to one {@code fsync} per record).
 *
 * <p>Usage: {@code JournalReport <append-results.json> <plot.png>}.
 */
public final class JournalReport {

  /** Target: append cost per accepted id under the default policy (ASYNC), one id per record, ns. */
  static final double TARGET_NS_PER_ID = 300.0;

  private JournalReport() {}

  /**
   * Prints the table and the target and writes the plot.
   *
   * @param args the results JSON and the PNG to write
   * @throws IOException if a file cannot be read or written
   * @throws IllegalArgumentException if the arguments are not two paths, or the file holds no row
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      throw new IllegalArgumentException(
          "arguments must be <append-results.json> <plot.png> but were " + Arrays.toString(args));
    }
    JournalAppendResults results = JournalAppendResults.read(Path.of(args[0]));
    System.out.print(table(results));
    System.out.println();
    System.out.println(target(results));
    writePlot(results, Path.of(args[1]));
    System.out.println();
    System.out.println("wrote " + args[1]);
  }

  /**
   * @param results the run
   * @return a Markdown table, one line per row, lines ending in a newline
   */
  static String table(JournalAppendResults results) {
    StringBuilder sb = new StringBuilder("| policy, form | ns per id | ids per s | notes |\n| --- | ---: | ---: | --- |\n");
    for (JournalAppendResults.Row r : results.rows()) {
      sb.append(String.format(Locale.ROOT, "| %s | %,.0f | %s | %s |%n", label(r), r.nsPerId(),
          perSec(r.idsPerSec()), r.notes()));
    }
    return sb.toString();
  }

  /**
   * States the target for the default policy (ASYNC, one id per record) and where it lands.
   *
   * @param results the run
   * @return one line, or a line saying the row is missing
   */
  static String target(JournalAppendResults results) {
    return results.rows().stream()
        .filter(r -> r.policy().startsWith("ASYNC") && r.idsPerRecord() == 1)
        .findFirst()
        .map(r -> String.format(Locale.ROOT, "- ASYNC (default), 1 id per record <= %.0f ns per id: %.0f ns: %s",
            TARGET_NS_PER_ID, r.nsPerId(), r.nsPerId() <= TARGET_NS_PER_ID ? "met" : "MISSED"))
        .orElse("- ASYNC (default), 1 id per record: not measured in this run");
  }

  static String label(JournalAppendResults.Row r) {
    return r.policy() + ", " + (r.idsPerRecord() == 1 ? "1 id per record" : r.idsPerRecord() + " ids per record");
  }

  /** 4.4 M, 8.3 k: the form the page uses. */
  static String perSec(double v) {
    return v >= 1e6 ? String.format(Locale.ROOT, "%.1f M", v / 1e6) : String.format(Locale.ROOT, "%.1f k", v / 1e3);
  }

  /**
   * One bar per row, ns per accepted id on a logarithmic axis, one series per record form, with the target as a
   * dashed line.
   *
   * @param results the run
   * @param png the file to write
   * @throws IOException if it cannot be written
   */
  static void writePlot(JournalAppendResults results, Path png) throws IOException {
    DefaultCategoryDataset data = new DefaultCategoryDataset();
    for (JournalAppendResults.Row r : results.rows()) {
      data.addValue(r.nsPerId(), r.idsPerRecord() == 1 ? "1 id per record" : r.idsPerRecord() + " ids per record",
          r.policy());
    }
    JFreeChart chart = Plots.barChart("Journal append cost per accepted id (lower is better)",
        "ns per id (log scale)", data, "#,##0");
    Plots.subtitle(chart, String.format(Locale.ROOT,
        "one appending thread; load average %.1f at the start; dashed line: target %.0f ns (ASYNC, 1 id per record)",
        results.loadAverage(), TARGET_NS_PER_ID));
    LogAxis log = new LogAxis("ns per id (log scale)");
    log.setBase(10);
    log.setTickUnit(new NumberTickUnit(1, new DecimalFormat("#,##0")));
    log.setSmallestValue(1);
    chart.getCategoryPlot().setRangeAxis(log);
    chart.getCategoryPlot().addRangeMarker(Plots.targetLine(TARGET_NS_PER_ID));
    Plots.writePng(png, 1400, 700, List.of(chart));
  }
}
