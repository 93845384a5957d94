package io.github.vertxdedup.benchmarks.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The rebuild benchmark's scenario list, and the medians and ratios its summary reports. */
class RebuildBenchmarkTest {

  private static final long MS = 1_000_000L;

  @Test
  void scenarios_keepsTheOrderGivenAndNamesAnUnknownOrRepeatedScenario() {
    assertThat(RebuildBenchmark.scenarios("bare-scan, rebuild")).containsExactly(RebuildResults.BARE_SCAN,
        RebuildResults.REBUILD);
    assertThat(RebuildBenchmark.scenarios(String.join(",", RebuildBenchmark.ALL)))
        .isEqualTo(RebuildBenchmark.ALL);
    assertThatThrownBy(() -> RebuildBenchmark.scenarios("rebuild,replay"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("bench.scenarios must name only journal, rebuild, changelog, bare-scan but held 'replay'");
    assertThatThrownBy(() -> RebuildBenchmark.scenarios("rebuild,rebuild"))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("bench.scenarios names 'rebuild' twice");
    assertThatThrownBy(() -> RebuildBenchmark.scenarios(" , "))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one scenario");
  }

  @Test
  void medians_leaveOutTheFirstOfThreeOrMoreRoundsAndRatiosPairTheRebuildWithItsOwnRound() {
    RebuildResults results = results(
        round(1, 9_000, 9_500, 1_000), // warm-up: left out
        round(2, 1_200, 1_300, 1_000),
        round(3, 3_000, 3_200, 2_000),
        round(4, 1_500, 1_700, 1_200));

    assertThat(results.measured()).extracting(RebuildResults.Round::round).containsExactly(2, 3, 4);
    assertThat(results.median(RebuildResults.REBUILD, RebuildResults.Scenario::readNs)).isEqualTo(1_500 * MS);
    assertThat(results.median(RebuildResults.BARE_SCAN, RebuildResults.Scenario::readNs)).isEqualTo(1_200 * MS);
    // Per round, not median over median: 1.2, 1.5 and 1.25.
    assertThat(results.ratiosToBareScan(RebuildResults.REBUILD, RebuildResults.Scenario::readNs))
        .containsExactly(1.2, 1.5, 1.25);
    assertThat(RebuildResults.median(results.ratiosToBareScan(RebuildResults.REBUILD,
        RebuildResults.Scenario::readNs))).isEqualTo(1.25);
    // From the assignment to the first record: 1.3 s, 3.2 s and 1.7 s over the same bare scans.
    assertThat(results.ratiosToBareScan(RebuildResults.REBUILD, RebuildResults.Scenario::assignedToFirstNs))
        .containsExactly(1.3, 1.6, 1.7 / 1.2);
    assertThat(results.report()).contains("median 1.25x (range 1.20-1.50x), 3 of 3 rounds <= 1.5x: target met")
        .contains("rebuild assigned to first record / bare scan, same round: median 1.42x (range 1.30-1.60x)");
  }

  @Test
  void medians_takeEveryRoundOfFewerThanThreeAndTheMeanOfTheMiddleTwo() {
    RebuildResults results = results(round(1, 4_000, 4_100, 1_000), round(2, 2_000, 2_100, 1_000));

    assertThat(results.measured()).hasSize(2);
    assertThat(results.median(RebuildResults.REBUILD, RebuildResults.Scenario::readNs)).isEqualTo(3_000 * MS);
    assertThat(results.report()).contains("median 3.00x (range 2.00-4.00x), 0 of 2 rounds <= 1.5x: target MISSED");
    assertThat(results.median(RebuildResults.CHANGELOG, RebuildResults.Scenario::readNs)).isNaN();
  }

  @Test
  void resultsFile_roundTrips(@TempDir Path dir) throws Exception {
    RebuildResults results = results(round(1, 1_000, 1_100, 900));
    Path file = dir.resolve("rebuild.json");

    results.write(file);

    RebuildResults read = RebuildResults.read(file);
    assertThat(read).isEqualTo(results);
    assertThat(read.rounds().get(0).scenario(RebuildResults.REBUILD).assignedToFirstNs()).isEqualTo(1_100 * MS);
  }

  private static RebuildResults results(RebuildResults.Round... rounds) {
    return new RebuildResults("2026-12-02T00:00:00Z", 1_000, 3_600_000, 1_000, 2, 4096,
        false, List.of(rounds));
  }

  /**
   * A round: the journal's first record 300 ms after subscribe; the rebuild assigned 100 ms after subscribe, its read
   * phase and its first record {@code rebuildReadMs} and {@code rebuildFirstMs} after that.
   */
  private static RebuildResults.Round round(int round, long rebuildReadMs, long rebuildFirstMs, long bareMs) {
    return new RebuildResults.Round(round, 1.0, List.of(
        new RebuildResults.Scenario(RebuildResults.JOURNAL, 100 * MS, 300 * MS, 0, 0, 0, -1),
        new RebuildResults.Scenario(RebuildResults.REBUILD, 100 * MS, (100 + rebuildFirstMs) * MS,
            rebuildReadMs * MS, 1_000, 1_000, 5 * MS),
        new RebuildResults.Scenario(RebuildResults.BARE_SCAN, -1, -1, bareMs * MS, 1_000, 1_000, 2 * MS)));
  }
}
