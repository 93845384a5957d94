package io.github.vertxdedup.tools;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.journal.JournalContents;
import io.github.vertxdedup.journal.JournalVisitor;
import io.github.vertxdedup.journal.LiveEntrySink;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The options every inspector command shares: the journal to read and the instant to judge it at. A value out of its
 * range is a usage error (exit code 2) whose message names the option and the range.
 */
final class JournalArgs {

  @Parameters(index = "0", paramLabel = "DIR",
      description = "a partition's journal directory, <journalDir>/<address>/<partition>, or"
          + " <journalDir>/<group.id>/<topic>-<partition> for a Kafka window")
  Path dir;

  @Option(names = "--window-ms", required = true,
      description = "the service's windowMs: the journal's roll cycle is derived from it")
  long windowMs;

  @Option(names = "--now-ms", description = "judge liveness at this epoch millisecond (default: now)")
  Long nowMs;

  private Long resolvedNowMs;

  /** @return the instant to judge at: {@code --now-ms}, else the current time, read once per command */
  long now() {
    if (resolvedNowMs == null) {
      resolvedNowMs = nowMs != null ? nowMs : System.currentTimeMillis();
    }
    return resolvedNowMs;
  }

  /** Refuses a value outside its range, as a usage error naming the option and the range. */
  void validate(CommandSpec spec) {
    if (windowMs <= 0 || windowMs > DedupOptions.MAX_WINDOW_MS) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--window-ms must be 1 .. "
          + DedupOptions.MAX_WINDOW_MS + " (366 days, the longest windowMs a service takes) but was " + windowMs);
    }
    if (nowMs != null && nowMs < 0) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--now-ms must be >= 0 (epoch milliseconds) but was " + nowMs);
    }
  }

  /**
   * Reads the journal at {@link #now()} as a restart would, through the read-only view
   * ({@link JournalContents#readOnly}): no lock taken and no file written, so the partition may be running.
   *
   * @param live receives the entries a restart would remember
   * @param records receives every record as it is read
   * @return what the journal holds
   * @throws CommandLine.ParameterException if an option is out of range or DIR holds no journal
   */
  JournalContents read(CommandSpec spec, LiveEntrySink live, JournalVisitor records) {
    validate(spec);
    if (!JournalContents.isJournalDirectory(dir)) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "DIR must be a journal directory (with .cq4 cycle files) but " + dir + " has none");
    }
    return JournalContents.readOnly(dir, windowMs, now(), live, records);
  }
}
