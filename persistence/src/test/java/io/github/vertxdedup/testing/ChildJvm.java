package io.github.vertxdedup.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * Starts a class's {@code main} in a child JVM on the production classpath, for the tests that kill a process with
 * SIGKILL and check what survives it (the journal, service and Kafka consumer crash tests).
 *
 * <p>The child's classpath is what an application would have: the module's own classes, its runtime dependencies,
 * an SLF4J binding, and the child class (with its nested classes) copied alone into a scratch directory, so that no
 * JUnit, AssertJ or other test class is there to hide a missing dependency. The build passes the first two as system
 * properties of the test JVM (surefire's {@code systemPropertyVariables}): {@value #CLASSES_PROPERTY} (the module's
 * {@code target/classes}) and {@value #RUNTIME_CLASSPATH_PROPERTY} (a file holding the runtime classpath, written
 * by {@code maven-dependency-plugin:build-classpath}). The binding is the tests' own (logback, the jars this JVM
 * loaded it from; the library depends on {@code slf4j-api} alone), configured by the tests' {@code logback-test.xml}
 * ({@code -Dlogback.configurationFile}), so the child's log lines reach its standard error as the tests' do. The
 * child JVM starts with the parent pom's {@code dedup.jvm.flags} (Chronicle Queue needs them on Java 17), read from
 * the system property of that name, and a heap of {@value #HEAP}.
 *
 * <p>Not thread-safe: used from the test's thread. Redirects, timeouts and the kill stay with the test, which knows
 * what it reads from the child and how long each step may take.
 */
public final class ChildJvm {

  /** System property naming the directory of the module's compiled production classes. */
  public static final String CLASSES_PROPERTY = "production.classes";

  /** System property naming the file that holds the module's runtime classpath (path-separator separated). */
  public static final String RUNTIME_CLASSPATH_PROPERTY = "production.runtime.classpath";

  /** The maximum heap every child gets. */
  public static final String HEAP = "-Xmx256m";

  /** Classes of the tests' SLF4J binding, whose jars the child gets: logback's classic and core. */
  private static final List<String> BINDING_CLASSES = List.of("ch.qos.logback.classic.Logger",
      "ch.qos.logback.core.Appender");

  private final Class<?> main;
  private final List<String> classpath;
  /** The tests' logging configuration, or null if this JVM has none on its class path. */
  private final String loggingConfig;

  private ChildJvm(Class<?> main, List<String> classpath, String loggingConfig) {
    this.main = main;
    this.classpath = classpath;
    this.loggingConfig = loggingConfig;
  }

  /**
   * Prepares a child that runs {@code main}: copies {@code main}'s class files into {@code scratch/child-classes}
   * and builds the production classpath.
   *
   * @param main the class whose {@code main} the child runs; compiled into a directory (test classes are)
   * @param scratch a directory the test owns (its {@code @TempDir}); {@code child-classes} is created in it and must
   *     not exist yet
   * @param companions test classes {@code main} uses, copied beside it (each with its nested classes)
   * @return the child, ready to {@link #command(List, List) start}
   * @throws IOException if copying the class files or reading the runtime classpath file fails
   * @throws AssertionError if the build did not set {@value #CLASSES_PROPERTY} or {@value #RUNTIME_CLASSPATH_PROPERTY},
   *     or the classpath holds JUnit, AssertJ or a {@code test-classes} directory
   */
  public static ChildJvm of(Class<?> main, Path scratch, Class<?>... companions) throws IOException {
    Objects.requireNonNull(main, "main");
    String classes = System.getProperty(CLASSES_PROPERTY);
    String runtime = System.getProperty(RUNTIME_CLASSPATH_PROPERTY);
    assertThat(classes).as("system property %s (set by the build)", CLASSES_PROPERTY).isNotNull();
    assertThat(runtime).as("system property %s (set by the build)", RUNTIME_CLASSPATH_PROPERTY).isNotNull();
    Path childDir = scratch.resolve("child-classes");
    copyClassFiles(main, childDir);
    for (Class<?> c : companions) {
      copyClassFiles(c, childDir);
    }
    List<String> cp = new ArrayList<>();
    cp.add(classes);
    cp.addAll(Arrays.asList(Files.readString(Path.of(runtime)).trim().split(File.pathSeparator)));
    cp.addAll(bindingJars());
    cp.add(childDir.toString());
    assertThat(cp).map(e -> Path.of(e).getFileName().toString())
        .noneMatch(name -> name.contains("junit") || name.contains("assertj") || name.equals("test-classes"));
    URL config = ChildJvm.class.getClassLoader().getResource("logback-test.xml");
    String loggingConfig = config != null && config.getProtocol().equals("file") ? Path.of(toUri(config)).toString()
        : null;
    return new ChildJvm(main, List.copyOf(cp), loggingConfig);
  }

  /** Copies the class files of {@code c} and its nested classes into {@code childDir}, under its package path. */
  private static void copyClassFiles(Class<?> c, Path childDir) throws IOException {
    String relative = c.getName().replace('.', '/');
    Path source = Path.of(c.getProtectionDomain().getCodeSource().getLocation().getPath());
    Path packageDir = source.resolve(relative).getParent();
    Path target = Files.createDirectories(childDir.resolve(relative).getParent());
    String simpleName = c.getName().substring(c.getName().lastIndexOf('.') + 1);
    try (Stream<Path> files = Files.list(packageDir)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        String name = f.getFileName().toString();
        if (name.equals(simpleName + ".class") || name.startsWith(simpleName + "$")) {
          Files.copy(f, target.resolve(name));
        }
      }
    }
  }

  /** @return the jars of the tests' SLF4J binding as this JVM loaded them; none if it has no such binding */
  private static List<String> bindingJars() {
    List<String> jars = new ArrayList<>();
    for (String name : BINDING_CLASSES) {
      try {
        jars.add(Path.of(toUri(Class.forName(name).getProtectionDomain().getCodeSource().getLocation())).toString());
      } catch (ClassNotFoundException e) {
        return List.of();
      }
    }
    return jars;
  }

  private static URI toUri(URL url) {
    try {
      return url.toURI();
    } catch (URISyntaxException e) {
      throw new IllegalStateException("not a file location: " + url, e);
    }
  }

  /**
   * Returns the child's classpath: the module's classes, its runtime dependencies, the tests' SLF4J binding, the
   * copied child class.
   *
   * @return the entries in order; immutable
   */
  public List<String> classpath() {
    return classpath;
  }

  /**
   * Returns a process builder for one run of the child: this JVM's {@code java}, {@code dedup.jvm.flags},
   * {@value #HEAP}, the tests' logging configuration, {@code jvmArgs}, the classpath, the main class and
   * {@code args}. The caller sets the redirects and starts it.
   *
   * @param jvmArgs further JVM options (for example {@code -Djava.io.tmpdir=...}); may be empty
   * @param args the arguments of {@code main}
   * @return a new builder; empty arguments are left out
   */
  public ProcessBuilder command(List<String> jvmArgs, List<String> args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(Arrays.asList(System.getProperty("dedup.jvm.flags", "").trim().split("\\s+")));
    cmd.add(HEAP);
    if (loggingConfig != null) {
      cmd.add("-Dlogback.configurationFile=" + loggingConfig);
    }
    cmd.addAll(jvmArgs);
    cmd.add("-cp");
    cmd.add(String.join(File.pathSeparator, classpath));
    cmd.add(main.getName());
    cmd.addAll(args);
    cmd.removeIf(String::isEmpty);
    return new ProcessBuilder(cmd);
  }
}
