package io.github.vertxdedup.journal;

import io.github.vertxdedup.time.ManualClock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import net.openhft.chronicle.core.values.LongValue;
import net.openhft.chronicle.queue.impl.TableStore;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.table.Metadata;
import net.openhft.chronicle.queue.impl.table.SingleTableBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JournalLockTest {

  private static final long START_MS = 1_700_000_000_000L;

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock(START_MS);

  private JournalOptions options() {
    return new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE);
  }

  @Test
  void shouldRefuseASecondOpenerAndNameTheDirectoryAndHolder() {
    try (Journal first = Journal.open(dir, options())) {
      assertThatThrownBy(() -> Journal.open(dir, options()))
          .isInstanceOfSatisfying(JournalLockedException.class, e -> {
            assertThat(e.directory()).isEqualTo(first.directory());
            assertThat(e.holder()).contains("pid=" + ProcessHandle.current().pid());
          })
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("journal directory " + first.directory() + " is locked by another owner")
          .hasMessageContaining("pid=" + ProcessHandle.current().pid());
    }
  }

  @Test
  void shouldOpenAgainOnceTheHolderClosed() {
    Journal first = Journal.open(dir, options());
    first.close();
    try (Journal second = Journal.open(dir, options())) {
      assertThat(second.replay(new RecordingVisitor()).recordsRead()).isZero();
    }
  }

  /*
   * Chronicle spins 1.5 x its timeout on a write lock whose holder pid looks alive, then gives up. After a kill -9 the
   * pid can look alive (a zombie, a reused pid). Pid 1 is always alive: without the journal's clearing, this append
   * would wait 1.5 x the timeout and then fail.
   */
  @Test
  void shouldAppendAtOnceWhenChronicleWriteLockIsLeftByAPidThatLooksAlive() {
    long t = clock.nowMs();
    try (Journal j = Journal.open(dir, options())) {
      j.replay(new RecordingVisitor());
      j.appendAccept(1, 0, 0, t, t + 60_000);
    }
    try (TableStore<Metadata.NoMeta> store = SingleTableBuilder
        .binary(dir.resolve(SingleChronicleQueue.QUEUE_METADATA_FILE), Metadata.NoMeta.INSTANCE)
        .readOnly(false).build()) {
      for (String key : new String[] {"chronicle.write.lock", "chronicle.append.lock"}) {
        LongValue lock = store.acquireValueFor(key);
        lock.setVolatileValue(1L);
        lock.close();
      }
    }

    // A timeout of 60 s makes a wait unmistakable: the test would run for 90 s.
    JournalOptions options = options().setChronicleTimeout(Duration.ofSeconds(60));
    try (Journal j = Journal.open(dir, options)) {
      RecordingVisitor v = new RecordingVisitor();
      j.replay(v);
      j.appendAccept(2, 0, 0, t, t + 60_000);
      assertThat(v.accepts()).hasSize(1);
    }
    try (Journal j = Journal.open(dir, options())) {
      RecordingVisitor v = new RecordingVisitor();
      j.replay(v);
      assertThat(v.accepts()).hasSize(2);
    }
  }
}
