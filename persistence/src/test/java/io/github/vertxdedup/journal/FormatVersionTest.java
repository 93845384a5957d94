package io.github.vertxdedup.journal;

import io.github.vertxdedup.time.ManualClock;
import static io.github.vertxdedup.journal.RecordingVisitor.accept;
import static io.github.vertxdedup.journal.RecordingVisitor.claim;
import static io.github.vertxdedup.journal.RecordingVisitor.release;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A journal written by format version 1 (0.1.0-SNAPSHOT, whose CLAIM record had no columns for the claim time, the
 * payload hash and the remember-until) still replays after the upgrade, and a version-2 writer appends to it; a roll
 * snapshot carries a version-1 claim forward in the version-2 layout.
 */
class FormatVersionTest {

  private static final long START_MS = 1_700_000_000_000L;

  private static final Duration CYCLE = Duration.ofMinutes(5);

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock(START_MS);
  private final long t = clock.nowMs();

  private JournalOptions options() {
    return new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE).setRollCycle(CYCLE);
  }

  /** Appends records exactly as a version-1 writer left them: raw excerpts in the same queue. */
  private void appendRaw(byte[]... records) {
    try (SingleChronicleQueue q = SingleChronicleQueueBuilder.binary(dir)
        .rollCycle(RollCycleChoice.of(CYCLE)).timeProvider(clock::nowMs).build();
        ExcerptAppender a = q.createAppender()) {
      for (byte[] r : records) {
        try (DocumentContext dc = a.writingDocument()) {
          dc.wire().bytes().write(r, 0, r.length);
        }
      }
    }
  }

  private static byte[] acceptV1(RecordEncoder e, long fp, long at, long until) {
    e.begin(RecordFormat.ACCEPT, 0, 1);
    e.putLong(fp);
    e.putLong(at);
    e.putLong(until);
    e.buffer()[0] = 1;
    return java.util.Arrays.copyOf(e.buffer(), e.finish());
  }

  @Test
  void shouldReplayAVersion1JournalAndAppendVersion2RecordsAfterIt() {
    try (Journal j = Journal.open(dir, options())) {
      j.replay(new RecordingVisitor());
      j.appendAccept(1, 0, 0, t, t + 60_000);
    }
    RecordEncoder e = new RecordEncoder();
    byte[] accept = acceptV1(e, 2, t, t + 60_000);
    byte[] claimV1 = RecordDecoderTest.claimRecordV1(e, 3, 30, 300, t + 30_000, "c1;" + t + ";beef;-");
    appendRaw(accept, claimV1);

    ClaimEntry legacy = new ClaimEntry(3, 30, 0, 300, ClaimEntry.NOT_RECORDED, t + 30_000,
        ClaimEntry.NOT_RECORDED, "c1;" + t + ";beef;-", 1);
    ClaimEntry current = ClaimEntry.of(4, 0, 0xABCL, 400, t + 1, t + 31_000, t + 50_000, "consumer-a");
    try (Journal j = Journal.open(dir, options())) {
      RecordingVisitor v = new RecordingVisitor();
      ReplayResult r = j.replay(v);
      assertThat(r.tornRecords()).isZero();
      assertThat(v.entries).containsExactly(accept(1, 0, 0, t, t + 60_000), accept(2, 0, 0, t, t + 60_000),
          claim(legacy));
      j.appendClaim(current);
      j.appendRelease(3, 300);
    }
    try (Journal j = Journal.open(dir, options())) {
      RecordingVisitor v = new RecordingVisitor();
      j.replay(v);
      assertThat(v.entries).containsExactly(accept(1, 0, 0, t, t + 60_000), accept(2, 0, 0, t, t + 60_000),
          claim(legacy), claim(current), release(3, 300));
    }
  }

  @Test
  void shouldCarryAVersion1ClaimIntoTheNextCycleInTheVersion2Layout() {
    ClaimEntry[] open = new ClaimEntry[1];
    JournalOptions o = options().setRollSnapshotSource(w -> {
      if (open[0] != null) {
        w.claim(open[0]);
      }
    });
    try (Journal j = Journal.open(dir, o)) {
      j.replay(new RecordingVisitor());
      j.appendAccept(1, 0, 0, t, t + 600_000);
    }
    appendRaw(RecordDecoderTest.claimRecordV1(new RecordEncoder(), 3, 0, 300, t + 900_000, "legacy text"));
    try (Journal j = Journal.open(dir, o)) {
      RecordingVisitor v = new RecordingVisitor();
      j.replay(v);
      open[0] = new ClaimEntry(3, 0, 0, 300, ClaimEntry.NOT_RECORDED, t + 900_000, ClaimEntry.NOT_RECORDED,
          "legacy text", 1);
      assertThat(v.entries).contains(claim(open[0]));
      clock.advance(CYCLE);
      j.appendAccept(5, 0, 0, clock.nowMs(), clock.nowMs() + 600_000);
    }
    try (Journal j = Journal.open(dir, o)) {
      RecordingVisitor v = new RecordingVisitor();
      j.replay(v);
      // Carried: the same claim, now in a version-2 record (its missing columns stay NOT_RECORDED).
      assertThat(v.entries).contains(claim(new ClaimEntry(3, 0, 0, 300, ClaimEntry.NOT_RECORDED, t + 900_000,
          ClaimEntry.NOT_RECORDED, "legacy text", 2)));
    }
  }
}
