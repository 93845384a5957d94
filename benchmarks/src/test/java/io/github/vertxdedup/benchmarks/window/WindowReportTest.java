package io.github.vertxdedup.benchmarks.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonParser;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report reads JMH's and the footprint run's JSON and states ratios and targets correctly. */
class WindowReportTest {

  private static final String JMH = """
      [
        {"benchmark": "io.github.vertxdedup.benchmarks.window.WindowBenchmark.run",
         "params": {"contender": "dedupWindow"},
         "primaryMetric": {"score": 50.0, "scoreUnit": "ns/op", "rawData": [[40.0, 60.0], [50.0]]}},
        {"benchmark": "io.github.vertxdedup.benchmarks.window.WindowBenchmark.run",
         "params": {"contender": "caffeine"},
         "primaryMetric": {"score": 800.0, "scoreUnit": "ns/op", "rawData": [[700.0, 900.0], [800.0]]}}
      ]
      """;

  private static final String FOOTPRINT = """
      [
        {"contender": "dedupWindow", "heldIds": 1000, "jolBytes": 20000, "jolObjects": 3, "heapDeltaBytes": 20100},
        {"contender": "caffeine", "heldIds": 1000, "jolBytes": 100000, "jolObjects": 4000, "heapDeltaBytes": 99000}
      ]
      """;

  @Test
  void shouldGiveMedianRangeAndRatiosAgainstOurs() {
    String table = WindowReport.table(timings(), footprints());

    assertThat(table)
        .contains("| DedupWindow (ours) | 50.0 | 40.0 – 60.0 | 3 | 1.00x (0.67 – 1.50) | 20.0 | 1.00x |")
        .contains("| Caffeine | 800.0 | 700.0 – 900.0 | 3 | 16.00x (11.67 – 22.50) | 100.0 | 5.00x |");
  }

  @Test
  void shouldSayWhichTargetsAreMetAndWhichMissed() {
    String targets = WindowReport.targets(timings(), footprints());

    assertThat(targets)
        .contains("ours <= 40 ns/event: median 50.0 ns (range 40.0 – 60.0): MISSED")
        .contains("ours >= 15x faster than Caffeine: 16.0x (range 11.7 – 22.5): met")
        .contains("ours <= 24 B per held id: 20.0 B (1,000 ids held): met");
  }

  @Test
  void shouldTakeFloorRatiosWithinEachRoundAndGiveTheirMedian() {
    List<WindowReport.FloorRound> rounds = List.of(
        new WindowReport.FloorRound(200.0, 80.0, 1600.0, 25.0, 250.0, 50.0),
        new WindowReport.FloorRound(300.0, 150.0, 1500.0, 30.0, 250.0, 150.0),
        new WindowReport.FloorRound(220.0, 90.0, 1800.0, 30.0, 200.0, 60.0));

    String targets = WindowReport.floorTargets(rounds);

    // batch / independent: 3.2, 5.0, 3.0; batch path / independent: 2.0, 5.0, 2.0; single / dependent: 0.8, 1.2,
    // 1.1; Caffeine / batch: 20, 10, 20; Caffeine / batch path: 32, 10, 30.
    assertThat(targets)
        .contains("checkBatch <= 4x an independent load, upkeep between batches (the batches' own time): 2.00x"
            + " (range 2.00 – 5.00, 3 rounds): met")
        .contains("checkBatch <= 4x an independent load, upkeep inside the batches: 3.20x (range 3.00 – 5.00,"
            + " 3 rounds): met")
        .contains("single check <= 1.0x a dependent load: 1.10x (range 0.80 – 1.20, 3 rounds): MISSED")
        .contains("checkBatch >= 15x faster than Caffeine, upkeep inside the batches (both structures' whole cost):"
            + " 20.0x (range 10.0 – 20.0, 3 rounds): met")
        .contains("checkBatch >= 15x faster than Caffeine, upkeep between batches (the batches' own time): 30.0x"
            + " (range 10.0 – 32.0, 3 rounds): met");
  }

  @Test
  void shouldLeaveOutTheFloorRatioOfAContenderTheRunLeftOut() {
    String targets = WindowReport.floorTargets(
        List.of(new WindowReport.FloorRound(200.0, 80.0, Double.NaN, 25.0, 250.0)));

    assertThat(targets).contains("checkBatch <= 4x").contains("single check <= 1.0x").doesNotContain("Caffeine")
        .doesNotContain("upkeep between batches");
  }

  @Test
  void shouldRefuseResultsWithoutOurWindow() {
    Map<Contender, WindowReport.Timing> timings = timings();
    timings.remove(Contender.DEDUP_WINDOW);

    assertThatThrownBy(() -> WindowReport.table(timings, footprints()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("results must include contender dedupWindow");
  }

  @Test
  void shouldWriteAPngPlot(@TempDir Path dir) throws Exception {
    System.setProperty("java.awt.headless", "true");
    Path png = dir.resolve("img/plot.png");

    WindowReport.writePlot(timings(), footprints(), png);

    byte[] head = Files.readAllBytes(png);
    assertThat(head.length).isGreaterThan(1_000);
    assertThat(new String(head, 1, 3, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("PNG");
  }

  private static Map<Contender, WindowReport.Timing> timings() {
    return WindowReport.parseTimings(JsonParser.parseString(JMH));
  }

  private static Map<Contender, WindowFootprint.Footprint> footprints() {
    return WindowReport.parseFootprints(new StringReader(FOOTPRINT));
  }
}
