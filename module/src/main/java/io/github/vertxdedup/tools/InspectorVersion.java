package io.github.vertxdedup.tools;

import io.github.vertxdedup.journal.ClaimEntry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine;

/**
 * What {@code journal-inspector --version} prints: the version of the {@code vertx-dedup} build the inspector is part
 * of, and the newest journal record format it reads.
 *
 * <p>The build's version comes from {@value #RESOURCE}, which Maven filters at {@code process-resources}
 * ({@code module/pom.xml}, {@code <resources>}), so the module's classes and the {@code -inspector.jar} carry the same
 * value. The journal format is {@link ClaimEntry#CURRENT_FORMAT}: the version the journal appends, and the newest its
 * reader accepts (a newer record fails the read with {@code UnknownFormatVersionException}). Stateless, thread-safe.
 */
final class InspectorVersion implements CommandLine.IVersionProvider {

  /** The class-path resource holding {@code version=<project.version>}. */
  static final String RESOURCE = "/io/github/vertxdedup/tools/inspector.properties";

  @Override
  public String[] getVersion() {
    return new String[] {
        "journal-inspector " + buildVersion() + " (vertx-dedup)",
        "journal record format: version " + ClaimEntry.CURRENT_FORMAT + " (the newest it reads)"};
  }

  /**
   * @return the version of the build, as Maven wrote it into {@value #RESOURCE}
   * @throws IllegalStateException if the resource is missing, has no {@code version}, or was not filtered (the
   *     classes were not built by Maven)
   * @throws UncheckedIOException if the resource cannot be read
   */
  static String buildVersion() {
    Properties p = new Properties();
    try (InputStream in = InspectorVersion.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("the inspector's version resource " + RESOURCE + " is missing from the"
            + " class path");
      }
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the inspector's version resource " + RESOURCE, e);
    }
    String v = p.getProperty("version");
    if (v == null || v.isBlank() || v.contains("${")) {
      throw new IllegalStateException("the inspector's version resource " + RESOURCE + " holds no filtered version"
          + " (version=" + v + "): build the module with Maven");
    }
    return v.trim();
  }
}
