package io.github.vertxdedup.journal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.journal.internal.Recovery;
import io.github.vertxdedup.time.ManualClock;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A window snapshot's entries read in place ({@link SnapshotEntries}, {@link JournalVisitor#onSnapshotEntriesInPlace})
 * are the entries a replay delivers one by one, in the same order, whatever the number of blocks and of mapping
 * segments; a visitor that takes them receives everything else exactly as one that does not; a damaged snapshot, a
 * file without the writer's layout or a journal without a snapshot offers no view.
 */
class SnapshotEntriesTest {

  private static final long START_MS = 1_700_000_000_000L;
  private static final long WINDOW_MS = 4_000;
  private static final long CYCLE_MS = 1_000;

  @TempDir
  Path tmp;

  private final ManualClock clock = new ManualClock(START_MS);

  private JournalOptions options() {
    return new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE)
        .setRollCycle(Duration.ofMillis(CYCLE_MS));
  }

  private SnapshotResult snapshot(Journal j) {
    return j.writeSnapshot(WINDOW_MS, out -> Recovery.compaction(clock.nowMs(), WINDOW_MS, out));
  }

  /** Appends {@code n} accepts with ids {@code first, first + 1, ...}: first-seen and expiry vary, some have a hash. */
  private void appendAccepts(Journal j, long first, int n) {
    long now = clock.nowMs();
    for (int i = 0; i < n; i++) {
      long fp = first + i;
      j.appendAccept(fp, 0, fp % 3 == 0 ? fp * 31 : 0, now - i % 50, now + WINDOW_MS - i % 7);
    }
  }

  private Path snapshotFile(long position) {
    return tmp.resolve(SnapshotFile.name(position));
  }

  private static List<Path> snapshotFiles(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> SnapshotFile.positionOf(p.getFileName().toString()) != Journal.NO_INDEX)
          .sorted(Comparator.comparing((Path p) -> p.getFileName().toString()).reversed()).toList();
    }
  }

  private static List<String> entries(SnapshotEntries view) {
    List<String> out = new ArrayList<>();
    for (long i = 0; i < view.size(); i++) {
      out.add(RecordingVisitor.accept(view.fingerprint(i), 0, view.payloadHash(i), view.firstSeenMs(i),
          view.expiresAtMs(i)));
    }
    return out;
  }

  /**
   * Records every call in order, as text; takes the snapshot's entries in place if {@code take}, copying them to
   * {@link #inPlace}.
   */
  private static final class Calls implements JournalVisitor {
    final boolean take;
    final List<String> calls = new ArrayList<>();
    final List<String> inPlace = new ArrayList<>();
    SnapshotEntries view;
    int offered;

    Calls(boolean take) {
      this.take = take;
    }

    @Override
    public void onRecord(long index, int length) {
      calls.add("record " + index + " " + length);
    }

    @Override
    public void onAccept(long fp, long key, long payload, long acceptedAtMs, long expiresAtMs) {
      calls.add(RecordingVisitor.accept(fp, key, payload, acceptedAtMs, expiresAtMs));
    }

    @Override
    public void onClaim(ClaimEntry c) {
      calls.add(RecordingVisitor.claim(c));
    }

    @Override
    public void onCommit(long fp, long token, long expiresAtMs) {
      calls.add(RecordingVisitor.commit(fp, token, expiresAtMs));
    }

    @Override
    public void onRelease(long fp, long token) {
      calls.add(RecordingVisitor.release(fp, token));
    }

    @Override
    public void onOffsetCommit(String topic, int partition, long offset) {
      calls.add(RecordingVisitor.offset(topic, partition, offset));
    }

    @Override
    public void onSnapshot(long index, long coveredSinceMs) {
      calls.add("snapshot " + index + " since=" + coveredSinceMs);
    }

    @Override
    public void onSnapshotEntries(long entries) {
      calls.add("snapshot entries " + entries);
    }

    @Override
    public boolean onSnapshotEntriesInPlace(SnapshotEntries entries) {
      offered++;
      view = entries;
      if (take) {
        inPlace.addAll(entries(entries));
      }
      return take;
    }
  }

  private ReplayResult replay(JournalVisitor v) {
    try (Journal j = Journal.open(tmp, options())) {
      return j.replayFromSnapshot(WINDOW_MS, v);
    }
  }

  // ----------------------------------------------------------------------------------------------------- tests

  @ParameterizedTest(name = "{0} entries")
  @ValueSource(ints = {1, 4_095, 4_096, 4_097, 20_011})
  void viewShouldHoldTheEntriesDelivered_inTheirOrder(int n) {
    long position;
    try (Journal j = Journal.open(tmp, options())) {
      j.replay(new JournalVisitor() {
      });
      appendAccepts(j, 1, n);
      position = snapshot(j).position();
    }
    Calls delivered = new Calls(false);
    ReplayResult d = replay(delivered);
    Calls taken = new Calls(true);
    ReplayResult t;
    long journalCount;
    try (Journal j = Journal.open(tmp, options())) {
      t = j.replayFromSnapshot(WINDOW_MS, taken);
      journalCount = j.snapshotEntries();
    }

    assertThat(delivered.offered).as("a view is offered to a visitor that declines it too").isEqualTo(1);
    assertThat(delivered.calls.get(1)).isEqualTo("snapshot entries " + n);
    List<String> accepts = delivered.calls.stream().filter(c -> c.startsWith("accept ")).toList();
    assertThat(accepts).hasSize(n);
    assertThat(entries(delivered.view)).as("the view equals the delivery").isEqualTo(accepts);
    assertThat(taken.inPlace).isEqualTo(accepts);
    assertThat(taken.view.size()).isEqualTo(n);
    assertThat(taken.view.file()).isEqualTo(snapshotFile(position));
    assertThat(taken.calls).as("no accept delivered for an entry taken in place")
        .noneMatch(c -> c.startsWith("accept ") || c.startsWith("snapshot entries"));
    assertThat(t.snapshotEntries()).isEqualTo(n).isEqualTo(d.snapshotEntries());
    assertThat(journalCount).isEqualTo(n);
    long minFirstSeen = Long.MAX_VALUE;
    for (long i = 0; i < n; i++) {
      minFirstSeen = Math.min(minFirstSeen, taken.view.firstSeenMs(i));
    }
    assertThat(taken.view.minFirstSeenMs()).isEqualTo(minFirstSeen);
    assertThatThrownBy(() -> taken.view.fingerprint(n)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> taken.view.expiresAtMs(-1)).isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void shouldDeliverEverythingElseIdentically_whetherTheEntriesAreTakenOrNot() {
    long now = clock.nowMs();
    try (Journal j = Journal.open(tmp, options())) {
      j.replay(new JournalVisitor() {
      });
      appendAccepts(j, 1, 9_000);
      j.appendAccept(50_000, 60_000, 7, now, now + 300); // an id with a key, expired by the replay
      j.appendClaim(ClaimEntry.of(70_000, 70_001, 5, 1, now, now + 3_000, ClaimEntry.NOT_RECORDED, "c-1"));
      j.appendClaim(ClaimEntry.of(70_002, 0, 6, 2, now, now + 3_000, now + 2_000, ""));
      j.appendOffsetCommit("t", 0, 41);
      j.appendOffsetCommit("t", 1, 7);
      assertThat(snapshot(j)).isNotNull();
      clock.advanceMs(400);
      long later = clock.nowMs();
      j.appendAccept(1, 0, 0, later, later + WINDOW_MS); // an id of the snapshot, accepted again
      j.appendAccept(80_000, 80_001, 9, later, later + WINDOW_MS);
      j.appendCommit(70_000, 1, later + WINDOW_MS);
      j.appendRelease(70_002, 2);
      j.appendClaim(ClaimEntry.of(70_003, 0, 0, 3, later, later + 3_000, ClaimEntry.NOT_RECORDED, "c-2"));
      j.appendOffsetCommit("t", 0, 50);
    }

    Calls delivered = new Calls(false);
    ReplayResult d = replay(delivered);
    Calls taken = new Calls(true);
    ReplayResult t = replay(taken);

    long n = d.snapshotEntries();
    assertThat(n).isEqualTo(9_002).isEqualTo(taken.view.size());
    List<String> expected = new ArrayList<>();
    expected.add(delivered.calls.get(0)); // onSnapshot
    expected.add("snapshot entries " + n);
    expected.addAll(taken.inPlace);
    expected.addAll(taken.calls.subList(1, taken.calls.size()));
    assertThat(taken.calls.get(0)).startsWith("snapshot ");
    assertThat(delivered.calls).as("claims, offsets and the records after the snapshot, in the same order")
        .isEqualTo(expected);
    assertThat(taken.calls).filteredOn(c -> c.startsWith("claim ")).hasSize(3);
    assertThat(taken.calls).filteredOn(c -> c.startsWith("offset ")).hasSize(3);
    assertThat(List.of(t.snapshotIndex(), t.snapshotEntries(), t.recordsRead(), t.accepts(), t.claims(), t.commits(),
        t.releases(), t.offsetCommits(), t.liveIds()))
        .isEqualTo(List.of(d.snapshotIndex(), d.snapshotEntries(), d.recordsRead(), d.accepts(), d.claims(),
            d.commits(), d.releases(), d.offsetCommits(), d.liveIds()));
  }

  @Test
  void recoveryShouldRebuildTheSameState_whenItsSinkTakesTheEntriesInPlace() {
    long now = clock.nowMs();
    try (Journal j = Journal.open(tmp, options())) {
      j.replay(new JournalVisitor() {
      });
      appendAccepts(j, 1, 5_000);
      j.appendAccept(9_999, 0, 0, now - 1_000, now + 100); // the earliest first seen; expired at the replay
      j.appendClaim(ClaimEntry.of(70_000, 70_001, 5, 1, now, now + 3_000, ClaimEntry.NOT_RECORDED, "c-1"));
      j.appendOffsetCommit("t", 0, 41);
      assertThat(snapshot(j)).isNotNull();
      clock.advanceMs(500);
      long later = clock.nowMs();
      j.appendAccept(2, 0, 0, later, later + WINDOW_MS);
      j.appendCommit(70_000, 1, later + WINDOW_MS);
    }
    long at = clock.nowMs();

    List<String> delivered = new ArrayList<>();
    Recovery one = new Recovery(at, WINDOW_MS, (fp, hash, first, expires) ->
        delivered.add(fp + "/" + hash + "/" + first + "/" + expires));
    replay(one);

    List<String> taken = new ArrayList<>();
    List<Long> expected = new ArrayList<>();
    Recovery other = new Recovery(at, WINDOW_MS, new LiveEntrySink() {
      @Override
      public void live(long fp, long hash, long first, long expires) {
        taken.add(fp + "/" + hash + "/" + first + "/" + expires);
      }

      @Override
      public void expect(long entries) {
        expected.add(entries);
      }

      @Override
      public boolean takeSnapshotEntries(SnapshotEntries entries) {
        for (long i = 0; i < entries.size(); i++) {
          if (entries.expiresAtMs(i) > at) { // what live() would not have been given, the taker skips
            taken.add(entries.fingerprint(i) + "/" + entries.payloadHash(i) + "/" + entries.firstSeenMs(i) + "/"
                + entries.expiresAtMs(i));
          }
        }
        return true;
      }
    });
    replay(other);

    assertThat(expected).as("expect() is for entries that follow one by one").isEmpty();
    assertThat(taken).isEqualTo(delivered).hasSizeGreaterThan(5_000);
    assertThat(other.memoryBeginsMs(Recovery.NO_MEMORY, at)).isEqualTo(one.memoryBeginsMs(Recovery.NO_MEMORY, at))
        .isEqualTo(START_MS - 1_000);
    List<String> claimsOne = new ArrayList<>();
    one.forEachOpenClaim(at, c -> claimsOne.add(c.toString()));
    List<String> claimsOther = new ArrayList<>();
    other.forEachOpenClaim(at, c -> claimsOther.add(c.toString()));
    assertThat(claimsOther).isEqualTo(claimsOne);
    assertThat(other.offsets().toList()).isEqualTo(one.offsets().toList());
  }

  @Test
  void severalMappingSegments_shouldGiveTheSameEntries() throws Exception {
    long position;
    try (Journal j = Journal.open(tmp, options())) {
      j.replay(new JournalVisitor() {
      });
      appendAccepts(j, 1, 20_011); // 5 blocks, the last of 3,627 entries
      position = snapshot(j).position();
    }
    SnapshotFile.Loaded loaded = SnapshotFile.check(snapshotFile(position), CYCLE_MS, WINDOW_MS);
    assertThat(loaded.inPlace()).isTrue();
    Calls one = new Calls(true);
    loaded.deliver(one);
    assertThat(one.view.segmentCount()).isEqualTo(1);
    for (int shift = 0; shift <= 3; shift++) {
      Calls segmented = new Calls(true);
      loaded.deliver(segmented, shift);
      assertThat(segmented.view.segmentCount()).as("shift %d", shift).isEqualTo((5 + (1 << shift) - 1) >> shift);
      assertThat(segmented.inPlace).as("shift %d", shift).isEqualTo(one.inPlace).hasSize(20_011);
      assertThat(segmented.calls).isEqualTo(one.calls);
      // The bulk copy, over ranges that cross blocks and segments, gives what the accessors give.
      SnapshotEntries view = segmented.view;
      for (long from : new long[] {0, 1, 4_095, 4_096, 8_190, 16_000, 20_000}) {
        int count = (int) Math.min(9_000, view.size() - from);
        long[] copied = new long[4 * count];
        view.copyTo(from, count, copied);
        for (int k = 0; k < count; k++) {
          long i = from + k;
          assertThat(new long[] {copied[4 * k], copied[4 * k + 1], copied[4 * k + 2], copied[4 * k + 3]})
              .as("shift %d, entry %d", shift, i)
              .containsExactly(view.fingerprint(i), view.payloadHash(i), view.firstSeenMs(i), view.expiresAtMs(i));
        }
      }
      assertThatThrownBy(() -> view.copyTo(20_000, 12, new long[48])).isInstanceOf(IndexOutOfBoundsException.class);
      assertThatThrownBy(() -> view.copyTo(0, 12, new long[47])).isInstanceOf(IndexOutOfBoundsException.class);
    }
    Calls delivered = new Calls(false);
    loaded.deliver(delivered, 0);
    assertThat(delivered.calls).filteredOn(c -> c.startsWith("accept ")).isEqualTo(one.inPlace);
  }

  @Test
  void viewShouldAnswerSeveralThreadsAtOnce() throws Exception {
    try (Journal j = Journal.open(tmp, options())) {
      j.replay(new JournalVisitor() {
      });
      appendAccepts(j, 1, 12_000);
      snapshot(j);
    }
    Path file = snapshotFiles(tmp).get(0);
    SnapshotFile.Loaded loaded = SnapshotFile.check(file, CYCLE_MS, WINDOW_MS);
    Calls c = new Calls(true);
    loaded.deliver(c, 1);
    SnapshotEntries view = c.view;
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<List<String>>> reads = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        reads.add(pool.submit(() -> entries(view)));
      }
      for (Future<List<String>> r : reads) {
        assertThat(r.get()).isEqualTo(c.inPlace);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void viewShouldStayReadable_afterItsFileIsDeleted() throws IOException {
    try (Journal j = Journal.open(tmp, options())) {
      j.replay(new JournalVisitor() {
      });
      appendAccepts(j, 1, 5_000);
      snapshot(j);
    }
    Calls c = new Calls(true);
    replay(c);
    Files.delete(c.view.file());
    assertThat(entries(c.view)).isEqualTo(c.inPlace).hasSize(5_000);
  }

  @Test
  void shouldOfferThePreviousSnapshotsView_orNone_whenTheNewestIsTornOrDamaged() throws IOException {
    long first;
    long second;
    try (Journal j = Journal.open(tmp, options())) {
      j.replay(new JournalVisitor() {
      });
      appendAccepts(j, 1, 5_000);
      first = snapshot(j).position();
      appendAccepts(j, 10_001, 100);
      second = snapshot(j).position();
    }
    Path newest = snapshotFile(second);
    byte[] original = Files.readAllBytes(newest);

    // A flipped bit in the newest's first entries block, then the newest cut inside its entries.
    byte[] flipped = original.clone();
    flipped[SnapshotFile.HEADER + SnapshotFile.BLOCK_HEADER + 40] ^= 4;
    Files.write(newest, flipped);
    Calls damaged = new Calls(true);
    ReplayResult r = replay(damaged);
    assertThat(r.snapshotIndex()).isEqualTo(first);
    assertThat(damaged.offered).isEqualTo(1);
    assertThat(damaged.view.file()).isEqualTo(snapshotFile(first));
    assertThat(damaged.view.size()).isEqualTo(5_000).isEqualTo(r.snapshotEntries());

    Files.write(newest, original);
    try (RandomAccessFile f = new RandomAccessFile(newest.toFile(), "rw")) {
      f.setLength(SnapshotFile.HEADER + 3 * SnapshotEntries.BLOCK_BYTES / 2);
    }
    Calls torn = new Calls(true);
    r = replay(torn);
    assertThat(r.snapshotIndex()).isEqualTo(first);
    assertThat(torn.view.file()).isEqualTo(snapshotFile(first));
    Calls tornDelivered = new Calls(false);
    replay(tornDelivered);
    assertThat(tornDelivered.calls).filteredOn(c -> c.startsWith("accept ")).startsWith(
        torn.inPlace.toArray(new String[0]));

    // Both damaged: a full replay, no view.
    byte[] previous = Files.readAllBytes(snapshotFile(first));
    previous[SnapshotFile.HEADER + SnapshotFile.BLOCK_HEADER + 40] ^= 4;
    Files.write(snapshotFile(first), previous);
    Calls none = new Calls(true);
    r = replay(none);
    assertThat(r.snapshotIndex()).isEqualTo(Journal.NO_INDEX);
    assertThat(none.offered).isZero();
    assertThat(none.calls).filteredOn(c -> c.startsWith("accept ")).hasSize(5_100);
  }

  @Test
  void shouldOfferNoView_whenTheEntriesAreNotInTheWritersLayout() throws Exception {
    Path file = tmp.resolve(SnapshotFile.name(7));
    try (SnapshotFileWriter w = new SnapshotFileWriter(file)) {
      for (int i = 1; i <= 10; i++) {
        w.entry(i, 0, START_MS, START_MS + WINDOW_MS);
      }
      w.claim(ClaimEntry.of(100, 0, 0, 1, START_MS, START_MS + 1_000, ClaimEntry.NOT_RECORDED, ""));
      for (int i = 11; i <= 20; i++) { // a second, short entries block after another block
        w.entry(i, 0, START_MS, START_MS + WINDOW_MS);
      }
      w.finish(7, CYCLE_MS, WINDOW_MS, START_MS, Map.of());
    }
    SnapshotFile.Loaded loaded = SnapshotFile.check(file, CYCLE_MS, WINDOW_MS);
    assertThat(loaded.inPlace()).isFalse();
    Calls c = new Calls(true);
    loaded.deliver(c);
    assertThat(c.offered).isZero();
    assertThat(c.calls.get(1)).isEqualTo("snapshot entries 20");
    assertThat(c.calls).filteredOn(s -> s.startsWith("accept ")).hasSize(20);
    assertThat(c.calls).filteredOn(s -> s.startsWith("claim ")).hasSize(1);
  }

  @Test
  void recoveryShouldCountTheEarliestFirstSeen_ofEntriesTakenInPlace() throws Exception {
    // A snapshot whose entries go back further than its covered-since instant: the start of memory is the earlier.
    Path file = tmp.resolve(SnapshotFile.name(9));
    try (SnapshotFileWriter w = new SnapshotFileWriter(file)) {
      w.entry(1, 0, START_MS - 5_000, START_MS + 100);
      w.entry(2, 0, START_MS, START_MS + WINDOW_MS);
      w.coveredSince(START_MS - 1_000);
      w.finish(9, CYCLE_MS, WINDOW_MS, START_MS, Map.of());
    }
    SnapshotFile.Loaded loaded = SnapshotFile.check(file, CYCLE_MS, WINDOW_MS);
    long at = START_MS + 200;
    List<Long> delivered = new ArrayList<>();
    Recovery one = new Recovery(at, WINDOW_MS, (fp, hash, first, expires) -> delivered.add(fp));
    loaded.deliver(one);
    Recovery other = new Recovery(at, WINDOW_MS, new LiveEntrySink() {
      @Override
      public void live(long fp, long hash, long first, long expires) {
        throw new AssertionError("no entry follows one by one");
      }

      @Override
      public boolean takeSnapshotEntries(SnapshotEntries entries) {
        return true;
      }
    });
    loaded.deliver(other);
    assertThat(delivered).as("the expired entry is skipped").containsExactly(2L);
    assertThat(other.memoryBeginsMs(Recovery.NO_MEMORY, at)).isEqualTo(one.memoryBeginsMs(Recovery.NO_MEMORY, at))
        .isEqualTo(START_MS - 5_000);
  }

  @Test
  void shouldNeverOfferAView_withoutASnapshot() {
    try (Journal j = Journal.open(tmp, options())) {
      j.replay(new JournalVisitor() {
      });
      appendAccepts(j, 1, 5_000);
    }
    Calls c = new Calls(true);
    ReplayResult r = replay(c);
    assertThat(r.snapshotIndex()).isEqualTo(Journal.NO_INDEX);
    assertThat(c.offered).isZero();
    assertThat(c.calls).filteredOn(s -> s.startsWith("accept ")).hasSize(5_000);
  }
}
