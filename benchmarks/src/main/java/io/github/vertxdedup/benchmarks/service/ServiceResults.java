package io.github.vertxdedup.benchmarks.service;

import io.github.vertxdedup.benchmarks.report.ResultsFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The results file of {@link ServiceThroughput}, read by {@link ServiceReport}: the settings, then each round's
 * scenarios in the order they ran. Written and read as JSON (Gson).
 *
 * @param date when the run started, ISO-8601 UTC
 * @param inFlight requests kept outstanding
 * @param batch events per {@code checkBatch} request
 * @param windowMs the dedup window, ms
 * @param warmupSec warm-up of each scenario, seconds
 * @param measureSec measured time of each scenario, seconds
 * @param availableProcessors {@link Runtime#availableProcessors()} of the harness's JVM
 * @param rounds the rounds in order
 */
public record ServiceResults(String date, int inFlight, int batch, long windowMs, int warmupSec, int measureSec,
    int availableProcessors, List<Round> rounds) {

  /**
   * One round: every scenario once, in turn.
   *
   * @param round 1-based
   * @param loadAverage the system's 1-minute load average when the round started (-1 where the OS does not say)
   * @param scenarios the scenarios in the order they ran
   */
  public record Round(int round, double loadAverage, List<Scenario> scenarios) {

    /**
     * The scenario of this name.
     *
     * @param name a scenario name, e.g. {@code check-local}
     * @return it, or {@code null} if it did not run in this round
     */
    public Scenario scenario(String name) {
      return scenarios.stream().filter(s -> s.name().equals(name)).findFirst().orElse(null);
    }
  }

  /**
   * One scenario's measurement.
   *
   * @param name the scenario, e.g. {@code batch-local} or {@code check-local+ASYNC}
   * @param decisionsPerSec decisions (echo scenarios: replies) per second over the measured time
   * @param errors failed requests over the whole scenario (warm-up included)
   */
  public record Scenario(String name, double decisionsPerSec, long errors) {}

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
  public static ServiceResults read(Path file) throws IOException {
    return ResultsFile.read(file, ServiceResults.class, ServiceResults::rounds, "round");
  }
}
