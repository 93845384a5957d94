package io.github.vertxdedup.journal;

import io.github.vertxdedup.time.ManualClock;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The start of a roll cycle: a roll snapshot larger than one carried-over record is split into records of
 * {@value RollSnapshotAppender#SNAPSHOT_CHUNK} entries and replays whole; a cycle is started once, also across a
 * reopen; a cycle's start carries the previous cycle's latest expiry, so that cycle can be deleted once it passed.
 */
class RollSnapshotAppenderTest {

  private static final long START_MS = 1_700_000_000_000L;

  private static final int CLAIMS = 2 * RollSnapshotAppender.SNAPSHOT_CHUNK + 452;
  private static final int OFFSETS = RollSnapshotAppender.SNAPSHOT_CHUNK + 76;

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock(START_MS);
  private final List<Integer> snapshots = new ArrayList<>();

  private JournalOptions options() {
    return new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE).setRollCycle(Duration.ofSeconds(1))
        .setRollSnapshotSource(w -> {
          snapshots.add(CLAIMS);
          long leaseEnd = clock.nowMs() + 60_000;
          for (int i = 1; i <= CLAIMS; i++) {
            w.claim(ClaimEntry.of(i, 0, 0, i, clock.nowMs(), leaseEnd, ClaimEntry.NOT_RECORDED, "worker"));
          }
          for (int p = 0; p < OFFSETS; p++) {
            w.offsetCommit("orders", p, 100 + p);
          }
        });
  }

  @Test
  void shouldSplitALargeSnapshotIntoChunksAndReplayEveryEntry() {
    long t = clock.nowMs();
    try (Journal j = Journal.open(dir, options())) {
      j.replay(new RecordingVisitor());
      j.appendAccept(9_999, 0, 0, t, t + 60_000);
      j.appendAccept(9_998, 0, 0, t, t + 60_000); // same cycle: no second snapshot
    }
    assertThat(snapshots).hasSize(1);

    try (Journal j = Journal.open(dir, options())) {
      RecordingVisitor v = new RecordingVisitor();
      ReplayResult r = j.replay(v);
      // ROLL, 3 CLAIM records (1024 + 1024 + 452), 2 OFFSETS records (1024 + 76), SNAPSHOT_END, 2 accepts
      assertThat(r.recordsRead()).isEqualTo(1 + 3 + 2 + 1 + 2);
      assertThat(r.claims()).isEqualTo(CLAIMS);
      assertThat(r.offsetCommits()).isEqualTo(OFFSETS);
      assertThat(v.entries.stream().filter(e -> e.startsWith("claim ")).distinct()).hasSize(CLAIMS);
      assertThat(v.offsets.get("orders", OFFSETS - 1)).isEqualTo(100 + OFFSETS - 1);

      // The reopened journal knows its newest cycle starts with a complete snapshot: no new one in that cycle.
      j.appendAccept(9_997, 0, 0, t, t + 60_000);
      assertThat(snapshots).hasSize(1);
    }
  }

  @Test
  void shouldCarryThePreviousCyclesLatestExpirySoRetentionCanDeleteItOncePassed() {
    long t = clock.nowMs();
    try (Journal j = Journal.open(dir, options())) {
      j.replay(new RecordingVisitor());
      j.appendAccept(1, 0, 0, t, t + 1_500);
      j.appendCommit(2, 7, t + 2_500); // the cycle's latest expiry
      clock.advance(Duration.ofSeconds(1));
      j.appendAccept(3, 0, 0, clock.nowMs(), clock.nowMs() + 60_000);
      assertThat(snapshots).hasSize(2);

      assertThat(j.deleteExpiredCycles(t + 2_499).deletedCycles()).isZero();
      assertThat(j.deleteExpiredCycles(t + 2_500).deletedCycles()).isEqualTo(1);
      assertThat(j.cycleCount()).isEqualTo(1);
    }
  }
}
