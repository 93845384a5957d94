package io.github.vertxdedup.journal;

import io.github.vertxdedup.time.ManualClock;
import static io.github.vertxdedup.journal.RecordingVisitor.accept;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every roll cycle the journal can use must survive a restart: Chronicle turns each cycle file's name back into a
 * cycle number when it lists the directory, and the journal's replay start and retention are computed from those
 * numbers. A cycle whose names Chronicle cannot parse (its weekly cycle) made a journal unopenable.
 */
class EveryRollCycleTest {

  private static final long START_MS = 1_700_000_000_000L;

  @TempDir
  Path dir;

  /** Dedup window lengths across the range the options allow (1 ms .. 366 days), with the cycle each picks. */
  static Stream<Arguments> windows() {
    return Stream.of(Duration.ofMinutes(1), Duration.ofHours(1), Duration.ofDays(4), Duration.ofDays(5),
            Duration.ofDays(30), Duration.ofDays(366))
        .map(w -> Arguments.of("window " + w, JournalOptions.rollCycleFor(w)));
  }

  static Stream<Arguments> supportedCycles() {
    return JournalOptions.supportedRollCycles().stream().map(c -> Arguments.of("cycle " + c, c));
  }

  @ParameterizedTest(name = "{0} -> roll cycle")
  @MethodSource("windows")
  void shouldReopenReplayAndRetainWithTheCycleChosenForTheWindow(String name, Duration cycle) throws IOException {
    writeReopenRollAndRetain(cycle);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("supportedCycles")
  void shouldReopenReplayAndRetainWithEverySupportedCycle(String name, Duration cycle) throws IOException {
    writeReopenRollAndRetain(cycle);
  }

  @Test
  void shouldNeverChooseAWeeklyCycleForAnyWindowTheOptionsAllow() {
    assertThat(JournalOptions.supportedRollCycles()).doesNotContain(Duration.ofDays(7));
    assertThat(JournalOptions.rollCycleFor(Duration.ofDays(366))).isEqualTo(Duration.ofDays(1));
  }

  private void writeReopenRollAndRetain(Duration cycle) throws IOException {
    long cycleMs = cycle.toMillis();
    ManualClock clock = new ManualClock(START_MS);
    JournalOptions options = new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE)
        .setRollCycle(cycle);
    long t0 = clock.nowMs();
    int firstCycle = (int) Math.floorDiv(t0, cycleMs);
    // Both ids expire when the next cycle begins at the latest.
    long firstExpiry = (firstCycle + 1L) * cycleMs;

    try (Journal j = Journal.open(dir, options)) {
      j.replay(new RecordingVisitor());
      j.appendAccept(1, 0, 0, t0, firstExpiry);
    }
    try (Journal j = Journal.open(dir, options)) {
      RecordingVisitor v = new RecordingVisitor();
      j.replay(v);
      assertThat(v.accepts()).containsExactly(accept(1, 0, 0, t0, firstExpiry));
      assertThat(j.cycles()).containsExactly(firstCycle);
      j.appendAccept(2, 0, 0, t0, firstExpiry);
    }

    // Into the next cycle: the first one's entries have all expired.
    clock.advance(cycle);
    long t1 = clock.nowMs();
    long secondExpiry = t1 + 10 * cycleMs;
    try (Journal j = Journal.open(dir, options)) {
      RecordingVisitor v = new RecordingVisitor();
      ReplayResult r = j.replay(v);
      assertThat(v.accepts()).containsExactly(accept(1, 0, 0, t0, firstExpiry), accept(2, 0, 0, t0, firstExpiry));
      assertThat(r.liveIds()).isZero();
      j.appendAccept(3, 0, 0, t1, secondExpiry);
      assertThat(j.cycles()).containsExactly(firstCycle, firstCycle + 1);
    }
    assertThat(cycleFiles()).hasSize(2);

    try (Journal j = Journal.open(dir, options)) {
      assertThat(j.cycles()).containsExactly(firstCycle, firstCycle + 1);
      RecordingVisitor v = new RecordingVisitor();
      ReplayResult r = j.replay(v);
      assertThat(v.accepts()).containsExactly(accept(3, 0, 0, t1, secondExpiry));
      assertThat(r.cyclesSkipped()).isEqualTo(1);
      assertThat(r.cyclesRead()).isEqualTo(1);
      RetentionResult kept = j.deleteExpiredCycles(clock.nowMs());
      assertThat(kept).isEqualTo(new RetentionResult(1, firstCycle + 1, 1));
    }
    assertThat(cycleFiles()).hasSize(1);

    try (Journal j = Journal.open(dir, options)) {
      assertThat(j.cycles()).containsExactly(firstCycle + 1);
      RecordingVisitor v = new RecordingVisitor();
      j.replay(v);
      assertThat(v.accepts()).containsExactly(accept(3, 0, 0, t1, secondExpiry));
    }
  }

  private List<Path> cycleFiles() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().endsWith(".cq4")).toList();
    }
  }
}
