package io.github.vertxdedup.examples.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The alert rules in {@code ops/prometheus} load in Prometheus ({@code promtool check rules}) and fire as their unit
 * tests say ({@code promtool test rules}). {@code promtool} comes with Debian's {@code prometheus} package, which
 * {@code .ci/run} installs when it is missing; on a machine without it the test is skipped, except in CI
 * ({@code CI=true}), where it fails.
 */
class PromtoolRulesTest {

  private static Path promtool;
  private static Path rulesDir;

  @BeforeAll
  static void findPromtool() {
    promtool = OpsTools.require("promtool");
    rulesDir = ObservabilityExampleTest.repositoryRoot().resolve("ops").resolve("prometheus");
  }

  /** Runs promtool in the rules' directory; returns its exit code and output. */
  private static String run(List<String> args, int[] exit) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(promtool.toString());
    command.addAll(args);
    Process p = new ProcessBuilder(command).directory(rulesDir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("promtool ended").isTrue();
    exit[0] = p.exitValue();
    return out;
  }

  private static List<String> files(boolean tests) throws IOException {
    try (Stream<Path> s = Files.list(rulesDir)) {
      return s.map(f -> f.getFileName().toString())
          .filter(n -> n.endsWith(".yml") && n.endsWith(".test.yml") == tests).sorted().toList();
    }
  }

  @Test
  void shouldLoadEveryRulesFile() throws Exception {
    List<String> rules = files(false);
    assertThat(rules).isNotEmpty();
    List<String> args = new ArrayList<>(List.of("check", "rules"));
    args.addAll(rules);
    int[] exit = new int[1];
    String out = run(args, exit);
    assertThat(exit[0]).as(out).isZero();
    assertThat(out).contains("SUCCESS");
  }

  @Test
  void shouldFireTheAlertsAsTheirUnitTestsSay() throws Exception {
    List<String> tests = files(true);
    assertThat(tests).isNotEmpty();
    List<String> args = new ArrayList<>(List.of("test", "rules"));
    args.addAll(tests);
    int[] exit = new int[1];
    String out = run(args, exit);
    assertThat(exit[0]).as(out).isZero();
    assertThat(out).contains("SUCCESS");
  }
}
