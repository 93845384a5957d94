package io.github.vertxdedup.journal;

import io.github.vertxdedup.time.ManualClock;
import static io.github.vertxdedup.journal.RecordingVisitor.accept;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An append that fails half-way (the disk filled up under the mapped file, an I/O error) throws, leaves no part of
 * its record for replay, and does not stop later appends once the fault is gone.
 */
class AppendFailureTest {

  private static final long START_MS = 1_700_000_000_000L;

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock(START_MS);
  private final long t = clock.nowMs();

  private JournalOptions options() {
    return new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE);
  }

  @Test
  void shouldRollBackARecordWhoseWriteFailsHalfWayAndKeepAppending() {
    try (Journal j = Journal.open(dir, options())) {
      j.replay(new RecordingVisitor());
      j.appendAccept(1, 0, 0, t, t + 60_000);

      j.writeFault(() -> {
        throw new InternalError("a fault occurred in an unsafe memory access operation (simulated SIGBUS)");
      });
      assertThatThrownBy(() -> j.appendAccept(2, 0, 0, t, t + 60_000))
          .isInstanceOf(JournalWriteException.class)
          .hasMessageContaining("append failed and was rolled back")
          .hasCauseInstanceOf(InternalError.class);
      AcceptBatch batch = new AcceptBatch(4).add(3, 0, 0, t, t + 60_000).add(4, 0, 0, t, t + 60_000);
      j.writeFault(() -> {
        throw new UncheckedIOException(new java.io.IOException("No space left on device"));
      });
      assertThatThrownBy(() -> j.appendAccepts(batch)).isInstanceOf(JournalWriteException.class);
      assertThat(j.appendFailures()).isEqualTo(2);

      j.writeFault(null);
      j.appendAccept(5, 0, 0, t, t + 60_000);
    }

    try (Journal j = Journal.open(dir, options())) {
      RecordingVisitor v = new RecordingVisitor();
      ReplayResult r = j.replay(v);
      assertThat(v.accepts()).containsExactly(accept(1, 0, 0, t, t + 60_000), accept(5, 0, 0, t, t + 60_000));
      assertThat(r.tornRecords()).isZero();
    }
  }

  @Test
  void shouldFailAnAppendWhoseRollSnapshotSourceThrowsAndWriteTheSnapshotOnTheNextAppend() {
    boolean[] failing = {true};
    JournalOptions options = options().setRollSnapshotSource(w -> {
      w.offsetCommit("orders", 0, 10);
      if (failing[0]) {
        throw new IllegalStateException("owner state unavailable");
      }
    });
    try (Journal j = Journal.open(dir, options)) {
      j.replay(new RecordingVisitor());
      assertThatThrownBy(() -> j.appendAccept(1, 0, 0, t, t + 60_000))
          .isInstanceOf(JournalWriteException.class)
          .hasMessageContaining("roll snapshot source failed");
      failing[0] = false;
      j.appendAccept(2, 0, 0, t, t + 60_000);
    }
    try (Journal j = Journal.open(dir, options())) {
      RecordingVisitor v = new RecordingVisitor();
      j.replay(v);
      assertThat(v.entries).containsExactly(RecordingVisitor.offset("orders", 0, 10),
          accept(2, 0, 0, t, t + 60_000));
    }
  }

  @Test
  void shouldRefuseAnAppendFromInsideTheRollSnapshotSource() {
    Journal[] journal = new Journal[1];
    JournalOptions options = options().setRollSnapshotSource(w -> journal[0].appendAccept(9, 0, 0, t, t + 1));
    try (Journal j = Journal.open(dir, options)) {
      journal[0] = j;
      j.replay(new RecordingVisitor());
      assertThatThrownBy(() -> j.appendAccept(1, 0, 0, t, t + 60_000))
          .isInstanceOf(JournalWriteException.class)
          .hasRootCauseInstanceOf(IllegalStateException.class)
          .hasRootCauseMessage("journal " + j.directory() + ": append called while another append runs (from a "
              + "roll snapshot source, or from a second thread); the appender is single-threaded");
    }
  }
}
