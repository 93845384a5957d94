package io.github.vertxdedup.journal;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.github.vertxdedup.testing.LogCapture;
import io.github.vertxdedup.time.ManualClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SyncAndProgressTest {

  private static final long START_MS = 1_700_000_000_000L;

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock(START_MS);
  private final long t = clock.nowMs();

  @Test
  void shouldReportNothingSyncedBeforeTheFirstAppend() {
    try (Journal j = Journal.open(dir, new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.SYNC))) {
      j.replay(new RecordingVisitor());
      assertThat(j.sync()).isEqualTo(Journal.NO_INDEX);
      assertThat(j.lastAppendedIndex()).isEqualTo(Journal.NO_INDEX);
    }
  }

  @Test
  void shouldCoverEveryRecordAppendedBeforeTheSyncAcrossARoll() {
    try (Journal j = Journal.open(dir, new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.SYNC)
        .setRollCycle(Duration.ofSeconds(1)))) {
      j.replay(new RecordingVisitor());
      long first = j.appendAccept(1, 0, 0, t, t + 60_000);
      clock.advance(Duration.ofSeconds(1));
      long second = j.appendAccept(2, 0, 0, t, t + 60_000);
      assertThat(second).isGreaterThan(first);
      long synced = j.sync();
      assertThat(synced).isEqualTo(second).isEqualTo(j.syncedIndex()).isEqualTo(j.lastAppendedIndex());
      assertThat(j.sync()).as("nothing new: returns at once with the same index").isEqualTo(synced);
    }
  }

  @Test
  void shouldLetConcurrentSyncsShareTheWorkAndCoverTheirAppends() throws Exception {
    ExecutorService workers = Executors.newFixedThreadPool(4);
    try (Journal j = Journal.open(dir, new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.SYNC))) {
      j.replay(new RecordingVisitor());
      for (int round = 0; round < 50; round++) {
        long index = j.appendAccept(round + 1, 0, 0, t, t + 60_000);
        List<Future<Long>> syncs = new ArrayList<>();
        for (int k = 0; k < 4; k++) {
          syncs.add(workers.submit(j::sync));
        }
        for (Future<Long> f : syncs) {
          assertThat(f.get()).isGreaterThanOrEqualTo(index);
        }
      }
    } finally {
      workers.shutdownNow();
    }
  }

  @Test
  void shouldReportReplayProgressAndAFinalReport() {
    try (Journal j = Journal.open(dir, new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE))) {
      j.replay(new RecordingVisitor());
      for (int i = 1; i <= 1000; i++) {
        j.appendAccept(i, 0, 0, t, i % 2 == 0 ? t + 60_000 : t + 1);
      }
    }
    List<ReplayProgress> reports = new ArrayList<>();
    List<Boolean> done = new ArrayList<>();
    clock.advanceMs(10);
    JournalOptions options = new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE)
        .setProgressInterval(Duration.ZERO).setProgressListener((journal, p, last) -> {
          reports.add(p);
          done.add(last);
        });
    try (Journal j = Journal.open(dir, options)) {
      ReplayResult r = j.replay(new RecordingVisitor());
      assertThat(r.liveIds()).isEqualTo(500);
    }
    assertThat(reports).hasSizeGreaterThanOrEqualTo(4);
    assertThat(done).containsOnlyOnce(true).last().isEqualTo(true);
    ReplayProgress last = reports.get(reports.size() - 1);
    assertThat(last.entriesRead()).isEqualTo(1000);
    assertThat(last.liveIds()).isEqualTo(500);
    assertThat(last.percent()).isEqualTo(100.0);
    ReplayProgress middle = reports.get(1);
    assertThat(middle.recordsRead()).isEqualTo(512);
    assertThat(middle.percent()).isBetween(40.0, 60.0);
  }

  /**
   * The default listener's line says what the replay knows (entries, records, share, rate, time) and no live-id count,
   * which would be 0 here: the journal holds claims and commits, as effect-first writes, and no accept.
   */
  @Test
  void shouldLogTheReplayWithoutALiveIdCount() {
    try (Journal j = Journal.open(dir, new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE))) {
      j.replay(new RecordingVisitor());
      for (int i = 1; i <= 3; i++) {
        j.appendClaim(ClaimEntry.of(i, 0, 0, i, t, t + 30_000, ClaimEntry.NOT_RECORDED, "worker"));
        j.appendCommit(i, i, t + 60_000);
      }
    }
    List<LogCapture.Line> lines;
    try (LogCapture capture = LogCapture.of("io.github.vertxdedup.journal", Level.DEBUG);
        Journal j = Journal.open(dir, new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE)
            .setProgressInterval(Duration.ofHours(1)))) {
      ReplayResult r = j.replay(new RecordingVisitor());
      assertThat(r.liveIds()).as("no accepts in this journal").isZero();
      lines = capture.lines();
    }
    assertThat(lines).filteredOn(l -> l.message().contains("replay "))
        .as("a replay shorter than the progress interval: its final report alone, at DEBUG (the window's owner logs "
            + "its readiness at INFO)")
        .singleElement()
        .satisfies(l -> assertThat(l.level()).isEqualTo(Level.DEBUG))
        .extracting(LogCapture.Line::message, InstanceOfAssertFactories.STRING)
        .matches("journal .+: replay done, 6 entries from \\d+ records, .+% of the records, .+ entries/s, \\d+ ms")
        .doesNotContain("live");
  }

  /**
   * The default listener logs the reports of a replay longer than the progress interval at INFO, so a long rebuild
   * shows that it moves, and its final report at DEBUG: the journal's owner logs the window's readiness at INFO.
   */
  @Test
  void shouldLogProgressReportsAtInfoAndTheFinalReportAtDebug() {
    try (Journal j = Journal.open(dir, new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE))) {
      j.replay(new RecordingVisitor());
      for (int i = 1; i <= 1000; i++) {
        j.appendAccept(i, 0, 0, t, t + 60_000);
      }
    }
    List<LogCapture.Line> lines;
    try (LogCapture capture = LogCapture.of("io.github.vertxdedup.journal", Level.DEBUG);
        Journal j = Journal.open(dir, new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE)
            .setProgressInterval(Duration.ZERO))) {
      j.replay(new RecordingVisitor());
      lines = capture.lines();
    }
    List<LogCapture.Line> reports = lines.stream().filter(l -> l.message().contains(": replay ")).toList();
    assertThat(reports).hasSizeGreaterThanOrEqualTo(2);
    assertThat(reports.subList(0, reports.size() - 1)).allSatisfy(l -> {
      assertThat(l.level()).isEqualTo(Level.INFO);
      assertThat(l.message()).contains(": replay read ");
    });
    assertThat(reports.get(reports.size() - 1)).satisfies(l -> {
      assertThat(l.level()).isEqualTo(Level.DEBUG);
      assertThat(l.message()).containsPattern(": replay done, 1.000 entries");
    });
  }
}
