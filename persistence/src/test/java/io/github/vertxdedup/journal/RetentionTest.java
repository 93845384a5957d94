package io.github.vertxdedup.journal;

import io.github.vertxdedup.journal.internal.CommittedOffsets;
import io.github.vertxdedup.time.ManualClock;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whole cycle files expire: each cycle starts with the owner's open claims and offsets, so a file is deleted once
 * every accept and commit in it has expired, and nothing the owner still needs goes with it. One-second cycles and
 * a hand-driven clock: hundreds of rolls without sleeping.
 */
class RetentionTest {

  private static final long START_MS = 1_700_000_000_000L;

  private static final long W = 3_000;

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock(START_MS);

  /** The owner's state, as a partition would keep it: open claims and committed offsets. */
  private final Map<Long, String> openClaims = new LinkedHashMap<>();
  private final Map<Long, Long> leaseEnds = new LinkedHashMap<>();
  private final CommittedOffsets offsets = new CommittedOffsets();

  private JournalOptions options() {
    return new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE).setRollCycle(Duration.ofSeconds(1))
        .setRollSnapshotSource(w -> {
          openClaims.forEach((fp, claimer) -> w.claim(claimEntry(fp, claimer, leaseEnds.get(fp))));
          offsets.writeTo(w);
        });
  }

  private void claim(Journal j, long fp, long leaseMs) {
    long leaseEnd = clock.nowMs() + leaseMs;
    j.appendClaim(claimEntry(fp, "worker-" + fp, leaseEnd));
    openClaims.put(fp, "worker-" + fp);
    leaseEnds.put(fp, leaseEnd);
  }

  private static ClaimEntry claimEntry(long fp, String claimer, long leaseEnd) {
    return ClaimEntry.of(fp, 0, 0, fp * 10, leaseEnd - 60_000, leaseEnd, ClaimEntry.NOT_RECORDED, claimer);
  }

  private void release(Journal j, long fp) {
    j.appendRelease(fp, fp * 10);
    openClaims.remove(fp);
    leaseEnds.remove(fp);
  }

  private void commitOffset(Journal j, String topic, int partition, long offset) {
    j.appendOffsetCommit(topic, partition, offset);
    offsets.record(topic, partition, offset);
  }

  @Test
  void shouldDeleteOnlyCyclesWhoseEntriesHaveAllExpiredAndKeepClaimsAndOffsets() {
    try (Journal j = Journal.open(dir, options())) {
      j.replay(new RecordingVisitor());
      claim(j, 500, 60_000);                      // cycle 0: a long claim that stays open
      claim(j, 501, 60_000);                      // cycle 0: released later
      for (int second = 0; second < 10; second++) {
        long now = clock.nowMs();
        j.appendAccept(1000 + second, 0, 0, now, now + W);
        commitOffset(j, "orders", 0, 100 + second);
        if (second == 2) {
          release(j, 501);
        }
        if (second == 4) {
          j.appendAccept(7777, 0, 0, now, now + 100_000); // keeps cycle 4 alive
        }
        clock.advance(Duration.ofSeconds(1));
      }
      assertThat(j.cycleCount()).isEqualTo(10);

      // At t0 + 10 s: accepts of seconds 0..6 expired at t0 + 3..9 s, but cycle 4 holds one until t0 + 104 s.
      RetentionResult r = j.deleteExpiredCycles(clock.nowMs());
      assertThat(r.deletedCycles()).isEqualTo(4);
      assertThat(r.keptCycles()).isEqualTo(6);
      assertThat(j.cycles().get(0)).isEqualTo(r.oldestKeptCycle());
    }

    try (Journal j = Journal.open(dir, options())) {
      RecordingVisitor v = new RecordingVisitor();
      ReplayResult r = j.replay(v);
      assertThat(r.startCycle()).isEqualTo(j.cycles().get(0));
      assertThat(v.offsets.get("orders", 0)).isEqualTo(109);
      assertThat(v.entries).contains(RecordingVisitor.claim(claimEntry(500, "worker-500",
          START_MS + 60_000)));
      assertThat(v.entries).noneMatch(e -> e.startsWith("claim 501"));
      assertThat(v.accepts()).anyMatch(e -> e.startsWith("accept 7777 "));
      long now = clock.nowMs();
      assertThat(v.accepts().stream().filter(e -> Long.parseLong(e.substring(e.indexOf("until=") + 6)) > now))
          .hasSize(3); // 1008, 1009 and 7777
    }
  }

  @Test
  void shouldKeepCyclesBoundedAndOpenFilesBoundedOverHundredsOfRolls() throws IOException {
    int maxCycles = 0;
    int maxOpenFiles = 0;
    int maxOpenDescriptors = 0;
    try (Journal j = Journal.open(dir, options())) {
      j.replay(new RecordingVisitor());
      claim(j, 42, 3_600_000);
      for (int second = 0; second < 300; second++) {
        long now = clock.nowMs();
        for (int i = 0; i < 3; i++) {
          j.appendAccept(second * 10L + i + 1, 0, 0, now, now + W);
        }
        commitOffset(j, "orders", second % 4, second);
        j.deleteExpiredCycles(now);
        maxCycles = Math.max(maxCycles, j.cycleCount());
        maxOpenFiles = Math.max(maxOpenFiles, j.openCycleFiles());
        maxOpenDescriptors = Math.max(maxOpenDescriptors, openDescriptorsUnder(dir));
        clock.advance(Duration.ofSeconds(1));
      }
      assertThat(ChronicleFiles.cycleFiles(dir)).hasSize(j.cycleCount());
    }
    // W = 3 s of 1-second cycles: the live ones plus the current one.
    assertThat(maxCycles).isLessThanOrEqualTo(5);
    assertThat(maxOpenFiles).isLessThanOrEqualTo(3);
    assertThat(maxOpenDescriptors).isLessThanOrEqualTo(4);

    try (Journal j = Journal.open(dir, options())) {
      RecordingVisitor v = new RecordingVisitor();
      j.replay(v);
      assertThat(v.offsets.toList()).containsExactly(new OffsetCommit("orders", 0, 296),
          new OffsetCommit("orders", 1, 297), new OffsetCommit("orders", 2, 298), new OffsetCommit("orders", 3, 299));
      assertThat(v.entries).anyMatch(e -> e.startsWith("claim 42 "));
    }
  }

  @Test
  void shouldReportNothingToDeleteInAJournalWithOneCycle() {
    try (Journal j = Journal.open(dir, options())) {
      j.replay(new RecordingVisitor());
      j.appendAccept(1, 0, 0, clock.nowMs(), clock.nowMs() + 1);
      RetentionResult r = j.deleteExpiredCycles(clock.nowMs() + 1_000_000);
      assertThat(r.deletedCycles()).isZero();
      assertThat(r.keptCycles()).isEqualTo(1);
    }
  }

  /** Descriptors of this process open on files in {@code dir} (Linux /proc), or 0 where /proc is missing. */
  private static int openDescriptorsUnder(Path dir) throws IOException {
    Path fds = Path.of("/proc/self/fd");
    if (!Files.isDirectory(fds)) {
      return 0;
    }
    int n = 0;
    try (Stream<Path> s = Files.list(fds)) {
      for (Path fd : (Iterable<Path>) s::iterator) {
        try {
          if (Files.readSymbolicLink(fd).toString().startsWith(dir.toString())
              && Files.readSymbolicLink(fd).toString().endsWith(".cq4")) {
            n++;
          }
        } catch (IOException gone) {
          // closed meanwhile
        }
      }
    }
    return n;
  }

}
