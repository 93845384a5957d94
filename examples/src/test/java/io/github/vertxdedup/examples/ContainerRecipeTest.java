package io.github.vertxdedup.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The container recipe ({@code docker/Dockerfile}) and the {@code JAVA_TOOL_OPTIONS} line of
 * {@code docs/operations.md} carry the JVM flags Chronicle needs: exactly the parent pom's {@code dedup.jvm.flags},
 * in its order, which is also what surefire starts this test's JVM with. No Docker engine is needed: the files are
 * read, not built.
 */
class ContainerRecipeTest {

  private static final Pattern TOOL_OPTIONS = Pattern.compile("JAVA_TOOL_OPTIONS=\"([^\"]*)\"");

  @Test
  void dockerfile_shouldSetJavaToolOptionsToTheProjectsJvmFlags() throws IOException {
    List<String> lines = toolOptions(Path.of("docker", "Dockerfile"));

    assertThat(lines).as("JAVA_TOOL_OPTIONS lines of docker/Dockerfile").hasSize(1);
    assertThat(lines.get(0)).as("docker/Dockerfile's ENV JAVA_TOOL_OPTIONS").isEqualTo(String.join(" ", pomFlags()));
    assertThat(read(Path.of("docker", "Dockerfile"))).contains("ENV JAVA_TOOL_OPTIONS=\"" + lines.get(0) + "\"");
  }

  @Test
  void operationsGuide_shouldShowJavaToolOptionsWithTheProjectsJvmFlags() throws IOException {
    List<String> lines = toolOptions(Path.of("docs", "operations.md"));

    assertThat(lines).as("JAVA_TOOL_OPTIONS lines of docs/operations.md").isNotEmpty()
        .allSatisfy(line -> assertThat(line).isEqualTo(String.join(" ", pomFlags())));
  }

  @Test
  void projectsJvmFlags_shouldBeTheFlagsThisTestRunsWith() {
    // surefire's argLine is ${dedup.jvm.flags}: what the recipe carries is what every test ran with.
    assertThat(ManagementFactory.getRuntimeMXBean().getInputArguments()).containsAll(pomFlags());
  }

  /** The values of every {@code JAVA_TOOL_OPTIONS="..."} in a file of the repository. */
  private static List<String> toolOptions(Path file) throws IOException {
    Matcher m = TOOL_OPTIONS.matcher(read(file));
    List<String> values = new ArrayList<>();
    while (m.find()) {
      values.add(m.group(1));
    }
    return values;
  }

  /** The parent pom's {@code dedup.jvm.flags}, one flag per element. */
  private static List<String> pomFlags() {
    try {
      Matcher m = Pattern.compile("<dedup\\.jvm\\.flags>(.*?)</dedup\\.jvm\\.flags>").matcher(read(Path.of("pom.xml")));
      assertThat(m.find()).as("dedup.jvm.flags in pom.xml").isTrue();
      List<String> flags = List.of(m.group(1).trim().split("\\s+"));
      assertThat(flags).as("dedup.jvm.flags").hasSizeGreaterThanOrEqualTo(3);
      return flags;
    } catch (IOException e) {
      throw new AssertionError("cannot read pom.xml", e);
    }
  }

  private static String read(Path relative) throws IOException {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !(Files.isDirectory(dir.resolve("docs")) && Files.isDirectory(dir.resolve("examples")))) {
      dir = dir.getParent();
    }
    assertThat(dir).as("the repository root (a directory with docs/ and examples/) above the working directory")
        .isNotNull();
    return Files.readString(dir.resolve(relative), StandardCharsets.UTF_8);
  }
}
