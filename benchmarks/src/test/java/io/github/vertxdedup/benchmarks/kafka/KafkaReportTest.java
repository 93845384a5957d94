package io.github.vertxdedup.benchmarks.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Kafka report reads the harness's results file and takes every ratio within one round. */
class KafkaReportTest {

  private static KafkaResults results() {
    return new KafkaResults("2026-12-01T00:00:00Z", 1000, 4, 900, 600_000, "rocksdb", 1, 2, List.of(
        new KafkaResults.Round(1, 2.5, List.of(
            scenario(KafkaResults.PLAIN, 100_000),
            scenario(KafkaResults.RECORD_FIRST, 95_000),
            scenario(KafkaResults.EFFECT_FIRST, 50_000),
            scenario(KafkaResults.STREAMS, 20_000))),
        new KafkaResults.Round(2, 4.0, List.of(
            scenario(KafkaResults.PLAIN, 200_000),
            scenario(KafkaResults.RECORD_FIRST, 100_000),
            scenario(KafkaResults.EFFECT_FIRST, 80_000),
            scenario(KafkaResults.STREAMS, 40_000)))), 0, "none", "header");
  }

  private static KafkaResults.Scenario scenario(String name, double perSec) {
    long ns = (long) (1000 / perSec * 1e9);
    // The first record after 10^5 / perSec seconds: a different figure for every scenario of the fixture.
    return new KafkaResults.Scenario(name, ns, Math.round(1e14 / perSec), perSec, null);
  }

  /**
   * Four rounds of 1,000 records, CPU figures for the Vert.x scenarios. Against plain, per round (wall, consumer
   * CPU): record-first 0.50x 0.50x, 0.80x 1.00x, 1.00x 0.90x, 1.25x 0.80x; effect-first 0.25x 0.25x, 0.40x 0.50x,
   * 0.50x 0.30x, 0.20x 0.40x.
   */
  private static KafkaResults withCpu() {
    return new KafkaResults("2026-12-01T00:00:00Z", 1000, 4, 900, 600_000, "rocksdb", 1, 2, List.of(
        new KafkaResults.Round(1, 1.0, List.of(
            measured(KafkaResults.PLAIN, 10_000_000, 2_000_000, 8_000_000),
            measured(KafkaResults.RECORD_FIRST, 20_000_000, 5_000_000, 15_000_000),
            measured(KafkaResults.EFFECT_FIRST, 40_000_000, 10_000_000, 30_000_000),
            new KafkaResults.Scenario(KafkaResults.STREAMS, 100_000_000, 1_000_000, 10_000, null))),
        new KafkaResults.Round(2, 1.0, List.of(
            measured(KafkaResults.RECORD_FIRST, 12_500_000, 2_000_000, 8_000_000),
            measured(KafkaResults.EFFECT_FIRST, 25_000_000, 4_000_000, 16_000_000),
            measured(KafkaResults.PLAIN, 10_000_000, 2_000_000, 8_000_000))),
        new KafkaResults.Round(3, 1.0, List.of(
            measured(KafkaResults.EFFECT_FIRST, 20_000_000, 6_000_000, 24_000_000),
            measured(KafkaResults.PLAIN, 10_000_000, 1_000_000, 8_000_000),
            measured(KafkaResults.RECORD_FIRST, 10_000_000, 2_000_000, 8_000_000))),
        new KafkaResults.Round(4, 1.0, List.of(
            measured(KafkaResults.PLAIN, 10_000_000, 2_000_000, 8_000_000),
            measured(KafkaResults.RECORD_FIRST, 8_000_000, 2_500_000, 10_000_000),
            measured(KafkaResults.EFFECT_FIRST, 50_000_000, 5_000_000, 20_000_000)))),
        0, "none", "header");
  }

  private static KafkaResults.Scenario measured(String name, long ns, long pollNs, long eventLoopNs) {
    return new KafkaResults.Scenario(name, ns, ns / 10, 1000 / (ns / 1e9),
        new KafkaResults.Cpu(pollNs, eventLoopNs, 1_000_000, 3_000_000));
  }

  /** A results file as the harness wrote it before it stored CPU figures: no {@code cpu} in any scenario. */
  private static final String WITHOUT_CPU = """
      {"date": "2026-12-01T00:00:00Z", "records": 1000, "partitions": 4, "distinct": 900, "windowMs": 600000,
       "streamsStore": "rocksdb", "streamThreads": 1, "availableProcessors": 2, "handlerDigests": 0,
       "rounds": [
        {"round": 1, "loadAverage": 2.0, "scenarios": [
          {"name": "plain-vertx", "ns": 10000000, "firstRecordNs": 1000000, "recordsPerSec": 100000.0},
          {"name": "dedup-record-first", "ns": 20000000, "firstRecordNs": 1000000, "recordsPerSec": 50000.0}]},
        {"round": 2, "loadAverage": 3.0, "scenarios": [
          {"name": "plain-vertx", "ns": 10000000, "firstRecordNs": 1000000, "recordsPerSec": 100000.0},
          {"name": "dedup-record-first", "ns": 12500000, "firstRecordNs": 1000000, "recordsPerSec": 80000.0}]}]}
      """;

  @Test
  void shouldTakeRatiosWithinEachRound() {
    String table = KafkaReport.table(results());

    assertThat(table)
        .contains("| 1 | 2.50 | 100,000 | 95,000 | 50,000 | 20,000 | 0.95x | 4.75x | 0.50x | 2.50x |")
        .contains("| 2 | 4.00 | 200,000 | 100,000 | 80,000 | 40,000 | 0.50x | 2.50x | 0.40x | 2.00x |");
  }

  @Test
  void shouldGiveTheTimeToTheFirstRecordInSeconds() {
    String table = KafkaReport.startupTable(results());

    assertThat(table).contains("| 1 | 1.00 | 1.05 | 2.00 | 5.00 |").contains("| 2 | 0.50 | 1.00 | 1.25 | 2.50 |");
  }

  @Test
  void shouldCountTheRoundsThatMeetEachTarget() {
    String targets = KafkaReport.targets(results());

    assertThat(targets)
        .contains("- dedup-record-first >= 0.9x plain-vertx: 0.95x, 0.50x by round; met in 1 of 2 rounds")
        .contains("- dedup-record-first >= 3.0x kafka-streams: 4.75x, 2.50x by round; met in 1 of 2 rounds")
        .contains("- dedup-effect-first >= 3.0x kafka-streams: 2.50x, 2.00x by round; met in 0 of 2 rounds");
  }

  @Test
  void shouldReportAScenarioMissingFromARoundAsNotAvailable() {
    KafkaResults partial = new KafkaResults("2026-12-01T00:00:00Z", 1000, 4, 900, 600_000, "memory", 1, 2,
        List.of(new KafkaResults.Round(1, 1.0, List.of(
            scenario(KafkaResults.PLAIN, 100_000), scenario(KafkaResults.RECORD_FIRST, 90_000)))), 0, null, null);

    assertThat(KafkaReport.table(partial)).contains("| 1 | 1.00 | 100,000 | 90,000 | 0.90x | n/a |");
    assertThat(KafkaReport.targets(partial)).doesNotContain("kafka-streams");
  }

  @Test
  void shouldGiveCpuPerRecordByThreadKindAndADashWhereNotMeasured() {
    String table = KafkaReport.cpuTable(withCpu());

    assertThat(table)
        .contains("| 1 | plain-vertx | 2.00 | 8.00 | 10.00 | 1.00 | 3.00 |")
        .contains("| 1 | dedup-effect-first | 10.00 | 30.00 | 40.00 | 1.00 | 3.00 |")
        .contains("| 1 | kafka-streams | - | - | - | - | - |")
        .contains("| 3 | plain-vertx | 1.00 | 8.00 | 9.00 | 1.00 | 3.00 |");
    // Rows in the order the scenarios ran.
    assertThat(table.indexOf("| 2 | dedup-record-first")).isLessThan(table.indexOf("| 2 | plain-vertx"));
  }

  @Test
  void shouldTakeWallAndCpuRatiosToPlainWithinEachRound() {
    String table = KafkaReport.ratioTable(withCpu());

    assertThat(table)
        .contains("| round | dedup-record-first wall | dedup-record-first consumer CPU | dedup-effect-first wall |"
            + " dedup-effect-first consumer CPU |")
        .contains("| 1 | 0.50x | 0.50x | 0.25x | 0.25x |")
        .contains("| 2 | 0.80x | 1.00x | 0.40x | 0.50x |")
        .contains("| 3 | 1.00x | 0.90x | 0.50x | 0.30x |")
        .contains("| 4 | 1.25x | 0.80x | 0.20x | 0.40x |");
  }

  @Test
  void shouldSummarizeRoundsAfterTheWarmUpRound() {
    String summary = KafkaReport.ratioSummary(withCpu());

    assertThat(summary)
        .contains("over rounds 2..4 (round 1 is warm-up")
        .contains("| dedup-record-first | wall time | 3 | 1.00x | 0.80x - 1.25x | 2 of 3 |")
        .contains("| dedup-record-first | consumer CPU per record | 3 | 0.90x | 0.80x - 1.00x | 2 of 3 |")
        .contains("| dedup-effect-first | wall time | 3 | 0.40x | 0.20x - 0.50x | 0 of 3 |")
        .contains("| dedup-effect-first | consumer CPU per record | 3 | 0.40x | 0.30x - 0.50x | 0 of 3 |");
  }

  @Test
  void spread_takesTheMiddleOfAnOddCountAndTheMeanOfTheTwoMiddlesOfAnEvenOne() {
    KafkaReport.Spread odd = KafkaReport.Spread.of(List.of(0.5, 0.9, 0.7), 0.9);
    KafkaReport.Spread even = KafkaReport.Spread.of(List.of(1.2, Double.NaN, 0.8, 0.95, 1.0), 0.9);

    assertThat(odd).isEqualTo(new KafkaReport.Spread(3, 0.7, 0.5, 0.9, 1));
    assertThat(even.rounds()).isEqualTo(4);
    assertThat(even.median()).isCloseTo(0.975, within(1e-12));
    assertThat(even.min()).isEqualTo(0.8);
    assertThat(even.max()).isEqualTo(1.2);
    assertThat(even.reached()).isEqualTo(3);
  }

  @Test
  void spread_ofNoRatiosHasNoFigures() {
    KafkaReport.Spread none = KafkaReport.Spread.of(List.of(Double.NaN), 0.9);

    assertThat(none.rounds()).isZero();
    assertThat(none.median()).isNaN();
    assertThat(none.reached()).isZero();
  }

  @Test
  void shouldRoundTripCpuFiguresThroughTheResultsFile(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("kafka.json");
    withCpu().write(json);

    KafkaResults read = KafkaResults.read(json);

    assertThat(read).isEqualTo(withCpu());
    assertThat(read.rounds().get(0).scenario(KafkaResults.PLAIN).cpu())
        .isEqualTo(new KafkaResults.Cpu(2_000_000, 8_000_000, 1_000_000, 3_000_000));
    assertThat(read.rounds().get(0).scenario(KafkaResults.STREAMS).cpu()).isNull();
    assertThat(Files.readString(json)).contains("\"pollNs\": 2000000").contains("\"brokerNs\": 3000000");
  }

  @Test
  void shouldReadAFileWrittenBeforeCpuFiguresAsNotMeasured(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("old.json");
    Files.writeString(json, WITHOUT_CPU);

    KafkaResults old = KafkaResults.read(json);

    assertThat(old.rounds()).flatExtracting(KafkaResults.Round::scenarios)
        .extracting(KafkaResults.Scenario::cpu).containsOnlyNulls();
    assertThat(KafkaReport.table(old)).contains("| 2 | 3.00 | 100,000 | 80,000 | 0.80x | n/a |");
    assertThat(KafkaReport.cpuTable(old)).contains("| 2 | dedup-record-first | - | - | - | - | - |");
    assertThat(KafkaReport.ratioTable(old)).contains("| 2 | 0.80x | - |");
    assertThat(KafkaReport.ratioSummary(old))
        .contains("| dedup-record-first | wall time | 1 | 0.80x | 0.80x - 0.80x | 0 of 1 |")
        .contains("| dedup-record-first | consumer CPU per record | 0 | - | - | - |");
  }

  @Test
  void cpuDataset_holdsTheConsumerCpuPerRecordOfEachVertxScenarioInMicroseconds() {
    var cpu = KafkaReport.cpuDataset(withCpu());

    // Round 1, record-first: (5,000,000 + 15,000,000) ns over 1,000 records = 20 µs per record.
    assertThat(cpu.getValue(KafkaResults.RECORD_FIRST, "round 1").doubleValue()).isCloseTo(20.0, within(1e-9));
    assertThat(cpu.getValue(KafkaResults.PLAIN, "round 3").doubleValue()).isCloseTo(9.0, within(1e-9));
    assertThat(cpu.getValue(KafkaResults.EFFECT_FIRST, "round 4").doubleValue()).isCloseTo(25.0, within(1e-9));
    assertThat(cpu.getRowKeys()).as("Kafka Streams has no CPU figures")
        .containsExactly(KafkaResults.PLAIN, KafkaResults.RECORD_FIRST, KafkaResults.EFFECT_FIRST);
    assertThat(cpu.getColumnCount()).isEqualTo(4);
  }

  @Test
  void writePlot_addsTheCpuChartOnlyWhereTheResultsHoldCpuFigures(@TempDir Path dir) throws Exception {
    Path with = dir.resolve("with.png");
    Path without = dir.resolve("without.png");

    KafkaReport.writePlot(withCpu(), with);
    KafkaReport.writePlot(results(), without);

    assertThat(KafkaReport.cpuDataset(results()).getRowCount()).isZero();
    assertThat(ImageIO.read(with.toFile()).getWidth()).isEqualTo(2800);
    assertThat(ImageIO.read(without.toFile()).getWidth()).isEqualTo(2100);
  }

  @Test
  void shouldStillReportACommittedResultsFile(@TempDir Path dir) throws Exception {
    // Surefire runs in the benchmarks module; the committed results are under the repository's docs/.
    Path committed = Path.of("..", "docs", "results", "kafka-throughput-run10.json");
    assertThat(committed).isRegularFile();

    KafkaResults run10 = KafkaResults.read(committed);
    KafkaReport.main(new String[] {committed.toString(), dir.resolve("run10.png").toString()});

    assertThat(run10.rounds()).flatExtracting(KafkaResults.Round::scenarios)
        .extracting(KafkaResults.Scenario::cpu).containsOnlyNulls();
    assertThat(KafkaReport.cpuTable(run10)).contains("| 1 | plain-vertx | - | - | - | - | - |");
    assertThat(dir.resolve("run10.png")).isNotEmptyFile();
  }

  @Test
  void shouldReadWhatTheHarnessWritesAndDrawAPng(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("results/kafka.json");
    results().write(json);
    Path png = dir.resolve("img/kafka.png");

    KafkaReport.main(new String[] {json.toString(), png.toString()});

    assertThat(KafkaResults.read(json)).isEqualTo(results());
    byte[] bytes = Files.readAllBytes(png);
    assertThat(bytes.length).isGreaterThan(1_000);
    assertThat(new String(bytes, 1, 3, StandardCharsets.US_ASCII)).isEqualTo("PNG");
  }
}
