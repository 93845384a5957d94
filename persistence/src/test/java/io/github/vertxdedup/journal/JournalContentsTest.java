package io.github.vertxdedup.journal;

import io.github.vertxdedup.time.ManualClock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reading a journal directory at an instant, as a restart then would rebuild it: the live entries, the open claims
 * and the offsets come from the owner's recovery ({@code journal.internal.Recovery}); every record also reaches the
 * caller's visitor; nothing is appended, and a directory without a journal is refused without being created.
 */
class JournalContentsTest {

  private static final long START_MS = 1_700_000_000_000L;

  private static final long T0 = START_MS;
  private static final long W = 60_000;

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock(START_MS);
  private final List<long[]> live = new ArrayList<>();

  private void writeJournal() {
    JournalOptions options = new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE)
        .setRollCycle(JournalOptions.rollCycleFor(java.time.Duration.ofMillis(W)));
    try (Journal j = Journal.open(dir, options)) {
      j.replay(new RecordingVisitor());
      j.appendAccept(1, 10, 0, T0, T0 + W);                                    // live until T0 + W, with a key
      j.appendAccept(2, 0, 0, T0, T0 + 1_000);                                 // expires at T0 + 1 s
      j.appendClaim(ClaimEntry.of(3, 30, 0x33, 7, T0, T0 + 20_000, T0 + 2 * W, "worker-1"));
      j.appendCommit(3, 7, T0 + 2 * W);                                        // the claim's key comes along
      j.appendClaim(ClaimEntry.of(4, 0, 0, 8, T0, T0 + 20_000, ClaimEntry.NOT_RECORDED, "worker-2")); // open
      j.appendClaim(ClaimEntry.of(5, 0, 0, 9, T0, T0 + 20_000, ClaimEntry.NOT_RECORDED, ""));
      j.appendRelease(5, 9);
      j.appendOffsetCommit("orders", 1, 42);
      j.appendOffsetCommit("orders", 1, 40);
    }
  }

  private JournalContents read(long nowMs, JournalVisitor records) {
    return JournalContents.read(dir, W, nowMs, (fp, payload, firstSeenMs, expiresAtMs) ->
        live.add(new long[] {fp, payload, firstSeenMs, expiresAtMs}), records);
  }

  @Test
  void shouldYieldWhatARestartAtTheInstantWouldRebuild() {
    writeJournal();
    RecordingVisitor records = new RecordingVisitor();
    JournalContents c = read(T0 + 5_000, records);

    assertThat(live).containsExactly(
        new long[] {1, 0, T0, T0 + W},
        new long[] {10, 0, T0, T0 + W},
        new long[] {3, 0x33, T0, T0 + 2 * W},
        new long[] {30, 0x33, T0, T0 + 2 * W});
    assertThat(c.openClaims()).containsExactly(
        ClaimEntry.of(4, 0, 0, 8, T0, T0 + 20_000, ClaimEntry.NOT_RECORDED, "worker-2"));
    assertThat(c.offsets()).containsExactly(new OffsetCommit("orders", 1, 42));
    assertThat(c.nowMs()).isEqualTo(T0 + 5_000);
    assertThat(c.cycleFiles()).isEqualTo(1);
    assertThat(records.entries).hasSize(9);
    assertThat(c.replay().entries()).isEqualTo(9);

    // Later: the claim's lease has ended, the first accept has expired; nothing was appended by the first read.
    live.clear();
    JournalContents later = read(T0 + W, new RecordingVisitor());
    assertThat(live).extracting(e -> e[0]).containsExactly(3L, 30L);
    assertThat(later.openClaims()).isEmpty();
    assertThat(later.replay().recordsRead()).isEqualTo(c.replay().recordsRead());
  }

  @Test
  void shouldRefuseWhileTheOwnerHoldsTheJournal() {
    writeJournal();
    try (Journal owner = Journal.open(dir, new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE)
        .setRollCycle(JournalOptions.rollCycleFor(java.time.Duration.ofMillis(W))))) {
      assertThat(owner.directory()).isEqualTo(dir.toAbsolutePath().normalize());
      assertThatThrownBy(() -> read(T0, new RecordingVisitor())).isInstanceOf(JournalLockedException.class);
    }
  }

  @Test
  void readOnly_shouldReadTheJournalOfARunningOwnerWithoutTouchingIt() throws Exception {
    writeJournal();
    JournalOptions options = new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE)
        .setRollCycle(JournalOptions.rollCycleFor(java.time.Duration.ofMillis(W)));
    try (Journal owner = Journal.open(dir, options)) {
      owner.replay(new RecordingVisitor());
      owner.appendAccept(6, 0, 0, T0 + 1_000, T0 + W);
      Map<Path, byte[]> before = files();

      RecordingVisitor records = new RecordingVisitor();
      JournalContents view = JournalContents.readOnly(dir, W, T0 + 5_000, (fp, payload, firstSeenMs, expiresAtMs) ->
          live.add(new long[] {fp, payload, firstSeenMs, expiresAtMs}), records);

      assertThat(live).extracting(e -> e[0]).containsExactly(1L, 10L, 3L, 30L, 6L);
      assertThat(view.openClaims()).containsExactly(
          ClaimEntry.of(4, 0, 0, 8, T0, T0 + 20_000, ClaimEntry.NOT_RECORDED, "worker-2"));
      assertThat(view.offsets()).containsExactly(new OffsetCommit("orders", 1, 42));
      assertThat(records.entries).hasSize(10);
      assertThat(files()).as("the view wrote nothing: every file byte for byte as before")
          .containsOnlyKeys(before.keySet())
          .allSatisfy((file, bytes) -> assertThat(bytes).as("%s", file).isEqualTo(before.get(file)));

      // The owner still holds its lock and appends; a later view sees the new record.
      owner.appendAccept(7, 0, 0, T0 + 2_000, T0 + W);
      assertThatThrownBy(() -> read(T0, new RecordingVisitor())).isInstanceOf(JournalLockedException.class);
      live.clear();
      JournalContents.readOnly(dir, W, T0 + 5_000, (fp, payload, firstSeenMs, expiresAtMs) ->
          live.add(new long[] {fp, payload, firstSeenMs, expiresAtMs}), new RecordingVisitor());
      assertThat(live).extracting(e -> e[0]).containsExactly(1L, 10L, 3L, 30L, 6L, 7L);
    }
    assertThatThrownBy(() -> JournalContents.readOnly(dir.resolve("nothing"), W, T0, (f, p, s, e) -> { },
        new RecordingVisitor())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("dir must be");
  }

  /** Every file of the journal directory and its bytes. */
  private Map<Path, byte[]> files() throws IOException {
    Map<Path, byte[]> bytes = new TreeMap<>();
    try (Stream<Path> s = Files.list(dir)) {
      for (Path f : s.toList()) {
        bytes.put(f.getFileName(), Files.readAllBytes(f));
      }
    }
    return bytes;
  }

  @Test
  void shouldRefuseADirectoryWithoutAJournalAndArgumentsOutOfRange() {
    Path missing = dir.resolve("nothing");
    assertThat(JournalContents.isJournalDirectory(missing)).isFalse();
    assertThatThrownBy(() -> JournalContents.read(missing, W, T0, (f, p, s, e) -> { }, new RecordingVisitor()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("dir must be a journal directory");
    assertThat(Files.exists(missing)).isFalse();

    writeJournal();
    assertThat(JournalContents.isJournalDirectory(dir)).isTrue();
    assertThatThrownBy(() -> JournalContents.read(dir, 0, T0, (f, p, s, e) -> { }, new RecordingVisitor()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("windowMs must be > 0 but was 0");
    assertThatThrownBy(() -> JournalContents.read(dir, W, -1, (f, p, s, e) -> { }, new RecordingVisitor()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("nowMs must be >= 0 (epoch milliseconds) but was -1");
  }

  private JournalOptions options() {
    return new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE)
        .setRollCycle(JournalOptions.rollCycleFor(java.time.Duration.ofMillis(W)));
  }

  @Test
  void deleteIfForgotten_keepsAJournalUntilItRemembersNothingThenDeletesItsDirectory() {
    Path partition = dir.resolve("orders-1");
    try (Journal j = Journal.open(partition, options())) {
      j.replay(new RecordingVisitor());
      j.appendAccept(1, 10, 0, T0, T0 + W);
      j.appendClaim(ClaimEntry.of(3, 30, 0x33, 7, T0, T0 + 20_000, T0 + 2 * W, "worker-1"));
      j.appendCommit(3, 7, T0 + 2 * W);
      j.appendOffsetCommit("orders", 1, 42);
    }

    JournalContents.Removal kept = JournalContents.deleteIfForgotten(partition, W, T0 + 5_000);
    assertThat(kept.deleted()).isFalse();
    assertThat(kept.keptUntilMs()).isEqualTo(T0 + W); // the first live entry found
    JournalContents.Removal stillKept = JournalContents.deleteIfForgotten(partition, W, T0 + 2 * W - 1);
    assertThat(stillKept).isEqualTo(new JournalContents.Removal(false, T0 + 2 * W));
    // What was kept was not changed: a restart then still remembers the committed claim.
    readPartition(T0 + W, new RecordingVisitor());
    assertThat(live).extracting(e -> e[0]).containsExactly(3L, 30L);
    live.clear();
    readPartition(T0 + W, new RecordingVisitor()); // nothing was appended by the look either
    assertThat(live).hasSize(2);

    assertThat(JournalContents.deleteIfForgotten(partition, W, T0 + 2 * W))
        .isEqualTo(new JournalContents.Removal(true, T0 + 2 * W));
    assertThat(Files.exists(partition)).isFalse();
  }

  private void readPartition(long nowMs, JournalVisitor records) {
    JournalContents.read(dir.resolve("orders-1"), W, nowMs, (fp, payload, firstSeenMs, expiresAtMs) ->
        live.add(new long[] {fp, payload, firstSeenMs, expiresAtMs}), records);
  }

  @Test
  void deleteIfForgotten_keepsAJournalWithAnOpenClaimUntilItsLeaseEnds() {
    Path partition = dir.resolve("orders-2");
    try (Journal j = Journal.open(partition, options())) {
      j.replay(new RecordingVisitor());
      j.appendClaim(ClaimEntry.of(4, 0, 0, 8, T0, T0 + 20_000, ClaimEntry.NOT_RECORDED, "worker-2"));
    }
    assertThat(JournalContents.deleteIfForgotten(partition, W, T0 + 1_000))
        .isEqualTo(new JournalContents.Removal(false, T0 + 20_000));
    assertThat(JournalContents.deleteIfForgotten(partition, W, T0 + 20_000).deleted()).isTrue();
    assertThat(Files.exists(partition)).isFalse();
  }

  @Test
  void deleteIfForgotten_leavesAJournalAnotherOwnerHoldsAndRefusesADirectoryWithoutOne() throws Exception {
    Path partition = dir.resolve("orders-3");
    try (Journal owner = Journal.open(partition, options())) {
      owner.replay(new RecordingVisitor());
      owner.appendAccept(1, 0, 0, T0, T0 + 1_000);
      assertThatThrownBy(() -> JournalContents.deleteIfForgotten(partition, W, T0 + W))
          .isInstanceOf(JournalLockedException.class);
      assertThat(JournalContents.isJournalDirectory(partition)).isTrue();
    }
    // An opened journal that was never written to has a lock file and no cycle file: it is a journal too.
    Path empty = dir.resolve("orders-4");
    Journal.open(empty, options()).close();
    assertThat(JournalContents.deleteIfForgotten(empty, W, T0).deleted()).isTrue();

    Path other = Files.createDirectories(dir.resolve("not-a-journal"));
    assertThatThrownBy(() -> JournalContents.deleteIfForgotten(other, W, T0 + W))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("dir must be a journal directory");
    assertThat(Files.list(other).count()).isZero();
  }
}
