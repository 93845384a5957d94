package io.github.vertxdedup.examples.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The child-JVM command line, the project's flags as the build filtered them, and {@code du -sk}. */
class ProcessesTest {

  @TempDir
  Path dir;

  @Test
  void javaCommand_putsTheOptionsBeforeTheClasspathAndTheArgumentsAfterTheMainClass() {
    List<String> cmd = Processes.javaCommand(List.of("-Xmx64m", "-Da=b"), "x.jar", "p.Main", List.of("one", "two"));
    assertThat(cmd.get(0)).isEqualTo(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    assertThat(cmd.subList(1, cmd.size())).containsExactly("-Xmx64m", "-Da=b", "-cp", "x.jar", "p.Main", "one", "two");
  }

  @Test
  void jvmFlags_areTheParentPomsFlagsAsTheBuildFilteredThem() throws IOException {
    assertThat(Processes.jvmFlags()).contains("--add-exports=java.base/sun.nio.ch=ALL-UNNAMED")
        .noneMatch(f -> f.contains("${") || f.isBlank());
  }

  @Test
  void duKib_countsTheAllocatedBlocksOfADirectory() throws Exception {
    Files.write(dir.resolve("data"), new byte[64 * 1024]);
    assertThat(Processes.duKib(dir)).isGreaterThanOrEqualTo(64);
  }

  @Test
  void duKib_namesTheDirectoryWhenDuFails() {
    Path missing = dir.resolve("missing");
    assertThatThrownBy(() -> Processes.duKib(missing)).isInstanceOf(IOException.class)
        .hasMessageStartingWith("du -sk " + missing + " failed: ");
  }
}
