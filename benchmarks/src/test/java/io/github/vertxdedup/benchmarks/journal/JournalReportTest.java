package io.github.vertxdedup.benchmarks.journal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The journal report tabulates the append run and judges the default policy against its target. */
class JournalReportTest {

  private static JournalAppendResults results(double asyncNs) {
    return new JournalAppendResults("2026-12-01T00:00:00Z", 2.0, List.of(
        new JournalAppendResults.Row("NONE", 1, 254, 3_937_000, ""),
        new JournalAppendResults.Row("ASYNC (default)", 1, asyncNs, 1e9 / asyncNs, "background fsync every 1 s"),
        new JournalAppendResults.Row("ASYNC (default)", 64, 17, 58_000_000, ""),
        new JournalAppendResults.Row("SYNC, one fsync per record", 1, 120_492, 8_299, "no group commit")));
  }

  @Test
  void shouldTabulateEveryRowInOrder() {
    String table = JournalReport.table(results(227));

    assertThat(table)
        .contains("| NONE, 1 id per record | 254 | 3.9 M |  |")
        .contains("| ASYNC (default), 1 id per record | 227 | 4.4 M | background fsync every 1 s |")
        .contains("| ASYNC (default), 64 ids per record | 17 | 58.0 M |  |")
        .contains("| SYNC, one fsync per record, 1 id per record | 120,492 | 8.3 k | no group commit |");
    assertThat(table.indexOf("NONE")).isLessThan(table.indexOf("SYNC, one fsync"));
  }

  @Test
  void shouldJudgeTheDefaultPolicyWithOneIdPerRecord() {
    assertThat(JournalReport.target(results(227))).endsWith("227 ns: met");
    assertThat(JournalReport.target(results(301))).endsWith("301 ns: MISSED");
  }

  @Test
  void shouldReadWhatTheHarnessWritesAndDrawAPng(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("journal.json");
    results(227).write(json);
    Path png = dir.resolve("img/journal.png");

    JournalReport.main(new String[] {json.toString(), png.toString()});

    assertThat(JournalAppendResults.read(json)).isEqualTo(results(227));
    byte[] bytes = Files.readAllBytes(png);
    assertThat(bytes.length).isGreaterThan(1_000);
    assertThat(new String(bytes, 1, 3, StandardCharsets.US_ASCII)).isEqualTo("PNG");
  }
}
