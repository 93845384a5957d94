package io.github.vertxdedup.journal;

import io.github.vertxdedup.time.ManualClock;
import static io.github.vertxdedup.journal.RecordingVisitor.accept;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A crash or an I/O error can leave the last record cut short. Every shape of that ends the replay with a
 * warning, keeps the records before it, and leaves the journal able to append.
 */
class TornTailTest {

  private static final long START_MS = 1_700_000_000_000L;

  private static final int BATCH = 100;

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock(START_MS);
  private final long t = clock.nowMs();
  private final long until = t + 600_000;

  private JournalOptions options() {
    return new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE);
  }

  /** Two single accepts, then a batch of {@value #BATCH} (the last record); returns the replay of the first two. */
  private List<String> writeJournal(Path journalDir) {
    try (Journal j = Journal.open(journalDir, options())) {
      j.replay(new RecordingVisitor());
      j.appendAccept(1, 0, 0, t, until);
      j.appendAccept(2, 22, 0, t, until);
      AcceptBatch batch = new AcceptBatch(BATCH);
      for (int i = 0; i < BATCH; i++) {
        batch.add(1000 + i, 0, 0, t, until);
      }
      j.appendAccepts(batch);
    }
    return List.of(accept(1, 0, 0, t, until), accept(2, 22, 0, t, until));
  }

  private ReplayResult replayInto(Path journalDir, RecordingVisitor v, long appendAfter) {
    try (Journal j = Journal.open(journalDir, options())) {
      ReplayResult r = j.replay(v);
      if (appendAfter != 0) {
        j.appendAccept(appendAfter, 0, 0, t, until);
      }
      return r;
    }
  }

  private void assertRecoversWithout(Path journalDir, List<String> kept, boolean expectTornWarning) {
    RecordingVisitor first = new RecordingVisitor();
    ReplayResult r = replayInto(journalDir, first, 99);
    assertThat(first.accepts()).containsExactlyElementsOf(kept);
    if (expectTornWarning) {
      assertThat(r.tornRecords()).isEqualTo(1);
    }
    RecordingVisitor second = new RecordingVisitor();
    replayInto(journalDir, second, 0);
    List<String> expected = new ArrayList<>(kept);
    expected.add(accept(99, 0, 0, t, until));
    assertThat(second.accepts()).containsExactlyElementsOf(expected);
  }

  @Test
  void shouldEndReplayAtAnUnfinishedHeaderInZeroedSpace() {
    List<String> kept = new ArrayList<>(writeJournal(dir));
    kept.addAll(batchAccepts());
    Path file = ChronicleFiles.newestCycleFile(dir);
    long end = ChronicleFiles.endOfData(file);
    // A writer died after claiming the header (Chronicle's "not complete" bit) and part of its record.
    ChronicleFiles.writeAt(file, end, ChronicleFiles.intLe(ChronicleFiles.NOT_COMPLETE | 52));
    ChronicleFiles.writeAt(file, end + 4, new byte[] {1, 1, 0, 0, 1, 0, 0, 0, 42, 42});

    assertRecoversWithout(dir, kept, false);
  }

  @Test
  void shouldSkipACompleteHeaderOverZeroedRecordBytes() {
    List<String> kept = new ArrayList<>(writeJournal(dir));
    kept.addAll(batchAccepts());
    Path file = ChronicleFiles.newestCycleFile(dir);
    long end = ChronicleFiles.endOfData(file);
    // The header reached the disk, the record's bytes did not (still zero): the checksum catches it.
    ChronicleFiles.writeAt(file, end, ChronicleFiles.intLe(52));

    assertRecoversWithout(dir, kept, true);
  }

  @ParameterizedTest(name = "truncated {0} bytes into the last record")
  @ValueSource(ints = {0, 1, 2, 3, 4, 5, 8, 9, 13, 1200, 2407, 2410})
  void shouldRecoverFromAFileTruncatedInsideTheLastRecord(int cut) throws Exception {
    Path journalDir = dir.resolve("cut-" + cut);
    List<String> kept = writeJournal(journalDir);
    Path file = ChronicleFiles.newestCycleFile(journalDir);
    ChronicleFiles.Excerpt last = ChronicleFiles.lastData(file);
    assertThat(last.length()).isEqualTo(BATCH * 24 + 12);
    assertThat(cut).isLessThan(4 + last.length());

    ChronicleFiles.truncate(file, last.position() + cut);
    assertThat(Files.size(file)).isEqualTo(last.position() + cut);

    // A cut inside Chronicle's 4-byte header leaves no record or a length with zeroes behind it (torn); a cut
    // further in leaves zeroes where the record's bytes were (torn).
    assertRecoversWithout(journalDir, kept, false);
  }

  @Test
  void shouldSkipARecordWhoseChecksumDoesNotMatchAndKeepTheOthers() {
    try (Journal j = Journal.open(dir, options())) {
      j.replay(new RecordingVisitor());
      j.appendAccept(1, 0, 0, t, until);
      j.appendAccept(0x0123_4567_89AB_CDEFL, 0, 0, t, until);
      j.appendAccept(3, 0, 0, t, until);
    }
    Path file = ChronicleFiles.newestCycleFile(dir);
    long at = ChronicleFiles.find(file, 0x0123_4567_89AB_CDEFL, 0);
    assertThat(at).isPositive();
    ChronicleFiles.writeAt(file, at, new byte[] {(byte) 0xEE}); // one flipped byte in the fingerprint

    RecordingVisitor v = new RecordingVisitor();
    ReplayResult r = replayInto(dir, v, 0);
    assertThat(v.accepts()).containsExactly(accept(1, 0, 0, t, until), accept(3, 0, 0, t, until));
    assertThat(r.tornRecords()).isEqualTo(1);
  }

  @Test
  void shouldRejectARecordOfAnUnknownFormatVersion() {
    try (Journal j = Journal.open(dir, options())) {
      j.replay(new RecordingVisitor());
      j.appendAccept(1, 0, 0, t, until);
    }
    // A newer writer: version 3, valid checksum.
    RecordEncoder e = new RecordEncoder();
    e.begin(RecordFormat.ACCEPT, 0, 1);
    e.putLong(2);
    e.putLong(t);
    e.putLong(until);
    e.buffer()[0] = 3;
    int len = e.finish();
    try (SingleChronicleQueue q = SingleChronicleQueueBuilder.binary(dir)
        .rollCycle(RollCycleChoice.of(JournalOptions.DEFAULT_ROLL_CYCLE)).timeProvider(clock::nowMs).build();
        ExcerptAppender a = q.createAppender();
        DocumentContext dc = a.writingDocument()) {
      dc.wire().bytes().write(e.buffer(), 0, len);
    }

    try (Journal j = Journal.open(dir, options())) {
      RecordingVisitor v = new RecordingVisitor();
      assertThatThrownBy(() -> j.replay(v))
          .isInstanceOfSatisfying(UnknownFormatVersionException.class, ex -> assertThat(ex.version()).isEqualTo(3))
          .hasMessageContaining("has format version 3, but this reader knows only versions 1 to 2")
          .hasMessageContaining(dir.toString());
      assertThat(v.accepts()).containsExactly(accept(1, 0, 0, t, until));
    }
  }

  @Test
  void shouldDeleteACycleFileWhoseCreationNeverFinished() throws Exception {
    List<String> kept = new ArrayList<>(writeJournal(dir));
    kept.addAll(batchAccepts());
    // The next 5-minute cycle's file, as a writer killed while creating it leaves it: the store header claimed
    // (Chronicle's "not complete" bit) and nothing else. Without the repair, each open of that cycle waits the
    // Chronicle timeout (60 s here) for the dead writer.
    Path unfinished = dir.resolve("20231114-2215V.cq4");
    byte[] page = new byte[4096];
    System.arraycopy(ChronicleFiles.intLe(ChronicleFiles.NOT_COMPLETE), 0, page, 0, 4);
    Files.write(unfinished, page);
    clock.advance(java.time.Duration.ofMinutes(5));

    JournalOptions patient = options().setChronicleTimeout(java.time.Duration.ofSeconds(60));
    try (Journal j = Journal.open(dir, patient)) {
      assertThat(unfinished).doesNotExist();
      RecordingVisitor v = new RecordingVisitor();
      j.replay(v);
      assertThat(v.accepts()).containsExactlyElementsOf(kept);
      j.appendAccept(99, 0, 0, t, until);
    }
    assertThat(ChronicleFiles.cycleFiles(dir)).hasSize(2).contains(unfinished);
  }

  private List<String> batchAccepts() {
    List<String> list = new ArrayList<>();
    for (int i = 0; i < BATCH; i++) {
      list.add(accept(1000 + i, 0, 0, t, until));
    }
    return list;
  }

}
