package io.github.vertxdedup.journal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.journal.internal.CarriedState;
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
import java.util.Random;
import java.util.stream.Stream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restart from a window snapshot and the records after it rebuilds what a replay of every record rebuilds
 * (live entries in order, open claims, offsets, start of memory), whether the newest snapshot is intact, torn at any
 * byte, damaged, missing, or older than the oldest cycle a replay reads; and the same again (exactly, in the same
 * order) when the recovery's sink takes the snapshot's entries in place.
 */
class SnapshotReplayTest {

  private static final long START_MS = 1_700_000_000_000L;
  /** The owner's window: a few one-second roll cycles, so entries expire and cycles are deleted during a run. */
  private static final long WINDOW_MS = 4_000;

  @TempDir
  Path tmp;

  // ------------------------------------------------------------------------------------------------ the workload

  /** Writes a random journal: accepts, batches, claims, commits, releases, offsets, time steps, retention, snapshots. */
  private static final class Workload {
    final ManualClock clock = new ManualClock(START_MS);
    final CarriedState carried = new CarriedState(clock);
    final Path dir;
    final Random rnd;
    final List<Long> snapshotPositions = new ArrayList<>();
    long token = 1;

    Workload(Path dir, long seed) {
      this.dir = dir;
      this.rnd = new Random(seed);
    }

    JournalOptions options() {
      return new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE).setRollCycle(Duration.ofSeconds(1))
          .setRollSnapshotSource(carried);
    }

    long fp() {
      return 1 + rnd.nextInt(400); // a small pool: ids come back after they expire, keys are shared
    }

    void run(int steps, int snapshotEvery) {
      try (Journal j = Journal.open(dir, options())) {
        j.replay(new JournalVisitor() {
        });
        for (int i = 0; i < steps; i++) {
          long now = clock.nowMs();
          int op = rnd.nextInt(100);
          if (op < 40) {
            long key = rnd.nextInt(4) == 0 ? 1000 + rnd.nextInt(100) : 0;
            long until = rnd.nextInt(3) == 0 ? now + 1 + rnd.nextInt((int) WINDOW_MS) : now + WINDOW_MS;
            j.appendAccept(fp(), key, rnd.nextInt(3) == 0 ? rnd.nextLong() : 0, now, until);
          } else if (op < 50) {
            AcceptBatch b = new AcceptBatch(8);
            int n = 1 + rnd.nextInt(8);
            for (int k = 0; k < n; k++) {
              b.add(fp(), 0, 0, now, now + WINDOW_MS);
            }
            j.appendAccepts(b);
          } else if (op < 60) {
            long f = fp();
            if (carried.openToken(f) == 0) {
              long rememberUntil = rnd.nextBoolean() ? ClaimEntry.NOT_RECORDED : now + 1 + rnd.nextInt(3000);
              ClaimEntry c = ClaimEntry.of(f, rnd.nextBoolean() ? 2000 + rnd.nextInt(50) : 0, rnd.nextLong(),
                  token++, now, now + 500 + rnd.nextInt(3000), rememberUntil, rnd.nextBoolean() ? "c-1" : "");
              j.appendClaim(c);
              carried.claimOpened(c);
              leaseEnds.put(f, c.leaseEndMs());
            }
          } else if (op < 70) {
            settleSomeClaim(j, now, rnd.nextBoolean());
          } else if (op < 75) {
            OffsetCommit o = new OffsetCommit("t" + rnd.nextInt(2), rnd.nextInt(3), rnd.nextInt(1000));
            j.appendOffsetCommit(o.topic(), o.partition(), o.offset());
            carried.offsetCommitted(o);
          } else if (op < 92) {
            clock.advance(Duration.ofMillis(1 + rnd.nextInt(400)));
          } else if (op < 95) {
            j.deleteExpiredCycles(clock.nowMs());
          } else if (i % snapshotEvery == 0 || op < 97) {
            snapshot(j);
          }
        }
      }
    }

    /** Commits or releases an open claim whose lease still runs, as the service does (a late commit is refused). */
    private void settleSomeClaim(Journal j, long now, boolean commit) {
      for (long f = fp(), tries = 0; tries < 40; tries++, f = fp()) {
        long t = carried.openToken(f);
        if (t != 0) {
          // The carried copy drops a claim at its lease end when the next roll writes it; the service refuses a
          // commit after the lease, so settle only claims whose lease runs (CarriedState does not say: track it).
          Long leaseEnd = leaseEnds.get(f);
          if (leaseEnd == null || leaseEnd <= now) {
            carried.claimClosed(f);
            continue;
          }
          if (commit) {
            j.appendCommit(f, t, now + WINDOW_MS);
          } else {
            j.appendRelease(f, t);
          }
          carried.claimClosed(f);
          return;
        }
      }
    }

    final java.util.Map<Long, Long> leaseEnds = new java.util.HashMap<>();

    SnapshotResult snapshot(Journal j) {
      SnapshotResult r = j.writeSnapshot(WINDOW_MS, out -> Recovery.compaction(clock.nowMs(), WINDOW_MS, out));
      if (r != null) {
        snapshotPositions.add(r.position());
      }
      return r;
    }
  }

  // ----------------------------------------------------------------------------------------------- the rebuilds

  /** What a restart rebuilds, in comparable form. */
  private record Rebuilt(List<String> live, List<String> claims, List<String> offsets, long memoryBeginsMs,
      long snapshotIndex) {

    /**
     * Same live entries per fingerprint, in the same order among the entries of one fingerprint (a window keeps the
     * first it is given), whatever the order across fingerprints (a snapshot keeps its entries in table order); same
     * open claims, offsets and start of memory.
     */
    boolean sameStateAs(Rebuilt o) {
      return byFingerprint(live).equals(byFingerprint(o.live)) && claims.equals(o.claims)
          && offsets.equals(o.offsets) && memoryBeginsMs == o.memoryBeginsMs;
    }

    private static List<String> byFingerprint(List<String> entries) {
      List<String> sorted = new ArrayList<>(entries);
      sorted.sort(Comparator.comparing((String e) -> e.substring(0, e.indexOf('/')))); // stable
      return sorted;
    }
  }

  private static Rebuilt rebuild(Path dir, ManualClock clock, boolean fromSnapshot) {
    return rebuild(dir, clock, fromSnapshot, false);
  }

  /**
   * @param inPlace whether the sink takes a snapshot's entries in place, skipping the expired ones as
   *     {@link LiveEntrySink#takeSnapshotEntries} asks
   */
  private static Rebuilt rebuild(Path dir, ManualClock clock, boolean fromSnapshot, boolean inPlace) {
    JournalOptions options = new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE)
        .setRollCycle(Duration.ofSeconds(1));
    long now = clock.nowMs();
    List<String> live = new ArrayList<>();
    Recovery recovery = new Recovery(now, WINDOW_MS, new LiveEntrySink() {
      @Override
      public void live(long fp, long hash, long first, long expires) {
        live.add(fp + "/" + hash + "/" + first + "/" + expires);
      }

      @Override
      public boolean takeSnapshotEntries(SnapshotEntries entries) {
        if (inPlace) {
          for (long i = 0; i < entries.size(); i++) {
            if (entries.expiresAtMs(i) > now) {
              live(entries.fingerprint(i), entries.payloadHash(i), entries.firstSeenMs(i), entries.expiresAtMs(i));
            }
          }
        }
        return inPlace;
      }
    });
    ReplayResult r;
    try (Journal j = Journal.open(dir, options)) {
      r = fromSnapshot ? j.replayFromSnapshot(WINDOW_MS, recovery) : j.replay(recovery);
    }
    List<String> claims = new ArrayList<>();
    recovery.forEachOpenClaim(now, c -> claims.add(c.toString()));
    claims.sort(null);
    List<String> offsets = new ArrayList<>();
    recovery.offsets().toList().forEach(o -> offsets.add(o.toString()));
    offsets.sort(null);
    // The service always knows when the journal was first opened (JournalLayout.memoryBegan): START_MS here.
    return new Rebuilt(live, claims, offsets, recovery.memoryBeginsMs(START_MS, now), r.snapshotIndex());
  }

  private static List<Path> snapshotFiles(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> SnapshotFile.positionOf(p.getFileName().toString()) != Journal.NO_INDEX)
          .sorted(Comparator.comparing((Path p) -> p.getFileName().toString()).reversed()).toList();
    }
  }

  private static void truncate(Path file, long length) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.setLength(length);
    }
  }

  // ----------------------------------------------------------------------------------------------------- tests

  @Property(tries = 25)
  void snapshotReplayShouldEqualFullReplay_whateverHappenedToTheNewestSnapshot(
      @ForAll long seed, @ForAll @IntRange(min = 50, max = 600) int steps,
      @ForAll @IntRange(min = 0, max = 3) int damage) throws IOException {
    // jqwik does not inject @TempDir into a property: one directory per try, deleted after it.
    Path dir = Files.createTempDirectory("snapshot-property");
    try {
      checkAgainstFullReplay(dir, seed, steps, damage);
    } finally {
      try (Stream<Path> s = Files.walk(dir)) {
        s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private void checkAgainstFullReplay(Path dir, long seed, int steps, int damage) throws IOException {
    Workload w = new Workload(dir, seed);
    w.run(steps, 40);
    Rebuilt full = rebuild(dir, w.clock, false);
    Rebuilt intact = rebuild(dir, w.clock, true);
    assertThat(intact.sameStateAs(full)).as("intact snapshot %s vs full %s", intact, full).isTrue();
    Rebuilt inPlace = rebuild(dir, w.clock, true, true);
    assertThat(inPlace).as("entries taken in place").isEqualTo(intact);
    Statistics.label("intact snapshot used").collect(intact.snapshotIndex() != Journal.NO_INDEX);

    List<Path> files = snapshotFiles(dir);
    if (files.isEmpty()) {
      return;
    }
    Path newest = files.get(0);
    long size = Files.size(newest);
    Random rnd = new Random(seed);
    switch (damage) {
      case 0 -> Files.delete(newest);
      case 1 -> truncate(newest, rnd.nextLong(size));
      case 2 -> {
        byte[] b = Files.readAllBytes(newest);
        b[rnd.nextInt(b.length)] ^= (byte) (1 << rnd.nextInt(8));
        Files.write(newest, b);
      }
      default -> w.clock.advance(Duration.ofMillis(rnd.nextInt((int) (3 * WINDOW_MS))));
    }
    Rebuilt after = rebuild(dir, w.clock, true);
    Rebuilt fullAfter = rebuild(dir, w.clock, false);
    assertThat(after.sameStateAs(fullAfter)).as("damage %d: %s vs full %s", damage, after, fullAfter).isTrue();
    assertThat(rebuild(dir, w.clock, true, true)).as("damage %d, entries taken in place", damage).isEqualTo(after);
    if (damage < 3) {
      assertThat(after.snapshotIndex()).as("a damaged or missing snapshot is not used")
          .isNotEqualTo(SnapshotFile.positionOf(newest.getFileName().toString()));
    }
  }

  @Test
  void shouldFallBackToThePreviousSnapshot_whenTheNewestIsTornAtAnyByteOfItsEnd() throws IOException {
    Workload w = new Workload(tmp, 7);
    w.run(400, 1_000_000);
    // Two snapshots at the end, with appends between them.
    try (Journal j = Journal.open(tmp, w.options())) {
      j.replayFromSnapshot(WINDOW_MS, new JournalVisitor() {
      });
      long now = w.clock.nowMs();
      for (int i = 0; i < 50; i++) {
        j.appendAccept(5000 + i, 0, 0, now, now + WINDOW_MS);
      }
      assertThat(w.snapshot(j)).isNotNull();
      for (int i = 0; i < 50; i++) {
        j.appendAccept(6000 + i, 0, 0, now, now + WINDOW_MS);
      }
      assertThat(w.snapshot(j)).isNotNull();
    }
    List<Path> files = snapshotFiles(tmp);
    assertThat(files).hasSize(2);
    long previous = SnapshotFile.positionOf(files.get(1).getFileName().toString());
    Path newest = files.get(0);
    byte[] original = Files.readAllBytes(newest);
    Rebuilt full = rebuild(tmp, w.clock, false);
    assertThat(full.live()).hasSizeGreaterThan(100);
    assertThat(rebuild(tmp, w.clock, true).snapshotIndex())
        .isEqualTo(SnapshotFile.positionOf(newest.getFileName().toString()));

    // Every cut inside the end block (48 bytes), the cycle table before it and the end of the block before that.
    int from = Math.max(SnapshotFile.HEADER, original.length - 128);
    for (int cut = from; cut < original.length; cut++) {
      truncate(newest, cut);
      Rebuilt r = rebuild(tmp, w.clock, true);
      assertThat(r.snapshotIndex()).as("cut at %d of %d", cut, original.length).isEqualTo(previous);
      assertThat(r.sameStateAs(full)).as("cut at %d: %s vs %s", cut, r, full).isTrue();
      Files.write(newest, original);
    }
  }

  /**
   * A snapshot with one bit flipped, in any byte of the file (header, its chain, its checksum, block headers,
   * payloads, block checksums, the end block), fails its check.
   */
  @Test
  void shouldRefuseASnapshot_withAnySingleBitFlipped() throws IOException, SnapshotFile.Damaged {
    Workload w = new Workload(tmp, 23);
    w.run(40, 20);
    List<Path> files = snapshotFiles(tmp);
    assertThat(files).isNotEmpty();
    Path newest = files.get(0);
    byte[] original = Files.readAllBytes(newest);
    long cycleMs = Duration.ofSeconds(1).toMillis();
    assertThat(SnapshotFile.check(newest, cycleMs, WINDOW_MS)).isNotNull();
    assertThat(original.length).as("a snapshot with entries, claims and offsets").isGreaterThan(1_000);
    // Every byte, one bit each (its index mod 8): a CRC32C catches any single-bit error of the bytes it covers, so
    // what this tests is that no byte of the file is left outside a check.
    for (int at = 0; at < original.length; at++) {
      byte[] flipped = original.clone();
      flipped[at] ^= (byte) (1 << (at % 8));
      Files.write(newest, flipped);
      int b = at;
      assertThatThrownBy(() -> SnapshotFile.check(newest, cycleMs, WINDOW_MS))
          .as("bit %d of byte %d of %d", b % 8, b, original.length).isInstanceOf(SnapshotFile.Damaged.class);
    }
  }

  @Test
  void shouldReplayTheWholeJournal_whenBothSnapshotsAreMissingOrDamaged() throws IOException {
    Workload w = new Workload(tmp, 11);
    w.run(500, 50);
    Rebuilt full = rebuild(tmp, w.clock, false);
    List<Path> files = snapshotFiles(tmp);
    assertThat(files).isNotEmpty();
    byte[] b = Files.readAllBytes(files.get(0));
    b[SnapshotFile.HEADER + 20] ^= 1;
    Files.write(files.get(0), b);
    for (Path p : files.subList(1, files.size())) {
      Files.delete(p);
    }
    Rebuilt r = rebuild(tmp, w.clock, true);
    assertThat(r.snapshotIndex()).isEqualTo(Journal.NO_INDEX);
    assertThat(r.sameStateAs(full)).isTrue();
  }

  @Test
  void shouldIgnoreASnapshotOlderThanTheOldestLiveCycle_andRetentionDeletesIt() throws IOException {
    Workload w = new Workload(tmp, 3);
    long oldPosition;
    try (Journal j = Journal.open(tmp, w.options())) {
      j.replay(new JournalVisitor() {
      });
      long now = w.clock.nowMs();
      for (int i = 1; i <= 100; i++) {
        j.appendAccept(i, 0, 0, now, now + WINDOW_MS);
      }
      oldPosition = w.snapshot(j).position();
      // Many cycles later, with appends in each: the snapshot's cycle and everything in it expire.
      for (int c = 0; c < 12; c++) {
        w.clock.advance(Duration.ofMillis(700));
        long t = w.clock.nowMs();
        j.appendAccept(10_000 + c, 0, 0, t, t + WINDOW_MS);
      }
    }
    Rebuilt full = rebuild(tmp, w.clock, false);
    Rebuilt r = rebuild(tmp, w.clock, true);
    assertThat(r.snapshotIndex()).as("a stale snapshot is not used").isEqualTo(Journal.NO_INDEX);
    assertThat(r.sameStateAs(full)).isTrue();
    assertThat(full.live()).hasSize(6);
    assertThat(snapshotFiles(tmp)).extracting(p -> SnapshotFile.positionOf(p.getFileName().toString()))
        .containsExactly(oldPosition);

    try (Journal j = Journal.open(tmp, w.options())) {
      j.replay(new JournalVisitor() {
      });
      j.deleteExpiredCycles(w.clock.nowMs());
    }
    assertThat(snapshotFiles(tmp)).as("retention deletes a snapshot no replay can use").isEmpty();
  }

  @Test
  void shouldReplayOnlyTheRecordsAfterTheSnapshot() throws IOException {
    Workload w = new Workload(tmp, 5);
    try (Journal j = Journal.open(tmp, w.options())) {
      j.replay(new JournalVisitor() {
      });
      long now = w.clock.nowMs();
      for (int i = 1; i <= 1000; i++) {
        j.appendAccept(i, 0, 0, now, now + WINDOW_MS);
      }
      SnapshotResult s = w.snapshot(j);
      assertThat(s.entries()).isEqualTo(1000);
      assertThat(j.entriesSinceSnapshot()).isZero();
      for (int i = 1001; i <= 1010; i++) {
        j.appendAccept(i, 0, 0, now, now + WINDOW_MS);
      }
      assertThat(j.entriesSinceSnapshot()).isEqualTo(10);
    }
    List<String> live = new ArrayList<>();
    ReplayResult r;
    try (Journal j = Journal.open(tmp, w.options())) {
      r = j.replayFromSnapshot(WINDOW_MS, new Recovery(w.clock.nowMs(), WINDOW_MS,
          (fp, hash, first, expires) -> live.add(Long.toString(fp))));
    }
    assertThat(r.snapshotEntries()).isEqualTo(1000);
    assertThat(r.accepts()).as("records read after the snapshot").isEqualTo(10);
    assertThat(live).hasSize(1010).doesNotHaveDuplicates();
    assertThat(live.subList(1000, 1010)).as("the tail, in journal order").containsExactly("1001", "1002", "1003",
        "1004", "1005", "1006", "1007", "1008", "1009", "1010");
    List<Long> snapshotOrder = live.subList(0, 1000).stream().map(f -> SortingOutput.key(Long.parseLong(f)))
        .toList();
    assertThat(snapshotOrder).as("the snapshot's entries in table order").isSorted();
  }
}
