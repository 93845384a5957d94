package io.github.vertxdedup.benchmarks.report;

import com.google.gson.GsonBuilder;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.function.Function;

/**
 * Reads and writes a harness's results file: one record type per harness, stored as indented JSON (Gson), so a
 * report main can draw its table and plot from a run without repeating it.
 *
 * <p>Stateless and thread-safe.
 */
public final class ResultsFile {

  private ResultsFile() {}

  /**
   * Writes {@code results} as indented JSON, creating parent directories.
   *
   * @param results the results record
   * @param file the file (replaced if it exists)
   * @throws IOException if it cannot be written
   */
  public static void write(Object results, Path file) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      new GsonBuilder().setPrettyPrinting().create().toJson(results, w);
    }
  }

  /**
   * Reads a results file that {@link #write} wrote and checks that it holds measurements.
   *
   * @param file the file
   * @param type the results record type
   * @param measurements the record's list of measurements (rows, rounds)
   * @param what the name of one measurement, for the error ("row", "round")
   * @param <T> the results record type
   * @return the results
   * @throws IOException if it cannot be read
   * @throws IllegalArgumentException if the file is empty or its list of measurements is missing or empty
   */
  public static <T> T read(Path file, Class<T> type, Function<T, ? extends Collection<?>> measurements, String what)
      throws IOException {
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      T results = new GsonBuilder().create().fromJson(r, type);
      if (results == null || measurements.apply(results) == null || measurements.apply(results).isEmpty()) {
        throw new IllegalArgumentException("results file " + file + " must hold at least one " + what);
      }
      return results;
    }
  }
}
