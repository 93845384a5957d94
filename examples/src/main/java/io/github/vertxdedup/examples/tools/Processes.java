package io.github.vertxdedup.examples.tools;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The processes the demo, the examples' tools and the benchmarks start: a child JVM that runs a class's {@code main}
 * (with the project's JVM flags, or the flags the caller chooses), and {@code du -sk}, which reads a directory's
 * allocated size (Chronicle's cycle files are sparse, so their length says little). One place for both, so that every
 * harness starts its children alike.
 *
 * <p>The project's JVM flags are the parent pom's {@code dedup.jvm.flags} (Chronicle Queue needs them on Java 17),
 * which the build copies into the resource {@code jvm.flags} beside this class. Stateless, so thread-safe.
 */
public final class Processes {

  private Processes() {
  }

  /**
   * Returns the project's JVM flags, read from the {@code jvm.flags} resource.
   *
   * @return the flags, split on whitespace
   * @throws IOException if the resource is missing or was not filtered by the build
   */
  public static List<String> jvmFlags() throws IOException {
    try (InputStream in = Processes.class.getResourceAsStream("jvm.flags")) {
      if (in == null) {
        throw new IOException("resource jvm.flags is missing beside " + Processes.class.getName()
            + "; build with mvn -pl examples -am package");
      }
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
      if (text.contains("${")) {
        throw new IOException("resource jvm.flags was not filtered by Maven (it reads '" + text + "')");
      }
      return text.isEmpty() ? List.of() : Arrays.asList(text.split("\\s+"));
    }
  }

  /**
   * Returns the command line of a child JVM: this JVM's {@code java}, {@code jvmOptions}, the classpath, the main
   * class and its arguments. The caller sets the redirects and starts it ({@link ProcessBuilder}).
   *
   * @param jvmOptions the JVM's options, in order (for example {@link #jvmFlags()} and a heap size)
   * @param classpath the classpath, entries separated by {@link java.io.File#pathSeparator}
   * @param mainClass the fully qualified name of the class whose {@code main} the child runs
   * @param args the arguments of {@code main}
   * @return a new, modifiable list
   */
  public static List<String> javaCommand(List<String> jvmOptions, String classpath, String mainClass,
      List<String> args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmOptions);
    cmd.add("-cp");
    cmd.add(classpath);
    cmd.add(mainClass);
    cmd.addAll(args);
    return cmd;
  }

  /**
   * Returns the disk space a directory's files take ({@code du -sk}: allocated blocks, not file lengths). Blocking:
   * waits for {@code du}. Linux and macOS.
   *
   * @param dir the directory
   * @return KiB allocated
   * @throws IOException if {@code du} cannot be started or fails (its output in the message)
   * @throws NumberFormatException if its output does not start with a number
   * @throws InterruptedException if interrupted while waiting for {@code du}
   */
  public static long duKib(Path dir) throws IOException, InterruptedException {
    Process du = new ProcessBuilder("du", "-sk", dir.toString()).redirectErrorStream(true).start();
    String out = new String(du.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    if (du.waitFor() != 0) {
      throw new IOException("du -sk " + dir + " failed: " + out);
    }
    return Long.parseLong(out.split("\\s+")[0]);
  }
}
