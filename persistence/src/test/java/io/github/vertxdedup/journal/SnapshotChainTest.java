package io.github.vertxdedup.journal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chain of a snapshot's block checksums: whole blocks, each intact, moved inside a file, copied over another or
 * taken from another snapshot fail the check (each block's checksum alone, and the end block's totals, which count
 * items, do not see it); a file of the unchained format version 1 is still read.
 */
class SnapshotChainTest {

  private static final long CYCLE_MS = 1_000;
  private static final long OWNER_KEY = 4_000;
  private static final int ENTRIES_BLOCK = SnapshotEntries.BLOCK_BYTES;
  private static final int CLAIMS_BLOCK = SnapshotFile.BLOCK_HEADER + 1_024 * (57 + 1) + 4;

  @TempDir
  Path tmp;

  /** A snapshot of {@code n} entries in table order, fingerprints {@code from .. from + n - 1}. */
  private Path entries(String name, long from, int n) {
    Long[] fps = new Long[n];
    for (int i = 0; i < n; i++) {
      fps[i] = from + i;
    }
    Arrays.sort(fps, (a, b) -> Long.compareUnsigned(a * SortingOutput.FIBONACCI, b * SortingOutput.FIBONACCI));
    Path file = tmp.resolve(name).resolve(SnapshotFile.name(1));
    try {
      Files.createDirectories(file.getParent());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    try (SnapshotFileWriter w = new SnapshotFileWriter(file)) {
      for (long fp : fps) {
        w.entry(fp, 0, 1_000, 5_000);
      }
      w.claim(ClaimEntry.of(99, 0, 0, 7, 1_000, 31_000, 5_000, "c"));
      w.offset("t", 0, 42);
      w.finish(1, CYCLE_MS, OWNER_KEY, 1_000, Map.of(1, 5_000L));
    }
    return file;
  }

  private static List<Long> delivered(Path file) throws SnapshotFile.Damaged {
    List<Long> fps = new ArrayList<>();
    SnapshotFile.check(file, CYCLE_MS, OWNER_KEY).deliver(new JournalVisitor() {
      @Override
      public void onAccept(long fingerprint, long keyFingerprint, long payloadHash, long acceptedAtMs,
          long expiresAtMs) {
        fps.add(fingerprint);
      }
    });
    return fps;
  }

  private static void refused(Path file, String what) {
    assertThatThrownBy(() -> SnapshotFile.check(file, CYCLE_MS, OWNER_KEY)).as(what)
        .isInstanceOf(SnapshotFile.Damaged.class);
  }

  @Test
  void shouldRefuseASnapshot_whoseEntriesBlocksAreSwapped() throws IOException, SnapshotFile.Damaged {
    Path file = entries("a", 1, 3 * 4_096);
    assertThat(delivered(file)).hasSize(3 * 4_096);
    byte[] b = Files.readAllBytes(file);
    byte[] first = Arrays.copyOfRange(b, SnapshotFile.HEADER, SnapshotFile.HEADER + ENTRIES_BLOCK);
    System.arraycopy(b, SnapshotFile.HEADER + ENTRIES_BLOCK, b, SnapshotFile.HEADER, ENTRIES_BLOCK);
    System.arraycopy(first, 0, b, SnapshotFile.HEADER + ENTRIES_BLOCK, ENTRIES_BLOCK);
    Files.write(file, b);
    refused(file, "entries blocks 0 and 1 swapped");
  }

  @Test
  void shouldRefuseASnapshot_withAnEntriesBlockOverwrittenByACopyOfAnother() throws IOException {
    Path file = entries("a", 1, 3 * 4_096);
    byte[] b = Files.readAllBytes(file);
    System.arraycopy(b, SnapshotFile.HEADER, b, SnapshotFile.HEADER + ENTRIES_BLOCK, ENTRIES_BLOCK);
    Files.write(file, b);
    refused(file, "entries block 1 replaced by a copy of block 0 (4,096 ids lost, 4,096 twice)");
  }

  @Test
  void shouldRefuseASnapshot_withAClaimsBlockOverwrittenByACopyOfAnother() throws IOException {
    Path file = tmp.resolve(SnapshotFile.name(1));
    try (SnapshotFileWriter w = new SnapshotFileWriter(file)) {
      for (int i = 1; i <= 3 * 1_024; i++) {
        w.claim(ClaimEntry.of(i, 0, 0, i, 1_000, 31_000, 5_000, "c"));
      }
      w.finish(1, CYCLE_MS, OWNER_KEY, 1_000, Map.of());
    }
    byte[] b = Files.readAllBytes(file);
    System.arraycopy(b, SnapshotFile.HEADER, b, SnapshotFile.HEADER + CLAIMS_BLOCK, CLAIMS_BLOCK);
    Files.write(file, b);
    refused(file, "claims block 1 replaced by a copy of block 0 (1,024 claims lost)");
  }

  /** The first entries block of a snapshot with other ids, written over this one's: each block checks alone. */
  @Test
  void shouldRefuseASnapshot_withABlockTakenFromAnotherSnapshot() throws IOException, SnapshotFile.Damaged {
    Path file = entries("a", 1, 2 * 4_096);
    Path other = entries("b", 1_000_001, 2 * 4_096);
    byte[] b = Files.readAllBytes(file);
    byte[] o = Files.readAllBytes(other);
    assertThat(delivered(other)).hasSize(2 * 4_096);
    System.arraycopy(o, SnapshotFile.HEADER, b, SnapshotFile.HEADER, ENTRIES_BLOCK);
    Files.write(file, b);
    refused(file, "the first entries block taken from another snapshot");
    // The same with the other's whole body under this header: the chain no longer ends where the header says.
    byte[] body = Files.readAllBytes(other);
    System.arraycopy(Files.readAllBytes(entries("c", 1, 2 * 4_096)), 0, body, 0, SnapshotFile.HEADER);
    Files.write(file, body);
    refused(file, "another snapshot's blocks under this header");
  }

  /** A file replaced by another valid snapshot between its check and its delivery: the delivery fails. */
  @Test
  void shouldFailTheDelivery_whenTheFileIsReplacedByAnotherValidSnapshotAfterItsCheck() throws IOException,
      SnapshotFile.Damaged {
    Path file = entries("a", 1, 4_096 + 3);
    Path other = entries("b", 1_000_001, 4_096 + 3);
    SnapshotFile.Loaded loaded = SnapshotFile.check(file, CYCLE_MS, OWNER_KEY);
    Files.write(file, Files.readAllBytes(other));
    assertThatThrownBy(() -> loaded.deliver(new JournalVisitor() {
    })).isInstanceOf(JournalException.class).hasMessageContaining("changed while it was read");
  }

  /** A version 1 file (block checksums unchained, the header's at 56, zero at 60) is read as before. */
  @Test
  void shouldStillReadAnUnchainedVersion1Snapshot() throws IOException, SnapshotFile.Damaged {
    Path file = entries("a", 1, 2 * 4_096 + 5);
    List<Long> chained = delivered(file);
    Files.write(file, toVersion1(Files.readAllBytes(file)));
    SnapshotFile.Loaded loaded = SnapshotFile.check(file, CYCLE_MS, OWNER_KEY);
    assertThat(loaded.entries()).isEqualTo(2 * 4_096 + 5);
    assertThat(loaded.inPlace()).isTrue();
    assertThat(delivered(file)).isEqualTo(chained);
    // Its checks still hold: a flipped bit in a block, and the header's reserved bytes.
    byte[] b = Files.readAllBytes(file);
    b[SnapshotFile.HEADER + SnapshotFile.BLOCK_HEADER + 3] ^= 1;
    Files.write(file, b);
    refused(file, "version 1, a bit flipped in an entry");
    b[SnapshotFile.HEADER + SnapshotFile.BLOCK_HEADER + 3] ^= 1;
    b[61] = 1;
    Files.write(file, b);
    refused(file, "version 1, reserved header bytes not zero");
  }

  /** Rewrites a version 2 file as its writer of version 1 would have written it. */
  private static byte[] toVersion1(byte[] v2) {
    byte[] b = v2.clone();
    ByteBuffer buf = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    CRC32C crc = new CRC32C();
    int at = SnapshotFile.HEADER;
    while (at < b.length) {
      int length = buf.getInt(at + 8);
      crc.reset();
      crc.update(b, at, SnapshotFile.BLOCK_HEADER + length);
      buf.putInt(at + SnapshotFile.BLOCK_HEADER + length, (int) crc.getValue());
      at += SnapshotFile.BLOCK_HEADER + length + 4;
    }
    buf.putInt(8, SnapshotFile.VERSION_UNCHAINED);
    crc.reset();
    crc.update(b, 0, 56);
    buf.putInt(56, (int) crc.getValue());
    buf.putInt(60, 0);
    return b;
  }
}
