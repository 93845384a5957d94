package io.github.vertxdedup.examples.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/**
 * The operator tools the ops tests run ({@code promtool}, {@code prometheus}), from Debian's {@code prometheus}
 * package, which {@code .ci/run} installs when it is missing.
 */
final class OpsTools {

  private OpsTools() {}

  /**
   * Finds a command on the {@code PATH}. Without it the calling test is skipped, except in CI ({@code CI=true}),
   * where it fails: CI must run it.
   *
   * @param command the command's name
   * @return its path
   */
  static Path require(String command) {
    Path found = onPath(command);
    if (found == null) {
      String why = command + " is not on the PATH: install Debian's prometheus package"
          + " (apt-get install -y prometheus)";
      assertThat("true".equals(System.getenv("CI"))).as(why + " (.ci/run does)").isFalse();
      Assumptions.abort(why);
    }
    return found;
  }

  private static Path onPath(String command) {
    String path = System.getenv("PATH");
    if (path == null) {
      return null;
    }
    for (String dir : path.split(File.pathSeparator)) {
      Path p = Path.of(dir, command);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }
}
