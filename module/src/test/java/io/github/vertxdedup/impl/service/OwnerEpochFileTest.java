package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.impl.service.OwnerEpochFile.Contents;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code owner-epoch} file of a partition's journal directory: the epoch of the owner that opened it, the instant
 * until which new ids are unvouched if that owner took over without its predecessor's journal, and its term id; and
 * the files of earlier builds (one or two lines, no term id).
 */
class OwnerEpochFileTest {

  @TempDir
  Path dir;

  @Test
  void shouldReadNothingWithoutAFile() {
    assertThat(OwnerEpochFile.read(dir.resolve("absent"))).isEqualTo(Contents.NONE);
  }

  @Test
  void shouldReadBackTheEpochTheMarkAndTheTerm() {
    OwnerEpochFile.write(dir.resolve("p"), 7, 1_700_000_060_000L, -42);
    assertThat(OwnerEpochFile.read(dir.resolve("p"))).isEqualTo(new Contents(7, 1_700_000_060_000L, -42));
    OwnerEpochFile.write(dir.resolve("p"), 8, OwnerEpochFile.NO_MARK, 99);
    assertThat(OwnerEpochFile.read(dir.resolve("p"))).isEqualTo(new Contents(8, OwnerEpochFile.NO_MARK, 99));
    assertThat(dir.resolve("p").resolve("owner-epoch.tmp")).doesNotExist();
  }

  @Test
  void shouldReadTheFilesOfEarlierBuildsAsNamingNoTerm() throws Exception {
    Files.writeString(dir.resolve(OwnerEpochFile.NAME), "3\n");
    assertThat(OwnerEpochFile.read(dir)).isEqualTo(new Contents(3, OwnerEpochFile.NO_MARK, OwnerEpochFile.NO_TERM));
    Files.writeString(dir.resolve(OwnerEpochFile.NAME), "5\n1700000060000\n");
    assertThat(OwnerEpochFile.read(dir)).isEqualTo(new Contents(5, 1_700_000_060_000L, OwnerEpochFile.NO_TERM));
  }

  @Test
  void shouldTreatAFileWithoutANumberAsNoEpoch() throws Exception {
    Files.writeString(dir.resolve(OwnerEpochFile.NAME), "garbage\n");
    assertThat(OwnerEpochFile.read(dir)).isEqualTo(Contents.NONE);
    Files.writeString(dir.resolve(OwnerEpochFile.NAME), "4\nlater\nsoon\n");
    assertThat(OwnerEpochFile.read(dir)).isEqualTo(new Contents(4, OwnerEpochFile.NO_MARK, OwnerEpochFile.NO_TERM));
  }
}
