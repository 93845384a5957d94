package io.github.vertxdedup.examples.kafka;

import io.github.vertxdedup.kafka.testkit.LocalKafka;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The command line shared by the two Kafka examples: {@code [bootstrap-servers|- [journal-dir]]}, checked before
 * anything starts, then one run on a topic and group of its own.
 *
 * <p>Each run publishes to {@code payment.succeeded-<run id>} and consumes as group {@code <group>-<run id>}
 * ({@code run id}: the start time in ms, base 36, made unique within the JVM). The windows live under {@code <journal-dir>/<group>-<run id>/}, so a
 * rerun on the same journal directory starts windows of its own beside the earlier runs' (a group's journal also
 * holds the offsets it consumed to: reusing it with a new topic or broker would skip every record), and a rerun on
 * the same external cluster does not read the records earlier runs left on the topic.
 *
 * <p>Exit codes: 0 every id applied exactly once; 1 not so; 2 bad arguments; 3 the run failed (the broker not
 * reachable, the consumer did not consume the topic in time). Not thread-safe; one run per instance.
 */
abstract class KafkaExampleCommand implements Callable<Integer> {

  /** The last run id's instant, epoch ms: run ids of one JVM differ even within a millisecond. */
  private static final java.util.concurrent.atomic.AtomicLong LAST_RUN_MS = new java.util.concurrent.atomic.AtomicLong();

  /** Exit code: the run failed. */
  static final int EXIT_FAILED = 3;

  @Spec
  CommandSpec spec;

  @Parameters(index = "0", arity = "0..1", defaultValue = "-", paramLabel = "bootstrap-servers",
      description = "Kafka bootstrap servers, HOST:PORT[,HOST:PORT...]; - (the default) starts a broker in-process.")
  String bootstrap;

  @Parameters(index = "1", arity = "0..1", paramLabel = "journal-dir",
      description = "Where the windows are journaled (created if missing; default: a new temporary directory).")
  Path journalDir;

  /** @return the mode's name for the output, e.g. {@code record-first} */
  abstract String name();

  /** @return the group's name before the run id, e.g. {@code receipts} */
  abstract String groupPrefix();

  /**
   * One run.
   *
   * @param servers the cluster
   * @param topic this run's topic
   * @param group this run's group
   * @param dir the journal directory
   * @return the counts
   * @throws Exception as the example's {@code run}
   */
  abstract RunSummary run(String servers, String topic, String group, Path dir) throws Exception;

  /** Prints what follows the summary (e.g. the dead letters). */
  void after() {}

  @Override
  public Integer call() throws Exception {
    String servers = "-".equals(bootstrap) ? null : bootstrap;
    if (servers != null) {
      for (String server : servers.split(",", -1)) {
        Matcher m = Pattern.compile("(.+):(\\d{1,5})").matcher(server.trim());
        if (!m.matches() || Integer.parseInt(m.group(2)) < 1 || Integer.parseInt(m.group(2)) > 65_535) {
          throw new ParameterException(spec.commandLine(), "bootstrap-servers must be - or"
              + " HOST:PORT[,HOST:PORT...] with ports 1..65535 but held '" + server + "'");
        }
      }
    }
    Path dir;
    try {
      dir = journalDir != null ? Files.createDirectories(journalDir) : Files.createTempDirectory(groupPrefix()
          + "-journal");
      Files.delete(Files.createTempFile(dir, "write-test", ".tmp"));
    } catch (IOException e) {
      throw new ParameterException(spec.commandLine(), "journal-dir " + journalDir + " cannot be created or"
          + " written: " + e);
    }
    String runId = Long.toString(LAST_RUN_MS.updateAndGet(last -> Math.max(last + 1, System.currentTimeMillis())),
        36);
    String topic = "payment.succeeded-" + runId;
    String group = groupPrefix() + "-" + runId;
    try (LocalKafka local = servers == null ? LocalKafka.start(3) : null) {
      String cluster = servers != null ? servers : local.bootstrapServers();
      System.out.println(name() + ": topic " + topic + ", group " + group + ", journal " + dir.resolve(group));
      RunSummary summary;
      try {
        summary = run(cluster, topic, group, dir);
      } catch (TimeoutException e) {
        System.out.println(name() + ": FAILED: " + e.getMessage());
        return EXIT_FAILED;
      }
      System.out.println(name() + ": " + summary);
      after();
      return summary.exactlyOnce() ? 0 : 1;
    }
  }

  /**
   * Parses the arguments, runs and exits the JVM with the exit code.
   *
   * @param command the example
   * @param args the command line
   */
  static void main(KafkaExampleCommand command, String[] args) {
    CommandLine cl = new CommandLine(command).setExecutionExceptionHandler((e, cmd, parsed) -> {
      cmd.getErr().println(command.name() + ": FAILED: " + e);
      e.printStackTrace(cmd.getErr());
      return EXIT_FAILED;
    });
    System.exit(cl.execute(args));
  }
}
