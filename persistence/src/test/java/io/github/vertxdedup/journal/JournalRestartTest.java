package io.github.vertxdedup.journal;

import io.github.vertxdedup.time.ManualClock;
import static io.github.vertxdedup.journal.RecordingVisitor.accept;
import static io.github.vertxdedup.journal.RecordingVisitor.claim;
import static io.github.vertxdedup.journal.RecordingVisitor.commit;
import static io.github.vertxdedup.journal.RecordingVisitor.offset;
import static io.github.vertxdedup.journal.RecordingVisitor.release;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JournalRestartTest {

  private static final long START_MS = 1_700_000_000_000L;

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock(START_MS);

  private JournalOptions options() {
    return new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE)
        .setRollCycle(Duration.ofMinutes(5));
  }

  private Journal openReplayed(JournalOptions options) {
    Journal j = Journal.open(dir, options);
    j.replay(new RecordingVisitor());
    return j;
  }

  @Test
  void shouldReplayEveryRecordKindAfterCloseAndReopen() {
    long t = clock.nowMs();
    List<String> expected = new ArrayList<>();
    try (Journal j = openReplayed(options())) {
      j.appendAccept(11, 0, 0, t, t + 60_000);
      expected.add(accept(11, 0, 0, t, t + 60_000));
      j.appendAccept(12, 120, 0, t, t + 60_000);
      expected.add(accept(12, 120, 0, t, t + 60_000));
      j.appendAccept(13, 0, 130, t, t + 60_000);
      expected.add(accept(13, 0, 130, t, t + 60_000));
      j.appendAccept(-14, -140, -1400, t, t + 60_000);
      expected.add(accept(-14, -140, -1400, t, t + 60_000));
      ClaimEntry claimed = ClaimEntry.of(21, 210, 0xC0FFEEL, 7, t, t + 30_000, t + 45_000, "billing-1");
      j.appendClaim(claimed);
      expected.add(claim(claimed));
      j.appendCommit(21, 7, t + 60_000);
      expected.add(commit(21, 7, t + 60_000));
      ClaimEntry released = ClaimEntry.of(22, 0, 0, 8, t + 1, t + 30_000, ClaimEntry.NOT_RECORDED,
          "billing-\u00e9");
      j.appendClaim(released);
      expected.add(claim(released));
      j.appendRelease(22, 8);
      expected.add(release(22, 8));
      j.appendOffsetCommits(List.of(new OffsetCommit("payments", 0, 41), new OffsetCommit("payments", 3, 7)));
      expected.add(offset("payments", 0, 41));
      expected.add(offset("payments", 3, 7));
      AcceptBatch batch = new AcceptBatch(2);
      for (int i = 0; i < 5; i++) {
        batch.add(100 + i, i == 2 ? 9 : 0, 0, t + i, t + 60_000 + i);
        expected.add(accept(100 + i, i == 2 ? 9 : 0, 0, t + i, t + 60_000 + i));
      }
      j.appendAccepts(batch);
    }

    try (Journal j = Journal.open(dir, options())) {
      RecordingVisitor v = new RecordingVisitor();
      ReplayResult r = j.replay(v);
      assertThat(v.entries).containsExactlyElementsOf(expected);
      assertThat(r.accepts()).isEqualTo(9);
      assertThat(r.claims()).isEqualTo(2);
      assertThat(r.commits()).isEqualTo(1);
      assertThat(r.releases()).isEqualTo(1);
      assertThat(r.offsetCommits()).isEqualTo(2);
      assertThat(r.liveIds()).isEqualTo(9);
      assertThat(r.tornRecords()).isZero();
      assertThat(r.cyclesRead()).isEqualTo(1);
    }
  }

  @Test
  void shouldContinueAppendingAfterReopenAndReplayBoth() {
    long t = clock.nowMs();
    long until = t + 600_000;
    try (Journal j = openReplayed(options())) {
      j.appendAccept(1, 0, 0, t, until);
    }
    try (Journal j = openReplayed(options())) {
      j.appendAccept(2, 0, 0, t, until);
    }
    clock.advance(Duration.ofMinutes(5));
    try (Journal j = openReplayed(options())) {
      j.appendAccept(3, 0, 0, t, until);
    }
    try (Journal j = Journal.open(dir, options())) {
      RecordingVisitor v = new RecordingVisitor();
      ReplayResult r = j.replay(v);
      assertThat(v.accepts()).containsExactly(accept(1, 0, 0, t, until), accept(2, 0, 0, t, until),
          accept(3, 0, 0, t, until));
      assertThat(j.cycleCount()).isEqualTo(2);
      assertThat(r.cyclesRead()).isEqualTo(2);
      assertThat(r.cyclesSkipped()).isZero();
    }
  }

  @Test
  void shouldSkipCyclesWhoseEntriesHaveAllExpired() {
    long t = clock.nowMs();
    try (Journal j = openReplayed(options())) {
      j.appendAccept(1, 0, 0, t, t + 60_000);
      clock.advance(Duration.ofMinutes(5));
      j.appendAccept(2, 0, 0, clock.nowMs(), clock.nowMs() + 60_000);
      clock.advance(Duration.ofMinutes(5));
      j.appendOffsetCommit("orders", 1, 5);
    }
    clock.advanceMs(1);
    try (Journal j = Journal.open(dir, options())) {
      RecordingVisitor v = new RecordingVisitor();
      ReplayResult r = j.replay(v);
      assertThat(r.cyclesSkipped()).isEqualTo(2);
      assertThat(r.cyclesRead()).isEqualTo(1);
      assertThat(v.accepts()).isEmpty();
      assertThat(v.offsets.get("orders", 1)).isEqualTo(5);
    }
  }

  /** As a partition uses it: a worker opens and replays, the event loop appends, another worker syncs and closes. */
  @Test
  void shouldAppendFromAnotherThreadThanTheOneThatOpenedAndClosed() throws Exception {
    long t = clock.nowMs();
    java.util.concurrent.ExecutorService worker = java.util.concurrent.Executors.newSingleThreadExecutor();
    java.util.concurrent.ExecutorService loop = java.util.concurrent.Executors.newSingleThreadExecutor();
    try {
      Journal j = worker.submit(() -> openReplayed(options().setSyncPolicy(SyncPolicy.SYNC))).get();
      long last = loop.submit(() -> {
        long index = 0;
        for (int i = 1; i <= 100; i++) {
          index = j.appendAccept(i, 0, 0, t, t + 60_000);
        }
        return index;
      }).get();
      assertThat(java.util.concurrent.CompletableFuture.supplyAsync(j::sync).get()).isEqualTo(last);
      loop.submit(() -> {
        clock.advance(Duration.ofMinutes(5));
        return j.appendAccept(101, 0, 0, t, t + 600_000);
      }).get();
      worker.submit(j::close).get();
    } finally {
      worker.shutdownNow();
      loop.shutdownNow();
    }
    try (Journal j = Journal.open(dir, options())) {
      RecordingVisitor v = new RecordingVisitor();
      j.replay(v);
      assertThat(v.accepts()).hasSize(1).first().asString().startsWith("accept 101 ");
      assertThat(j.cycleCount()).isEqualTo(2);
    }
  }

  @Test
  void shouldRefuseAppendsBeforeReplay() {
    try (Journal j = Journal.open(dir, options())) {
      assertThatThrownBy(() -> j.appendAccept(1, 0, 0, 0, 1))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("replay() must complete before the first append");
    }
  }

  @Test
  void shouldRefuseReplayAfterAnAppend() {
    try (Journal j = openReplayed(options())) {
      j.appendAccept(1, 0, 0, 0, 1);
      assertThatThrownBy(() -> j.replay(new RecordingVisitor()))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("before the first append");
    }
  }

  @Test
  void shouldRejectInvalidArguments() {
    try (Journal j = openReplayed(options())) {
      assertThatThrownBy(() -> j.appendAccept(0, 0, 0, 0, 1))
          .isInstanceOf(IllegalArgumentException.class).hasMessage("fingerprint must not be 0");
      assertThatThrownBy(() -> j.appendAccept(1, 0, 0, 5, 5))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("expiresAtMs must be > acceptedAtMs 5 but was 5");
      assertThatThrownBy(() -> j.appendClaim(ClaimEntry.of(1, 0, 0, 0, 0, 1, 0, "x".repeat(256))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("claimerId must be <= 255 bytes in UTF-8 but was 256");
      assertThatThrownBy(() -> j.appendOffsetCommit("t", -1, 0))
          .isInstanceOf(IllegalArgumentException.class).hasMessage("partition must be >= 0 but was -1");
      assertThatThrownBy(() -> j.appendAccepts(new AcceptBatch(1)))
          .isInstanceOf(IllegalArgumentException.class).hasMessage("batch must not be empty");
    }
  }

  @Test
  void shouldRefuseUseAfterClose() {
    Journal j = openReplayed(options());
    j.close();
    j.close();
    assertThatThrownBy(() -> j.appendAccept(1, 0, 0, 0, 1))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
    assertThatThrownBy(j::sync).isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
  }
}
