package io.github.vertxdedup.benchmarks.kafka;

import io.github.vertxdedup.benchmarks.report.MarkdownTable;
import io.github.vertxdedup.benchmarks.report.ResultsFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The results file of {@link RebuildBenchmark}, and the summary it prints: per scenario the medians of the time from
 * subscribe to the partition's assignment, from the assignment to the first handled record, and of the read phase
 * (the rebuild's duration, or the bare scan's); per round the ratio of the rebuild to the bare scan of the same
 * round, and their median. Written and read as JSON (Gson).
 *
 * @param date when the run started, ISO-8601 UTC
 * @param records records in the partition before the first handled one (the window's ids, one each)
 * @param windowMs the dedup window W, ms
 * @param expectedIdsPerPartition the consumer's {@code expectedIdsPerPartition}
 * @param availableProcessors {@link Runtime#availableProcessors()} of the harness's JVM
 * @param journalBytes bytes of the journal directory that covers the window (scenario {@link #JOURNAL}), or -1 if
 *     it was not built
 * @param changelog whether the journal's builder wrote the changelog topic (scenario {@link #CHANGELOG} ran)
 * @param rounds the rounds in order
 */
public record RebuildResults(String date, int records, long windowMs, int expectedIdsPerPartition,
    int availableProcessors, long journalBytes, boolean changelog, List<Round> rounds) {

  /** (a) The local journal covers the window: the window is replayed from it, nothing is read from the topic. */
  public static final String JOURNAL = "journal";
  /** (b) An empty journal directory: the window is rebuilt from the source topic. */
  public static final String REBUILD = "rebuild";
  /** (c) The window is read from the changelog topic of accepted ids. */
  public static final String CHANGELOG = "changelog";
  /** A plain Kafka consumer that reads the same records and identifies each with the same extractor. */
  public static final String BARE_SCAN = "bare-scan";
  /** The target: the rebuild's read phase at most this many times the bare scan's. */
  public static final double TARGET_RATIO = 1.5;

  /**
   * One round: every scenario once, in turn.
   *
   * @param round 1-based
   * @param loadAverage the system's 1-minute load average when the round started (-1 where the OS does not say)
   * @param scenarios the scenarios in the order they ran
   */
  public record Round(int round, double loadAverage, List<Scenario> scenarios) {

    /**
     * @param name a scenario name
     * @return the scenario of this name, or {@code null} if it did not run in this round
     */
    public Scenario scenario(String name) {
      return scenarios.stream().filter(s -> s.name().equals(name)).findFirst().orElse(null);
    }
  }

  /**
   * One scenario's measurement. The consumer scenarios time from {@code subscribe}; the bare scan has no assignment
   * and no handled record ({@code -1} there).
   *
   * @param name the scenario
   * @param assignedNs from {@code subscribe} to the partition's assignment (the consumer's
   *     {@code onPartitionsAssigned}), ns, or -1
   * @param firstRecordNs from {@code subscribe} to the first handled record, ns, or -1
   * @param readNs the read phase, ns: the rebuild's duration as the consumer measured it (from its reading
   *     consumer's creation to its last id checked), the bare scan's from its consumer's creation to its last record
   *     identified; 0 where nothing was read from the source topic (a rebuild from the changelog records none)
   * @param recordsRead records read from the source topic, or entries from the changelog
   * @param idsRestored ids the read phase put into the window (the rebuild), or records identified (the bare scan)
   * @param cpuNs CPU time of the whole process (broker included) from the start of the scenario to its end, ns, or -1
   *     where the JVM does not say
   */
  public record Scenario(String name, long assignedNs, long firstRecordNs, long readNs, long recordsRead,
      long idsRestored, long cpuNs) {

    /** @return from the assignment to the first handled record, ns, or -1 */
    public long assignedToFirstNs() {
      return assignedNs < 0 || firstRecordNs < 0 ? -1 : firstRecordNs - assignedNs;
    }
  }

  /**
   * Writes the results as indented JSON, creating parent directories.
   *
   * @param file the file (replaced if it exists)
   * @throws IOException if it cannot be written
   */
  public void write(Path file) throws IOException {
    ResultsFile.write(this, file);
  }

  /**
   * Reads a results file.
   *
   * @param file the file {@link #write} wrote
   * @return the results
   * @throws IOException if it cannot be read
   * @throws IllegalArgumentException if it holds no rounds
   */
  public static RebuildResults read(Path file) throws IOException {
    return ResultsFile.read(file, RebuildResults.class, RebuildResults::rounds, "round");
  }

  /**
   * The rounds the medians are taken over: every round after the first when there are at least three (round 1
   * includes the JIT's warm-up of the rebuild's path), else all.
   *
   * @return those rounds, in order
   */
  public List<Round> measured() {
    return rounds.size() >= 3 ? rounds.subList(1, rounds.size()) : rounds;
  }

  /**
   * The median of one figure of a scenario over {@link #measured()} rounds.
   *
   * @param scenario the scenario
   * @param figure the figure, read from the scenario's measurement
   * @return the median, or NaN if the scenario ran in none of these rounds
   */
  public double median(String scenario, ToDoubleFunction<Scenario> figure) {
    List<Double> values = new ArrayList<>();
    for (Round r : measured()) {
      Scenario s = r.scenario(scenario);
      if (s != null) {
        values.add(figure.applyAsDouble(s));
      }
    }
    return median(values);
  }

  /**
   * Per measured round, the ratio of a figure of a scenario to the bare scan's read phase of the same round.
   *
   * @param scenario the scenario
   * @param figure its figure, ns
   * @return the ratios, in round order; rounds without both scenarios are left out
   */
  public List<Double> ratiosToBareScan(String scenario, ToDoubleFunction<Scenario> figure) {
    List<Double> ratios = new ArrayList<>();
    for (Round r : measured()) {
      Scenario s = r.scenario(scenario);
      Scenario bare = r.scenario(BARE_SCAN);
      if (s != null && bare != null && bare.readNs() > 0) {
        ratios.add(figure.applyAsDouble(s) / bare.readNs());
      }
    }
    return ratios;
  }

  /**
   * @param values some values
   * @return their median (the mean of the two middle ones for an even count), or NaN if there are none
   */
  static double median(List<Double> values) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int mid = v.length / 2;
    return v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  }

  /**
   * The printed summary: the per-round table, the medians, the ratios to the bare scan and the target's verdict.
   *
   * @return Markdown text, every line ending in a newline
   */
  public String report() {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT, "%,d records (one id each) in one partition, W = %d ms, "
        + "expectedIdsPerPartition %,d, %d processors, journal of the window %s%s%n%n", records, windowMs,
        expectedIdsPerPartition, availableProcessors, journalBytes < 0 ? "not built"
            : String.format(Locale.ROOT, "%.1f MiB", journalBytes / 1048576.0),
        changelog ? ", changelog written" : ""));
    MarkdownTable perRound = new MarkdownTable().column("round", true).column("load avg", true)
        .column("scenario", false).column("subscribe to assigned, ms", true)
        .column("assigned to first record, ms", true).column("read phase, ms", true)
        .column("records (changelog: entries) read", true)
        .column("records/s read", true).column("process CPU, µs/record read", true);
    for (Round r : rounds) {
      for (Scenario s : r.scenarios()) {
        perRound.row(List.of(Integer.toString(r.round()), String.format(Locale.ROOT, "%.2f", r.loadAverage()),
            s.name(), ms(s.assignedNs()), ms(s.assignedToFirstNs()), s.readNs() > 0 ? ms(s.readNs()) : "-",
            String.format(Locale.ROOT, "%,d", s.recordsRead()), rate(s.recordsRead(), s.readNs()),
            s.cpuNs() >= 0 && s.recordsRead() > 0
                ? String.format(Locale.ROOT, "%.2f", s.cpuNs() / 1e3 / s.recordsRead()) : "-"));
      }
    }
    sb.append(perRound).append('\n');
    List<Round> m = measured();
    sb.append(String.format(Locale.ROOT, "Medians over rounds %d-%d:%n%n", m.get(0).round(),
        m.get(m.size() - 1).round()));
    MarkdownTable medians = new MarkdownTable().column("scenario", false).column("subscribe to assigned, ms", true)
        .column("assigned to first record, ms", true).column("subscribe to first record, ms", true)
        .column("read phase, ms", true).column("records/s read", true);
    for (String name : List.of(JOURNAL, REBUILD, CHANGELOG, BARE_SCAN)) {
      if (Double.isNaN(median(name, s -> 1))) {
        continue;
      }
      double read = median(name, Scenario::readNs);
      double records = median(name, Scenario::recordsRead);
      medians.row(List.of(name, ms(median(name, Scenario::assignedNs)),
          ms(median(name, Scenario::assignedToFirstNs)), ms(median(name, Scenario::firstRecordNs)),
          read > 0 ? ms(read) : "-", rate(records, read)));
    }
    sb.append(medians).append('\n');
    List<Double> read = ratiosToBareScan(REBUILD, Scenario::readNs);
    if (!read.isEmpty()) {
      double r = median(read);
      sb.append(String.format(Locale.ROOT, "rebuild read phase / bare scan, same round: median %.2fx (range %s), "
          + "%d of %d rounds <= %.1fx: target %s%n", r, range(read), read.stream().filter(x -> x <= TARGET_RATIO)
          .count(), read.size(), TARGET_RATIO, r <= TARGET_RATIO ? "met" : "MISSED"));
    }
    for (String name : List.of(JOURNAL, REBUILD, CHANGELOG)) {
      List<Double> whole = ratiosToBareScan(name, Scenario::assignedToFirstNs);
      if (!whole.isEmpty()) {
        sb.append(String.format(Locale.ROOT, "%s assigned to first record / bare scan, same round: median %.2fx "
            + "(range %s)%n", name, median(whole), range(whole)));
      }
    }
    return sb.toString();
  }

  private static String range(List<Double> values) {
    double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return String.format(Locale.ROOT, "%.2f-%.2fx", v[0], v[v.length - 1]);
  }

  private static String ms(double ns) {
    return ns < 0 || Double.isNaN(ns) ? "-" : String.format(Locale.ROOT, "%,.0f", ns / 1e6);
  }

  private static String rate(double records, double ns) {
    return ns > 0 && records > 0 ? String.format(Locale.ROOT, "%,.0f", records / (ns / 1e9)) : "-";
  }
}
