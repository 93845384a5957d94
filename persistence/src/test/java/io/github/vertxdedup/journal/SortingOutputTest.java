package io.github.vertxdedup.journal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A snapshot's entries come out in table order, entries of one fingerprint in arrival order, in memory and through
 * run files merged at the end; the run files are deleted.
 */
class SortingOutputTest {

  @TempDir
  Path dir;

  @ParameterizedTest
  @ValueSource(ints = {333, 1000, 100_000})
  void shouldWriteEntriesInTableOrderKeepingArrivalOrderPerFingerprint(int run) throws IOException {
    Random rnd = new Random(run);
    List<long[]> in = new ArrayList<>();
    for (int i = 0; i < 5000; i++) {
      long fp = rnd.nextInt(10) == 0 ? 1 + rnd.nextInt(20) : rnd.nextLong() | 1; // some fingerprints repeat
      in.add(new long[] {fp, i, rnd.nextLong(), rnd.nextLong()});
    }
    Path file = dir.resolve("s" + SnapshotFile.SUFFIX);
    try (SnapshotFileWriter w = new SnapshotFileWriter(file)) {
      SortingOutput out = new SortingOutput(w, dir, "snapshot-test", run);
      for (long[] e : in) {
        out.entry(e[0], e[1], e[2], e[3]);
      }
      out.offset("t", 0, 5);
      out.drain();
      w.finish(42, 1000, 7, 0, java.util.Map.of());
    }
    List<long[]> expected = new ArrayList<>(in);
    expected.sort(Comparator.comparingLong((long[] e) -> SortingOutput.key(e[0]))); // stable
    List<String> read = new ArrayList<>();
    try {
      SnapshotFile.check(file, 1000, 7).deliver(new JournalVisitor() {
        @Override
        public void onAccept(long fp, long key, long hash, long first, long expires) {
          read.add(fp + "/" + hash + "/" + first + "/" + expires);
        }

        @Override
        public void onOffsetCommit(String topic, int partition, long offset) {
          read.add(topic + partition + "@" + offset);
        }
      });
    } catch (SnapshotFile.Damaged e) {
      throw new AssertionError(e);
    }
    List<String> want = new ArrayList<>();
    expected.forEach(e -> want.add(e[0] + "/" + e[1] + "/" + e[2] + "/" + e[3]));
    want.add("t0@5");
    assertThat(read).containsExactlyElementsOf(want);
    try (Stream<Path> s = Files.list(dir)) {
      assertThat(s.map(p -> p.getFileName().toString())).as("run files deleted").containsExactly(file.getFileName()
          .toString());
    }
  }
}
