package io.github.vertxdedup.benchmarks.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The service report compares each check with the echo of its own transport and round. */
class ServiceReportTest {

  private static ServiceResults results() {
    return new ServiceResults("2026-12-01T00:00:00Z", 1000, 1000, 5000, 5, 10, 2, List.of(
        new ServiceResults.Round(1, 1.5, List.of(
            new ServiceResults.Scenario("echo-json", 400_000, 0),
            new ServiceResults.Scenario("echo-local", 500_000, 0),
            new ServiceResults.Scenario("check-json", 300_000, 0),
            new ServiceResults.Scenario("check-local", 450_000, 0),
            new ServiceResults.Scenario("check-local+ASYNC", 250_000, 0),
            new ServiceResults.Scenario("batch-local", 3_420_000, 0))),
        new ServiceResults.Round(2, 3.0, List.of(
            new ServiceResults.Scenario("echo-json", 200_000, 0),
            new ServiceResults.Scenario("check-json", 190_000, 0),
            new ServiceResults.Scenario("check-local", 260_000, 0)))));
  }

  @Test
  void shouldGiveEachCheckAsAShareOfTheEchoOfItsTransportAndRound() {
    String table = ServiceReport.table(results());

    assertThat(table)
        .contains("| scenario | round 1 (load 1.5) | round 2 (load 3.0) |")
        .contains("| check-json | 300 k (75 % of echo) | 190 k (95 % of echo) |")
        .contains("| check-local | 450 k (90 % of echo) | 260 k |")
        .contains("| check-local+ASYNC | 250 k (50 % of echo) | n/a |")
        .contains("| batch-local | 3.42 M | n/a |")
        .contains("| echo-local | 500 k | n/a |");
  }

  @Test
  void shouldReadWhatTheHarnessWritesAndDrawAPng(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("service.json");
    results().write(json);
    Path png = dir.resolve("img/service.png");

    ServiceReport.main(new String[] {json.toString(), png.toString()});

    assertThat(ServiceResults.read(json)).isEqualTo(results());
    byte[] bytes = Files.readAllBytes(png);
    assertThat(bytes.length).isGreaterThan(1_000);
    assertThat(new String(bytes, 1, 3, StandardCharsets.US_ASCII)).isEqualTo("PNG");
  }
}
