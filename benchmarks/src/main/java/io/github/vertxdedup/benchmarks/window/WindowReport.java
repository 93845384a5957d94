package io.github.vertxdedup.benchmarks.window;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.reflect.TypeToken;
import java.awt.Color;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import io.github.vertxdedup.benchmarks.report.Plots;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.labels.ItemLabelAnchor;
import org.jfree.chart.labels.ItemLabelPosition;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.DatasetRenderingOrder;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.MinMaxCategoryRenderer;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * Turns the side-by-side's raw results into the figures of {@code docs/benchmarks.md}: a Markdown table (ns per
 * event, bytes per held id, both as ratios to our window) on standard output, the targets and where each lands, and
 * a PNG plot.
 *
 * <p>Usage: {@code WindowReport <jmh-results.json> <footprint.json> <plot.png>}: the JSON that
 * {@code java -jar benchmarks.jar WindowBenchmark -rf json -rff ...} writes, the JSON of {@link WindowFootprint},
 * and the image to write. Every sample JMH recorded (each fork's each measurement iteration) counts; the table
 * gives the median and the range, because the machine the figures come from is shared and noisy.
 */
public final class WindowReport {

  /** Target: our window's cost per event, ns (stretch goal from the project's plan). */
  static final double TARGET_NS_PER_EVENT = 40.0;
  /** Target: how many times faster than Caffeine our window is. */
  static final double TARGET_TIMES_FASTER_THAN_CAFFEINE = 15.0;
  /** Target: heap bytes per held id in steady state. */
  static final double TARGET_BYTES_PER_ID = 24.0;
  /** Target: {@code checkBatch} ns per event at most this many independent random loads (issue 20). */
  static final double TARGET_BATCH_PER_INDEPENDENT_LOAD = 4.0;
  /** Target: single {@code check} ns per event at most this many dependent random loads (issue 20). */
  static final double TARGET_SINGLE_PER_DEPENDENT_LOAD = 1.0;

  /**
   * One round of the interleaved run ({@link WindowInterleaved}): ns per event of our window fed by single checks and
   * by {@code checkBatch}, and of Caffeine, and the memory floor measured in the same round. A contender the run left
   * out is {@code NaN}.
   *
   * @param singleNs our window, single {@code check} per event
   * @param batchNs our window, {@code checkBatch} of 500, its upkeep (sweep and growth) paid inside the batches
   * @param caffeineNs Caffeine
   * @param independentNs one independent random load on a table of our window's size
   * @param dependentNs one dependent random load on the same table
   * @param batchPathNs our window, {@code checkBatch} of 500 with {@code upkeep} between the batches: the batches'
   *     own time, the upkeep's left out
   */
  record FloorRound(double singleNs, double batchNs, double caffeineNs, double independentNs, double dependentNs,
      double batchPathNs) {

    /** A round without the batch-path contender. */
    FloorRound(double singleNs, double batchNs, double caffeineNs, double independentNs, double dependentNs) {
      this(singleNs, batchNs, caffeineNs, independentNs, dependentNs, Double.NaN);
    }
  }

  /**
   * Time samples of one contender, ns per event.
   *
   * @param contender which structure
   * @param samples every measured sample, sorted ascending; at least one
   */
  record Timing(Contender contender, double[] samples) {

    double median() {
      int n = samples.length;
      return n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
    }

    double min() {
      return samples[0];
    }

    double max() {
      return samples[samples.length - 1];
    }
  }

  private WindowReport() {}

  /**
   * Prints the table and writes the plot.
   *
   * @param args the JMH JSON file, the footprint JSON file, the PNG to write
   * @throws IOException if a file cannot be read or written
   * @throws IllegalArgumentException if the arguments are not three paths, or the results lack our window
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 3) {
      throw new IllegalArgumentException(
          "arguments must be <jmh-results.json> <footprint.json> <plot.png> but were " + Arrays.toString(args));
    }
    Map<Contender, Timing> timings;
    try (Reader r = Files.newBufferedReader(Path.of(args[0]), StandardCharsets.UTF_8)) {
      timings = parseTimings(JsonParser.parseReader(r));
    }
    Map<Contender, WindowFootprint.Footprint> footprints;
    try (Reader r = Files.newBufferedReader(Path.of(args[1]), StandardCharsets.UTF_8)) {
      footprints = parseFootprints(r);
    }
    System.out.print(table(timings, footprints));
    System.out.println();
    System.out.print(targets(timings, footprints));
    writePlot(timings, footprints, Path.of(args[2]));
    System.out.println();
    System.out.println("wrote " + args[2]);
  }

  /**
   * Collects the raw samples of each contender from JMH's JSON results.
   *
   * @param jmhResults the parsed JSON array JMH writes
   * @return samples per contender, in {@link Contender} order
   * @throws IllegalArgumentException if a result is not in ns/op or names an unknown contender
   */
  static Map<Contender, Timing> parseTimings(JsonElement jmhResults) {
    Map<Contender, Timing> out = new EnumMap<>(Contender.class);
    for (JsonElement e : jmhResults.getAsJsonArray()) {
      JsonObject result = e.getAsJsonObject();
      Contender c = Contender.ofKey(result.getAsJsonObject("params").get("contender").getAsString());
      JsonObject metric = result.getAsJsonObject("primaryMetric");
      String unit = metric.get("scoreUnit").getAsString();
      if (!unit.equals("ns/op")) {
        throw new IllegalArgumentException("scoreUnit must be ns/op but was " + unit + " for " + c.key());
      }
      List<Double> samples = new ArrayList<>();
      for (JsonElement fork : metric.getAsJsonArray("rawData")) {
        for (JsonElement sample : fork.getAsJsonArray()) {
          samples.add(sample.getAsDouble());
        }
      }
      double[] sorted = samples.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      if (sorted.length == 0) {
        throw new IllegalArgumentException("rawData must hold at least one sample but was empty for " + c.key());
      }
      out.put(c, new Timing(c, sorted));
    }
    return out;
  }

  /**
   * Reads {@link WindowFootprint}'s JSON.
   *
   * @param json the file's content
   * @return footprint per contender
   */
  static Map<Contender, WindowFootprint.Footprint> parseFootprints(Reader json) {
    List<WindowFootprint.Footprint> list =
        new Gson().fromJson(json, new TypeToken<List<WindowFootprint.Footprint>>() {}.getType());
    Map<Contender, WindowFootprint.Footprint> out = new EnumMap<>(Contender.class);
    for (WindowFootprint.Footprint f : list) {
      out.put(Contender.ofKey(f.contender()), f);
    }
    return out;
  }

  /**
   * Formats the figures as a Markdown table: one row per contender, ratios against {@link Contender#DEDUP_WINDOW}.
   * The ratio's range pairs the extremes (the other's fastest run with our slowest, and the reverse).
   *
   * @param timings samples per contender; must include our window
   * @param footprints footprint per contender; a missing one shows as "n/a"
   * @return the table, lines ending in a newline
   * @throws IllegalArgumentException if {@code timings} lacks {@link Contender#DEDUP_WINDOW}
   */
  static String table(Map<Contender, Timing> timings, Map<Contender, WindowFootprint.Footprint> footprints) {
    Timing ours = requireOurs(timings);
    WindowFootprint.Footprint oursMem = footprints.get(Contender.DEDUP_WINDOW);
    StringBuilder sb = new StringBuilder();
    sb.append("| Structure | ns/event, median | ns/event, range | runs | time vs ours (range) "
        + "| heap B/held id (JOL) | memory vs ours |\n");
    sb.append("|---|---:|---:|---:|---:|---:|---:|\n");
    for (Timing t : timings.values()) {
      WindowFootprint.Footprint f = footprints.get(t.contender());
      sb.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f – %.1f | %d | %.2fx (%.2f – %.2f) | %s | %s |%n",
          t.contender().label(), t.median(), t.min(), t.max(), t.samples().length, t.median() / ours.median(),
          t.min() / ours.max(), t.max() / ours.min(),
          f == null ? "n/a" : String.format(Locale.ROOT, "%.1f", f.jolBytesPerId()),
          f == null || oursMem == null ? "n/a"
              : String.format(Locale.ROOT, "%.2fx", f.jolBytesPerId() / oursMem.jolBytesPerId())));
    }
    return sb.toString();
  }

  /**
   * States each target and where the measurement lands, plainly.
   *
   * @param timings samples per contender; must include our window
   * @param footprints footprint per contender
   * @return one line per target
   * @throws IllegalArgumentException if {@code timings} lacks {@link Contender#DEDUP_WINDOW}
   */
  static String targets(Map<Contender, Timing> timings, Map<Contender, WindowFootprint.Footprint> footprints) {
    Timing ours = requireOurs(timings);
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT, "- ours <= %.0f ns/event: median %.1f ns (range %.1f – %.1f): %s%n",
        TARGET_NS_PER_EVENT, ours.median(), ours.min(), ours.max(),
        verdict(ours.median() <= TARGET_NS_PER_EVENT)));
    Timing caffeine = timings.get(Contender.CAFFEINE);
    if (caffeine != null) {
      double x = caffeine.median() / ours.median();
      sb.append(String.format(Locale.ROOT, "- ours >= %.0fx faster than Caffeine: %.1fx (range %.1f – %.1f): %s%n",
          TARGET_TIMES_FASTER_THAN_CAFFEINE, x, caffeine.min() / ours.max(), caffeine.max() / ours.min(),
          verdict(x >= TARGET_TIMES_FASTER_THAN_CAFFEINE)));
    }
    WindowFootprint.Footprint mem = footprints.get(Contender.DEDUP_WINDOW);
    if (mem != null) {
      sb.append(String.format(Locale.ROOT, "- ours <= %.0f B per held id: %.1f B (%,d ids held): %s%n",
          TARGET_BYTES_PER_ID, mem.jolBytesPerId(), mem.heldIds(),
          verdict(mem.jolBytesPerId() <= TARGET_BYTES_PER_ID)));
    }
    return sb.toString();
  }

  /**
   * States the targets that are ratios to the memory floor, and Caffeine against {@code checkBatch}, from the rounds of
   * one interleaved run: each ratio is taken within a round, then the median and range over rounds are given. A ratio
   * whose contender the run left out is not stated.
   *
   * @param rounds the measured rounds; at least one
   * @return one line per target
   * @throws IllegalArgumentException if {@code rounds} is empty
   */
  static String floorTargets(List<FloorRound> rounds) {
    if (rounds.isEmpty()) {
      throw new IllegalArgumentException("rounds must hold at least one round but was empty");
    }
    StringBuilder sb = new StringBuilder();
    appendTarget(sb, "- checkBatch <= %.0fx an independent load, upkeep between batches (the batches' own time):"
        + " %.2fx (range %.2f – %.2f, %d rounds): %s%n",
        ratios(rounds, r -> r.batchPathNs() / r.independentNs()), TARGET_BATCH_PER_INDEPENDENT_LOAD, true);
    appendTarget(sb, "- checkBatch <= %.0fx an independent load, upkeep inside the batches: %.2fx (range %.2f –"
        + " %.2f, %d rounds): %s%n",
        ratios(rounds, r -> r.batchNs() / r.independentNs()), TARGET_BATCH_PER_INDEPENDENT_LOAD, true);
    appendTarget(sb, "- single check <= %.1fx a dependent load: %.2fx (range %.2f – %.2f, %d rounds): %s%n",
        ratios(rounds, r -> r.singleNs() / r.dependentNs()), TARGET_SINGLE_PER_DEPENDENT_LOAD, true);
    appendTarget(sb, "- checkBatch >= %.0fx faster than Caffeine, upkeep inside the batches (both structures' whole"
        + " cost): %.1fx (range %.1f – %.1f, %d rounds): %s%n",
        ratios(rounds, r -> r.caffeineNs() / r.batchNs()), TARGET_TIMES_FASTER_THAN_CAFFEINE, false);
    appendTarget(sb, "- checkBatch >= %.0fx faster than Caffeine, upkeep between batches (the batches' own time):"
        + " %.1fx (range %.1f – %.1f, %d rounds): %s%n",
        ratios(rounds, r -> r.caffeineNs() / r.batchPathNs()), TARGET_TIMES_FASTER_THAN_CAFFEINE, false);
    return sb.toString();
  }

  /**
   * Appends one target line: the target, the median ratio, its range and round count, and the verdict; nothing when no
   * round has the ratio.
   *
   * @param format the line, taking the target, median, lowest, highest, rounds and verdict
   * @param sorted the ratios of the rounds, ascending
   * @param target the target ratio
   * @param atMost true if the median must be at most the target, false if at least
   */
  private static void appendTarget(StringBuilder sb, String format, double[] sorted, double target, boolean atMost) {
    if (sorted.length == 0) {
      return;
    }
    double m = MemoryFloor.median(sorted);
    sb.append(String.format(Locale.ROOT, format, target, m, sorted[0], sorted[sorted.length - 1], sorted.length,
        verdict(atMost ? m <= target : m >= target)));
  }

  /** The finite values of {@code ratio} over the rounds, sorted ascending. */
  private static double[] ratios(List<FloorRound> rounds, ToDoubleFunction<FloorRound> ratio) {
    return rounds.stream().mapToDouble(ratio).filter(Double::isFinite).sorted().toArray();
  }

  private static String verdict(boolean met) {
    return met ? "met" : "MISSED";
  }

  private static Timing requireOurs(Map<Contender, Timing> timings) {
    Timing ours = timings.get(Contender.DEDUP_WINDOW);
    if (ours == null) {
      throw new IllegalArgumentException("results must include contender " + Contender.DEDUP_WINDOW.key()
          + " (the baseline of every ratio) but had " + timings.keySet());
    }
    return ours;
  }

  /**
   * Draws two bar charts side by side, ns per event (bar: median; whisker: fastest to slowest run) and heap bytes per
   * held id, and writes them as one PNG.
   *
   * @param timings samples per contender
   * @param footprints footprint per contender
   * @param png the file to write
   * @throws IOException if it cannot be written
   */
  static void writePlot(Map<Contender, Timing> timings, Map<Contender, WindowFootprint.Footprint> footprints,
      Path png) throws IOException {
    DefaultCategoryDataset medians = new DefaultCategoryDataset();
    DefaultCategoryDataset ranges = new DefaultCategoryDataset();
    for (Timing t : timings.values()) {
      medians.addValue(t.median(), "median of runs", t.contender().label());
      ranges.addValue(t.min(), "fastest run", t.contender().label());
      ranges.addValue(t.max(), "slowest run", t.contender().label());
    }
    JFreeChart time = Plots.barChart("Cost per event (lower is better)", "ns per event", medians, "0");
    CategoryPlot timePlot = time.getCategoryPlot();
    MinMaxCategoryRenderer whiskers = new MinMaxCategoryRenderer();
    whiskers.setDrawLines(false);
    whiskers.setGroupPaint(Color.DARK_GRAY);
    whiskers.setSeriesPaint(0, Color.DARK_GRAY);
    whiskers.setSeriesPaint(1, Color.DARK_GRAY);
    timePlot.setDataset(1, ranges);
    timePlot.setRenderer(1, whiskers);
    // Whiskers over the bars, and the median's label at the foot of the bar, clear of the whisker.
    timePlot.setDatasetRenderingOrder(DatasetRenderingOrder.FORWARD);
    BarRenderer timeBars = (BarRenderer) timePlot.getRenderer();
    timeBars.setDefaultPositiveItemLabelPosition(
        new ItemLabelPosition(ItemLabelAnchor.INSIDE6, TextAnchor.BOTTOM_CENTER));
    timeBars.setDefaultItemLabelPaint(Color.WHITE);
    Plots.subtitle(time, "bar: median; whisker: fastest to slowest of "
        + timings.get(Contender.DEDUP_WINDOW).samples().length + " runs of 10 M events (W = 60 s, b = 1 s)");

    DefaultCategoryDataset bytes = new DefaultCategoryDataset();
    for (Contender c : timings.keySet()) {
      WindowFootprint.Footprint f = footprints.get(c);
      if (f != null) {
        bytes.addValue(f.jolBytesPerId(), "heap bytes per held id (JOL)", c.label());
      }
    }
    JFreeChart memory = Plots.barChart("Heap per held id (lower is better)", "bytes per id", bytes, "0.0");
    Plots.subtitle(memory, "JOL, all objects reachable from the structure, about 5.4 M ids held");

    Plots.writePng(png, 1600, 700, List.of(time, memory));
  }
}
