package io.github.vertxdedup.benchmarks.journal;

import io.github.vertxdedup.benchmarks.report.ResultsFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The results file of {@code JournalBenchmark append}, read by {@link JournalReport}: one row per sync policy and
 * record form, in the order measured. Written and read as JSON (Gson).
 *
 * @param date when the run started, ISO-8601 UTC
 * @param loadAverage the system's 1-minute load average when the run started (-1 where the OS does not say)
 * @param rows the measurements in order
 */
public record JournalAppendResults(String date, double loadAverage, List<Row> rows) {

  /**
   * One measurement.
   *
   * @param policy the sync policy and how it was driven, e.g. {@code ASYNC (default)} or
   *     {@code SYNC, group commit}
   * @param idsPerRecord accepted ids per journal record (1, or a batch)
   * @param nsPerId mean nanoseconds per accepted id over the measured appends
   * @param idsPerSec accepted ids per second over the measured appends
   * @param notes what else the row needs to be read (fsync counts and costs), or empty
   */
  public record Row(String policy, int idsPerRecord, double nsPerId, double idsPerSec, String notes) {}

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
   * @throws IllegalArgumentException if it holds no rows
   */
  public static JournalAppendResults read(Path file) throws IOException {
    return ResultsFile.read(file, JournalAppendResults.class, JournalAppendResults::rows, "row");
  }
}
