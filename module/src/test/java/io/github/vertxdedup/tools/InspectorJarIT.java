package io.github.vertxdedup.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.journal.ClaimEntry;
import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.JournalOptions;
import io.github.vertxdedup.journal.JournalVisitor;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.window.Fingerprinter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The inspector's executable jar, as {@code package} built it ({@code vertx-dedup-<version>-inspector.jar}): its
 * manifest carries the JDK packages {@code dedup.jvm.flags} opens and exports for Chronicle, its main method the
 * flags' system properties, and {@code java -jar} with no flag at all reads the journal of a live owner, in a child
 * JVM, while the owner (this JVM) holds the journal's lock. Runs at integration-test (failsafe), after package.
 */
class InspectorJarIT {

  private static final long T0 = 1_700_000_000_000L;
  private static final long WINDOW_MS = 60_000;

  @TempDir
  Path dir;

  @Test
  void manifest_shouldCarryTheOpensAndExportsOfTheProjectsJvmFlags() throws IOException {
    Map<String, List<String>> fromFlags = new TreeMap<>();
    for (String flag : projectFlags()) {
      if (flag.startsWith("--add-opens=") || flag.startsWith("--add-exports=")) {
        String[] kv = flag.split("=", 3); // --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
        assertThat(kv).as(flag).hasSize(3);
        assertThat(kv[2]).as("%s opens to the class path", flag).isEqualTo("ALL-UNNAMED");
        String entry = kv[0].equals("--add-opens") ? "Add-Opens" : "Add-Exports";
        fromFlags.computeIfAbsent(entry, k -> new ArrayList<>()).add(kv[1]);
      }
    }
    Attributes manifest;
    try (JarFile jar = new JarFile(inspectorJar().toFile())) {
      manifest = jar.getManifest().getMainAttributes();
    }

    assertThat(fromFlags).containsOnlyKeys("Add-Opens", "Add-Exports");
    fromFlags.forEach((entry, packages) -> assertThat(split(manifest.getValue(entry)))
        .as("%s of the inspector jar's manifest against dedup.jvm.flags", entry)
        .containsExactlyInAnyOrderElementsOf(packages));
    assertThat(manifest.getValue("Main-Class")).isEqualTo(JournalInspector.class.getName());
  }

  @Test
  void main_shouldSetTheSystemPropertiesOfTheProjectsJvmFlags() {
    Map<String, String> fromFlags = new TreeMap<>();
    for (String flag : projectFlags()) {
      if (flag.startsWith("-D")) {
        String[] kv = flag.substring(2).split("=", 2);
        fromFlags.put(kv[0], kv.length == 2 ? kv[1] : "");
      }
    }
    assertThat(fromFlags).isNotEmpty();
    assertThat(JournalInspector.JVM_PROPERTIES).isEqualTo(fromFlags);
  }

  @Test
  void javaJar_shouldReadTheJournalOfALiveOwnerWithoutItsLock() throws Exception {
    long fp = Fingerprinter.forScope("dedup/id").fingerprint("live-1");
    JournalOptions options = new JournalOptions().setSyncPolicy(SyncPolicy.NONE).setClock(() -> T0)
        .setRollCycle(JournalOptions.rollCycleFor(Duration.ofMillis(WINDOW_MS)));
    try (Journal owner = Journal.open(dir, options)) {
      owner.replay(new JournalVisitor() {
      });
      owner.appendAccept(fp, 0, 0, T0, T0 + WINDOW_MS);
      owner.appendOffsetCommit("orders", 3, 17);

      Run find = inspect("find", dir.toString(), "--window-ms", Long.toString(WINDOW_MS),
          "--now-ms", Long.toString(T0 + 1_000), "--id", "live-1");
      assertThat(find.code).as("exit code; stderr: %s", find.err).isZero();
      assertThat(find.out).contains("REMEMBERED until 2023-11-14T22:14:20Z");
      assertThat(find.err).isEmpty();

      // The owner still holds the journal and appends; the next look sees it.
      owner.appendOffsetCommit("orders", 3, 18);
      Run summary = inspect("summary", dir.toString(), "--window-ms", Long.toString(WINDOW_MS),
          "--now-ms", Long.toString(T0 + 1_000));
      assertThat(summary.code).as("exit code; stderr: %s", summary.err).isZero();
      assertThat(summary.out).contains("live entries (ids and keys remembered now): 1", "offset orders/3: 18");
      assertThat(summary.err).isEmpty();
    }
  }

  @Test
  void javaJar_shouldPrintTheBuildsVersionAndTheJournalFormatItReads() throws Exception {
    String expected = System.getProperty("project.version");
    assertThat(expected).as("project.version (set by the pom)").isNotBlank();

    Run version = inspect("--version");

    assertThat(version.code).as("exit code; stderr: %s", version.err).isZero();
    assertThat(version.out.lines()).containsExactly("journal-inspector " + expected + " (vertx-dedup)",
        "journal record format: version " + ClaimEntry.CURRENT_FORMAT + " (the newest it reads)");
    assertThat(inspectorJar().getFileName().toString()).as("the jar of that build")
        .isEqualTo("vertx-dedup-" + expected + "-inspector.jar");
  }

  private record Run(int code, String out, String err) {
  }

  /** {@code java -jar <inspector jar> args}, with no JVM flag: the jar must bring what it needs. */
  private Run inspect(String... args) throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> command = new ArrayList<>(List.of(java, "-jar", inspectorJar().toString()));
    command.addAll(Arrays.asList(args));
    Path out = dir.getParent().resolve("inspector.out");
    Path err = dir.getParent().resolve("inspector.err");
    Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("the inspector did not exit within 60 s: " + command);
    }
    return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  private static Path inspectorJar() {
    Path jar = Path.of(System.getProperty("inspector.jar", ""));
    assertThat(jar).as("the inspector jar (system property inspector.jar, set by the pom)").isRegularFile();
    return jar;
  }

  private static List<String> projectFlags() {
    String flags = System.getProperty("dedup.jvm.flags", "").trim();
    assertThat(flags).as("dedup.jvm.flags (set by the pom)").isNotEmpty();
    return List.of(flags.split("\\s+"));
  }

  private static List<String> split(String value) {
    return value == null ? List.of() : List.of(value.trim().split("\\s+"));
  }
}
