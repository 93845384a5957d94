package io.github.vertxdedup.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import org.junit.jupiter.api.Test;

/**
 * {@link DedupWindow#restoreInPlace}: a window that answers from entries in place while their table is built beside
 * it answers every call as a window that inserted the same entries with {@link DedupWindow#restoreBatch} at the same
 * instant. The property drives both with the same random operations (checks of restored, new and re-accepted ids
 * with and without payload hashes and remember-until, batches, restores, lookups, contains, upkeep, ticks, idle gaps,
 * early evictions under a small {@code maxIds}) and runs the build at a random point, or never, or on the owner
 * (no growth executor); every answer and counter must agree.
 */
class DedupWindowRestoreInPlaceTest {

  static final long BUCKET_MS = 1_000;
  private static final AtomicLong INSTALLED = new AtomicLong();
  private static final AtomicLong ANSWERED_IN_PLACE = new AtomicLong();

  /** Two windows on one clock, one restored by batch and one in place, with their growth tasks queued apart. */
  private static final class Pair {
    final long[] now = {0};
    final Deque<Runnable> batchTasks = new ArrayDeque<>();
    final Deque<Runnable> inPlaceTasks = new ArrayDeque<>();
    final DedupWindow byBatch;
    final DedupWindow inPlace;

    Pair(long startMs, int buckets, boolean payloadHashes, long maxIds, CapacityPolicy policy, boolean beside) {
      now[0] = startMs;
      byBatch = window(now, buckets, payloadHashes, maxIds, policy, beside ? batchTasks::add : null, 0, false);
      inPlace = window(now, buckets, payloadHashes, maxIds, policy, beside ? inPlaceTasks::add : null, 0, false);
    }
  }

  /** A window of {@code buckets} buckets of {@link #BUCKET_MS} on the clock {@code now[0]}. */
  static DedupWindow window(long[] now, int buckets, boolean payloadHashes, long maxIds, CapacityPolicy policy,
      Executor ex, int expectedIds, boolean presizeLater) {
    return DedupWindow.builder()
        .window(Duration.ofMillis(buckets * BUCKET_MS))
        .bucket(Duration.ofMillis(BUCKET_MS))
        .clock(() -> now[0])
        .payloadHashes(payloadHashes)
        .maxIds(maxIds)
        .capacityPolicy(policy)
        .growthExecutor(ex)
        .expectedIds(expectedIds)
        .presizeLater(presizeLater)
        .build();
  }

  /** Entries as a snapshot holds them: parallel arrays in table order. */
  static final class Entries implements TableOrderedEntries {
    final long[] fingerprints;
    final long[] payloadHashes;
    final long[] firstSeen;
    final long[] expires;

    Entries(long[][] rows) {
      long[][] sorted = rows.clone();
      // Stable: entries of one fingerprint keep the order they were generated in.
      Arrays.sort(sorted, Comparator.comparing(r -> r[0] * FingerprintTable.FIBONACCI, Long::compareUnsigned));
      int n = sorted.length;
      fingerprints = new long[n];
      payloadHashes = new long[n];
      firstSeen = new long[n];
      expires = new long[n];
      for (int i = 0; i < n; i++) {
        fingerprints[i] = sorted[i][0];
        payloadHashes[i] = sorted[i][1];
        firstSeen[i] = sorted[i][2];
        expires[i] = sorted[i][3];
      }
    }

    @Override
    public long size() {
      return fingerprints.length;
    }

    @Override
    public long fingerprint(long i) {
      return fingerprints[(int) i];
    }

    @Override
    public long payloadHash(long i) {
      return payloadHashes[(int) i];
    }

    @Override
    public long firstSeenMs(long i) {
      return firstSeen[(int) i];
    }

    @Override
    public long expiresAtMs(long i) {
      return expires[(int) i];
    }
  }

  @Property(tries = 300, shrinking = ShrinkingMode.OFF)
  void shouldAnswerAsTheWindowThatRestoredTheSameEntriesByBatch(@ForAll long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    int buckets = new int[] {1, 4, 16, 60}[rnd.nextInt(4)];
    long windowMs = buckets * BUCKET_MS;
    boolean payloadHashes = rnd.nextBoolean();
    int entryCount = rnd.nextInt(5) == 0 ? rnd.nextInt(8) : rnd.nextInt(6_000);
    int idSpace = Math.max(4, entryCount * (1 + rnd.nextInt(3)));
    boolean smallCap = rnd.nextInt(3) == 0;
    CapacityPolicy policy = rnd.nextBoolean() ? CapacityPolicy.EVICT_OLDEST : CapacityPolicy.REJECT;
    long start = rnd.nextLong(-10 * windowMs, 1L << 40);
    boolean beside = rnd.nextInt(4) != 0;

    long[][] rows = new long[entryCount][];
    for (int i = 0; i < entryCount; i++) {
      long fp = 1 + rnd.nextInt(idSpace);
      long firstSeen = start - rnd.nextLong(2 * windowMs + 1);
      long expires = firstSeen + rnd.nextLong(3 * windowMs + 1);
      long hash = payloadHashes && rnd.nextBoolean() ? 1 + rnd.nextInt(3) : 0;
      rows[i] = new long[] {fp, hash, firstSeen, expires};
    }
    Entries entries = new Entries(rows);
    long maxIds = DedupWindow.maxIdsLimit(payloadHashes);
    if (smallCap) {
      // A cap just above the entries live at the start: new ids soon reach it, and early evictions (or refusals)
      // happen while the entries are in place.
      Pair scratch = new Pair(start, buckets, payloadHashes, maxIds, policy, false);
      scratch.byBatch.restoreBatch(entries.fingerprints, entries.payloadHashes, entries.firstSeen, entries.expires,
          entryCount);
      maxIds = scratch.byBatch.held() + 1 + rnd.nextInt(16);
    }
    Pair p = new Pair(start, buckets, payloadHashes, maxIds, policy, beside);

    p.byBatch.restoreBatch(entries.fingerprints, entries.payloadHashes, entries.firstSeen, entries.expires,
        entryCount);
    PreparedRestore prepared = p.inPlace.prepareRestore(entries);
    assertThat(p.inPlace.restoreInPlace(prepared)).isTrue();
    assertSame(p);

    int ops = 1_500;
    for (int op = 0; op < ops; op++) {
      int kind = rnd.nextInt(100);
      long fp = rnd.nextInt(4) == 0 ? 1 + idSpace + rnd.nextInt(idSpace) : 1 + rnd.nextInt(idSpace);
      if (kind < 45) {
        long hash = payloadHashes && rnd.nextBoolean() ? 1 + rnd.nextInt(3) : DedupWindow.NO_PAYLOAD_HASH;
        long until = rnd.nextInt(4) == 0 ? p.now[0] + 1 + rnd.nextLong(windowMs) : DedupWindow.DEFAULT_REMEMBER_UNTIL;
        boolean wasInPlace = p.inPlace.restoringInPlace();
        Object a = call(() -> p.byBatch.check(fp, hash, until));
        Object b = call(() -> p.inPlace.check(fp, hash, until));
        assertThat(b).as("check %d", fp).isEqualTo(a);
        if (wasInPlace && b != WindowVerdict.ACCEPTED) {
          ANSWERED_IN_PLACE.incrementAndGet();
        }
      } else if (kind < 55) {
        int n = 1 + rnd.nextInt(40);
        long[] fps = new long[n];
        for (int i = 0; i < n; i++) {
          fps[i] = 1 + rnd.nextInt(2 * idSpace);
        }
        WindowVerdict[] va = new WindowVerdict[n];
        WindowVerdict[] vb = new WindowVerdict[n];
        Object a = call(() -> p.byBatch.checkBatch(fps, 0, n, va));
        Object b = call(() -> p.inPlace.checkBatch(fps, 0, n, vb));
        assertThat(b).isEqualTo(a);
        assertThat(vb).isEqualTo(va);
      } else if (kind < 62) {
        assertThat(p.inPlace.lookup(fp)).isEqualTo(p.byBatch.lookup(fp));
        assertThat(p.inPlace.contains(fp)).isEqualTo(p.byBatch.contains(fp));
      } else if (kind < 67) {
        long firstSeen = p.now[0] - rnd.nextLong(windowMs + 1);
        long expires = firstSeen + rnd.nextLong(2 * windowMs + 1);
        Object a = call(() -> p.byBatch.restore(fp, 0, firstSeen, expires));
        Object b = call(() -> p.inPlace.restore(fp, 0, firstSeen, expires));
        assertThat(b).isEqualTo(a);
      } else if (kind < 80) {
        p.now[0] += rnd.nextLong(rnd.nextInt(20) == 0 ? windowMs + 2 * BUCKET_MS : 2 * BUCKET_MS);
      } else if (kind < 90) {
        long slots = rnd.nextBoolean() ? Long.MAX_VALUE : rnd.nextInt(512);
        p.byBatch.upkeep(slots);
        if (p.inPlace.restoringInPlace() && p.inPlaceTasks.isEmpty()) {
          p.inPlace.upkeep(slots);
          if (!p.inPlace.restoringInPlace()) {
            INSTALLED.incrementAndGet();
          }
        } else {
          p.inPlace.upkeep(slots);
        }
      } else {
        runOne(rnd.nextBoolean() ? p.batchTasks : p.inPlaceTasks);
      }
      assertSame(p);
    }
    // Upkeep hands the build over, the executor runs it, the next upkeep installs it.
    for (int round = 0; round < 3; round++) {
      p.byBatch.upkeep(Long.MAX_VALUE);
      p.inPlace.upkeep(Long.MAX_VALUE);
      while (!p.inPlaceTasks.isEmpty() || !p.batchTasks.isEmpty()) {
        runOne(p.inPlaceTasks);
        runOne(p.batchTasks);
      }
    }
    assertThat(p.inPlace.restoringInPlace()).as("installed after its build and an upkeep").isFalse();
    assertSame(p);
    for (long fp = 1; fp <= 2L * idSpace; fp++) {
      assertThat(p.inPlace.lookup(fp)).as("lookup %d after the install", fp).isEqualTo(p.byBatch.lookup(fp));
    }
    assertThat(p.inPlace.liveEntriesInTable()).isEqualTo(p.inPlace.held());
  }

  @AfterContainer
  static void shouldHaveAnsweredFromEntriesInPlaceAndInstalledTables() {
    assertThat(ANSWERED_IN_PLACE.get()).as("repeats answered while entries were in place").isGreaterThan(300);
    assertThat(INSTALLED.get()).as("tables installed by an upkeep after their build").isGreaterThan(10);
  }

  @Test
  void shouldRefuseEntriesOutOfTableOrderAndLeaveTheWindowUnchanged() {
    Pair p = new Pair(1_000_000, 10, false, DedupWindow.maxIdsLimit(false), CapacityPolicy.REJECT, true);
    Entries e = new Entries(new long[][] {{1, 0, 999_000, 1_005_000}, {2, 0, 999_000, 1_005_000}});
    // Swap the two rows: the table order no longer holds.
    long f = e.fingerprints[0];
    e.fingerprints[0] = e.fingerprints[1];
    e.fingerprints[1] = f;
    assertThat(p.inPlace.restoreInPlace(p.inPlace.prepareRestore(e))).isFalse();
    assertThat(p.inPlace.held()).isZero();
    assertThat(p.inPlace.restoringInPlace()).isFalse();
    assertThat(p.inPlaceTasks).isEmpty();
  }

  @Test
  void shouldRefuseAWindowThatAlreadyHoldsIds() {
    // An id held already and again among the entries would be counted twice and could end up twice in the table.
    Pair p = new Pair(1_000_000, 10, false, DedupWindow.maxIdsLimit(false), CapacityPolicy.REJECT, true);
    assertThat(p.inPlace.check(1)).isEqualTo(WindowVerdict.ACCEPTED);
    Entries e = new Entries(new long[][] {{1, 0, 999_000, 1_005_000}, {2, 0, 999_000, 1_005_000}});
    assertThat(p.inPlace.restoreInPlace(p.inPlace.prepareRestore(e))).isFalse();
    assertThat(p.inPlace.held()).isEqualTo(1);
    assertThat(p.inPlace.restoringInPlace()).isFalse();
  }

  @Test
  void shouldRefuseEntriesThatWouldExceedMaxIds() {
    Pair p = new Pair(1_000_000, 10, false, 2, CapacityPolicy.REJECT, true);
    Entries e = new Entries(new long[][] {
        {1, 0, 999_000, 1_005_000}, {2, 0, 999_000, 1_005_000}, {3, 0, 999_000, 1_005_000}});
    assertThat(p.inPlace.restoreInPlace(p.inPlace.prepareRestore(e))).isFalse();
    assertThat(p.inPlace.held()).isZero();
  }

  @Test
  void shouldRejectAPreparationOfAnotherWindowAndASecondRestoreInPlace() {
    Pair p = new Pair(1_000_000, 10, false, DedupWindow.maxIdsLimit(false), CapacityPolicy.REJECT, true);
    Entries e = new Entries(new long[][] {{1, 0, 999_000, 1_005_000}});
    assertThatThrownBy(() -> p.inPlace.restoreInPlace(p.byBatch.prepareRestore(e)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another window");
    assertThat(p.inPlace.restoreInPlace(p.inPlace.prepareRestore(e))).isTrue();
    assertThat(p.inPlace.growing()).isTrue();
    assertThatThrownBy(() -> p.inPlace.restoreInPlace(p.inPlace.prepareRestore(e)))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("in progress");
  }

  @Test
  void shouldNameTheBadEntryOfAPreparation() {
    Pair p = new Pair(1_000_000, 10, false, DedupWindow.maxIdsLimit(false), CapacityPolicy.REJECT, true);
    Entries e = new Entries(new long[][] {{1, 0, 999_000, 998_000}});
    assertThatThrownBy(() -> p.inPlace.prepareRestore(e)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("entry 0").hasMessageContaining("expiresAtMs");
  }

  @Test
  void shouldBuildTheTableWithEveryKeptEntryInItsProbeChain() {
    // Many entries, a table sized for them: the build places them by cursor; every one must be found by a probe.
    SplittableRandom rnd = new SplittableRandom(7);
    int n = 200_000;
    long[][] rows = new long[n][];
    for (int i = 0; i < n; i++) {
      rows[i] = new long[] {rnd.nextLong() | 1, 0, 999_000, 1_005_000};
    }
    Entries e = new Entries(rows);
    Pair p = new Pair(1_000_000, 10, false, DedupWindow.maxIdsLimit(false), CapacityPolicy.REJECT, false);
    assertThat(p.inPlace.restoreInPlace(p.inPlace.prepareRestore(e))).isTrue();
    assertThat(p.inPlace.restoringInPlace()).as("built on the owner without a growth executor").isFalse();
    for (int i = 0; i < n; i++) {
      assertThat(p.inPlace.table().probe(e.fingerprints[i], FingerprintTable.threshold(1_000))).isNotNegative();
    }
    assertThat(p.inPlace.held()).isEqualTo(p.inPlace.liveEntriesInTable());
  }

  @Test
  void shouldPresizeLaterByPresizeOrByTheTableARestoreInPlaceBuilds() {
    long[] now = {1_000_000};
    java.util.function.Supplier<DedupWindow> later = () -> DedupWindow.builder().window(Duration.ofSeconds(10))
        .bucket(Duration.ofSeconds(1)).clock(() -> now[0]).expectedIds(10_000).presizeLater(true)
        .growthExecutor(Runnable::run).build();
    long presizedSlots = 1 << 14; // (10,000 + 1/8) x 4/3, rounded up to a power of two

    DedupWindow byPresize = later.get();
    assertThat(byPresize.stats().tableSlots()).isEqualTo(FingerprintTable.MIN_CAPACITY);
    assertThat(byPresize.presized()).isFalse();
    assertThat(byPresize.check(42)).isEqualTo(WindowVerdict.ACCEPTED);
    byPresize.presize();
    assertThat(byPresize.presized()).isTrue();
    assertThat(byPresize.stats().tableSlots()).isEqualTo(presizedSlots);
    assertThat(byPresize.check(42)).as("kept through the presize").isEqualTo(WindowVerdict.DUPLICATE);

    DedupWindow byRestore = later.get();
    Entries e = new Entries(new long[][] {{7, 0, 999_000, 1_005_000}});
    assertThat(byRestore.restoreInPlace(byRestore.prepareRestore(e))).isTrue();
    assertThat(byRestore.restoringInPlace()).as("the build waits for an upkeep").isTrue();
    byRestore.upkeep(Long.MAX_VALUE); // hands the build to the executor, which runs it at once, and installs it
    assertThat(byRestore.restoringInPlace()).isFalse();
    assertThat(byRestore.stats().tableSlots()).as("the restore's table is at least the presized one")
        .isEqualTo(presizedSlots);
    assertThat(byRestore.check(7)).isEqualTo(WindowVerdict.DUPLICATE);
  }

  private static void runOne(Deque<Runnable> tasks) {
    Runnable r = tasks.poll();
    if (r != null) {
      r.run();
    }
  }

  private static void assertSame(Pair p) {
    WindowStats a = p.byBatch.stats();
    WindowStats b = p.inPlace.stats();
    assertThat(b.held()).as("held").isEqualTo(a.held());
    assertThat(List.of(b.accepted(), b.duplicates(), b.conflicts(), b.expired(), b.earlyEvictions(), b.rejected()))
        .as("counters").isEqualTo(List.of(a.accepted(), a.duplicates(), a.conflicts(), a.expired(),
            a.earlyEvictions(), a.rejected()));
    assertThat(p.inPlace.memoryStartMs()).isEqualTo(p.byBatch.memoryStartMs());
  }

  /** The call's result, or its exception's class and message (so that both windows must fail alike). */
  private static Object call(java.util.function.Supplier<Object> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      return new ArrayList<>(List.of(e.getClass().getName(), String.valueOf(e.getMessage())));
    }
  }
}
