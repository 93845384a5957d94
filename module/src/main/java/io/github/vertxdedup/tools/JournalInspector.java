package io.github.vertxdedup.tools;

import java.time.Instant;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * Command-line inspector of one partition's journal ({@code <journalDir>/<address>/<partition>}): {@code dump} its
 * records ({@link DumpCommand}), {@code find} an id (was it seen, when, at which record, is it still live;
 * {@link FindCommand}), {@code summary} (live ids, oldest and newest, bytes per id, committed offsets per
 * topic-partition; {@link SummaryCommand}). See {@code docs/journal.md}; run it with {@code java -jar} on the
 * module's {@code -inspector.jar} (which carries the JVM flags Chronicle needs) or {@code scripts/journal-inspector}.
 *
 * <p>It reads the journal as a restarting partition would, through a read-only view
 * ({@link io.github.vertxdedup.journal.JournalContents#readOnly}): it takes no lock and writes to no file, so it reads
 * the journal of a running partition (the records complete when it reached them) as well as a stopped one's, and
 * replays from the oldest cycle that may still hold a live entry (older cycles are deletable and not read). Liveness is
 * judged at {@code --now-ms} (default: the current time), by the journal's own recovery
 * ({@link io.github.vertxdedup.journal.internal.Recovery}). {@code --version} prints the build's version and the
 * journal record format it reads ({@link InspectorVersion}).
 */
@Command(name = "journal-inspector", mixinStandardHelpOptions = true, versionProvider = InspectorVersion.class,
    description = "Inspects the journal of one dedup partition.",
    subcommands = {DumpCommand.class, FindCommand.class, SummaryCommand.class})
public final class JournalInspector implements Runnable {

  /**
   * The system properties of the project's JVM flags ({@code dedup.jvm.flags} in the parent {@code pom.xml}), which
   * {@link #main} sets where the command line did not: a {@code java -jar} of the inspector's jar carries the flags'
   * {@code --add-opens} and {@code --add-exports} in its manifest, but a manifest cannot set a system property.
   * {@code chronicle.analytics.disable} stops Chronicle from sending usage data over the network,
   * {@code chronicle.announcer.disable} removes its banner.
   */
  static final Map<String, String> JVM_PROPERTIES = Map.of(
      "chronicle.analytics.disable", "true",
      "chronicle.announcer.disable", "true");

  /**
   * Without an SLF4J binding on the class path (the inspector's jar has none), {@link #main} chooses SLF4J's
   * no-operation provider, so that SLF4J prints no "no providers" warning into the output; a torn record, which the
   * journal would log, is counted in the {@code dump} and {@code summary} output all the same. With a binding
   * ({@code scripts/journal-inspector}'s class path, an application's), nothing changes.
   */
  private static final Map<String, String> NO_BINDING = Map.of(
      "slf4j.provider", "org.slf4j.helpers.NOP_FallbackServiceProvider",
      "slf4j.internal.verbosity", "WARN");

  @Spec
  CommandSpec spec;

  /**
   * Runs the inspector and exits with its exit code (0 success, 1 id not found, 2 bad usage or unreadable journal).
   * First sets {@link #JVM_PROPERTIES} where the command line did not set them, before any Chronicle class loads.
   *
   * @param args the command line; {@code --help} lists the commands
   */
  public static void main(String[] args) {
    JVM_PROPERTIES.forEach(JournalInspector::setIfAbsent);
    if (JournalInspector.class.getResource("/META-INF/services/org.slf4j.spi.SLF4JServiceProvider") == null) {
      NO_BINDING.forEach(JournalInspector::setIfAbsent);
    }
    System.exit(commandLine().execute(args));
  }

  private static void setIfAbsent(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }

  /** @return the command line, for tests and embedding */
  public static CommandLine commandLine() {
    return new CommandLine(new JournalInspector());
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  static String time(long epochMs) {
    return Instant.ofEpochMilli(epochMs).toString();
  }

  static String hex(long v) {
    return String.format("%016x", v);
  }

  static String optHex(long v) {
    return v == 0 ? "-" : hex(v);
  }
}
