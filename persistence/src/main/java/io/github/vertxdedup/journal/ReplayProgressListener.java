package io.github.vertxdedup.journal;

/**
 * Receives replay progress. Called on the replaying thread; must be quick. The default listener
 * ({@link JournalOptions#DEFAULT_PROGRESS_LISTENER}) logs through SLF4J: the reports while the replay runs at
 * {@code INFO}, the final one at {@code DEBUG}.
 */
@FunctionalInterface
public interface ReplayProgressListener {

  /**
   * Reports progress.
   *
   * @param journal the journal directory, for the log line
   * @param progress where the replay stands
   * @param done true for the final report
   */
  void onProgress(java.nio.file.Path journal, ReplayProgress progress, boolean done);
}
