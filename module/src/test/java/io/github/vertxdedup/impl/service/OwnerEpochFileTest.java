package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code owner-epoch} file of a partition's journal directory: the epoch of the owner that opened it and, if
 * that owner took over without its predecessor's journal, the instant until which new ids are unvouched.
 */
class OwnerEpochFileTest {

  @TempDir
  Path dir;

  @Test
  void shouldReadNothingWithoutAFile() {
    assertThat(OwnerEpochFile.read(dir.resolve("absent"))).containsExactly(-1, Long.MIN_VALUE);
  }

  @Test
  void shouldReadBackTheEpochAndTheMark() {
    OwnerEpochFile.write(dir.resolve("p"), 7, 1_700_000_060_000L);
    assertThat(OwnerEpochFile.read(dir.resolve("p"))).containsExactly(7, 1_700_000_060_000L);
    OwnerEpochFile.write(dir.resolve("p"), 8, Long.MIN_VALUE);
    assertThat(OwnerEpochFile.read(dir.resolve("p"))).containsExactly(8, Long.MIN_VALUE);
    assertThat(dir.resolve("p").resolve("owner-epoch.tmp")).doesNotExist();
  }

  @Test
  void shouldReadAFileOfOneLineAsAnEpochWithoutAMark() throws Exception {
    Files.writeString(dir.resolve(OwnerEpochFile.NAME), "3\n");
    assertThat(OwnerEpochFile.read(dir)).containsExactly(3, Long.MIN_VALUE);
  }

  @Test
  void shouldTreatAFileWithoutANumberAsNoEpoch() throws Exception {
    Files.writeString(dir.resolve(OwnerEpochFile.NAME), "garbage\n");
    assertThat(OwnerEpochFile.read(dir)).containsExactly(-1, Long.MIN_VALUE);
    Files.writeString(dir.resolve(OwnerEpochFile.NAME), "4\nlater\n");
    assertThat(OwnerEpochFile.read(dir)).containsExactly(4, Long.MIN_VALUE);
  }
}
