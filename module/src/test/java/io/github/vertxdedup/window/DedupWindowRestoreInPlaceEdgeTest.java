package io.github.vertxdedup.window;

import static io.github.vertxdedup.window.DedupWindowRestoreInPlaceTest.window;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.ShrinkingMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Edge cases of {@link DedupWindow#restoreInPlace} that {@link DedupWindowRestoreInPlaceTest} does not drive: a
 * preparation read at another instant than the restore (the service prepares on a worker, then restores on the event
 * loop), clock readings that step backwards, {@link DedupWindow#reserve} and {@link DedupWindow#presize} while the
 * entries are in place, and windows built with {@link DedupWindow.Builder#presizeLater}.
 */
class DedupWindowRestoreInPlaceEdgeTest {

  private static final long BUCKET_MS = DedupWindowRestoreInPlaceTest.BUCKET_MS;
  private static final java.util.concurrent.atomic.AtomicLong COMPARED = new java.util.concurrent.atomic.AtomicLong();

  /** A window of 10 buckets without payload hashes, caps or a growth pool (the build runs at once). */
  private static DedupWindow plain(long[] now) {
    return window(now, 10, false, DedupWindow.maxIdsLimit(false), CapacityPolicy.REJECT, Runnable::run, 0, false);
  }

  /**
   * The clock moves (forwards, and sometimes backwards) between the preparation and the restore, and again during
   * the in-place phase; reserve and presize are called meanwhile. The window restored in place must answer every call
   * as the window that restored the same entries by batch at the instant of the preparation (its javadoc's promise),
   * counters included, or refuse them.
   */
  @Property(tries = 200, shrinking = ShrinkingMode.OFF)
  void shouldAnswerAsTheBatchWindowWhenTheClockMovesBetweenPreparationAndRestore(@ForAll long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    int buckets = new int[] {1, 4, 16, 60}[rnd.nextInt(4)];
    long windowMs = buckets * BUCKET_MS;
    boolean payloadHashes = rnd.nextBoolean();
    CapacityPolicy policy = rnd.nextBoolean() ? CapacityPolicy.EVICT_OLDEST : CapacityPolicy.REJECT;
    int entryCount = rnd.nextInt(3_000);
    int idSpace = Math.max(4, entryCount * 2);
    long start = rnd.nextLong(0, 1L << 40);
    long[] now = {start};
    Deque<Runnable> tasks = new ArrayDeque<>();
    Deque<Runnable> batchTasks = new ArrayDeque<>();
    boolean presizeLater = rnd.nextBoolean();
    int expected = rnd.nextBoolean() ? 0 : 1 + rnd.nextInt(20_000);
    long maxIds = rnd.nextInt(3) == 0 ? entryCount / 2 + 1 + rnd.nextInt(entryCount + 1)
        : DedupWindow.maxIdsLimit(payloadHashes);
    expected = (int) Math.min(expected, maxIds);

    long[][] rows = new long[entryCount][];
    for (int i = 0; i < entryCount; i++) {
      long fp = 1 + rnd.nextInt(idSpace);
      long firstSeen = start - rnd.nextLong(2 * windowMs + 1);
      long expires = firstSeen + rnd.nextLong(3 * windowMs + 1);
      long hash = payloadHashes && rnd.nextBoolean() ? 1 + rnd.nextInt(3) : 0;
      rows[i] = new long[] {fp, hash, firstSeen, expires};
    }
    DedupWindowRestoreInPlaceTest.Entries entries = new DedupWindowRestoreInPlaceTest.Entries(rows);

    DedupWindow inPlace = window(now, buckets, payloadHashes, maxIds, policy, tasks::add, expected, presizeLater);
    DedupWindow byBatch = window(now, buckets, payloadHashes, maxIds, policy, batchTasks::add, expected, false);
    PreparedRestore prepared = inPlace.prepareRestore(entries);
    Object a = call(() -> byBatch.restoreBatch(entries.fingerprints, entries.payloadHashes, entries.firstSeen,
        entries.expires, entryCount));
    // The restore happens a little later (the preparation's pass, the hop to the event loop).
    now[0] += rnd.nextLong(3 * BUCKET_MS);
    boolean restored = inPlace.restoreInPlace(prepared);
    if (!restored || a instanceof List) {
      return; // refused (over maxIds, or a kept entry shadowed), or the batch itself failed: nothing to compare
    }
    assertThat(inPlace.held()).as("held right after the restore").isEqualTo(byBatch.held());
    COMPARED.incrementAndGet();

    for (int op = 0; op < 1_000; op++) {
      int kind = rnd.nextInt(100);
      long fp = 1 + rnd.nextInt(2 * idSpace);
      if (kind < 45) {
        long hash = payloadHashes && rnd.nextBoolean() ? 1 + rnd.nextInt(3) : DedupWindow.NO_PAYLOAD_HASH;
        assertThat(call(() -> inPlace.check(fp, hash, DedupWindow.DEFAULT_REMEMBER_UNTIL))).as("check %d", fp)
            .isEqualTo(call(() -> byBatch.check(fp, hash, DedupWindow.DEFAULT_REMEMBER_UNTIL)));
      } else if (kind < 55) {
        assertThat(inPlace.lookup(fp)).isEqualTo(byBatch.lookup(fp));
      } else if (kind < 62) {
        long ids = rnd.nextInt(50_000);
        inPlace.reserve(ids);
        byBatch.reserve(ids);
      } else if (kind < 65) {
        inPlace.presize();
        byBatch.presize();
      } else if (kind < 78) {
        // Mostly forwards; sometimes a reading earlier than one already seen.
        now[0] += rnd.nextInt(8) == 0 ? -rnd.nextLong(3 * BUCKET_MS) : rnd.nextLong(2 * BUCKET_MS);
      } else if (kind < 90) {
        inPlace.upkeep(Long.MAX_VALUE);
        byBatch.upkeep(Long.MAX_VALUE);
      } else {
        Runnable r = tasks.poll();
        if (r != null) {
          r.run();
        }
        r = batchTasks.poll();
        if (r != null) {
          r.run();
        }
      }
      assertThat(inPlace.held()).as("held").isEqualTo(byBatch.held());
      assertThat(inPlace.stats().accepted()).isEqualTo(byBatch.stats().accepted());
      assertThat(inPlace.stats().duplicates()).isEqualTo(byBatch.stats().duplicates());
      assertThat(inPlace.stats().earlyEvictions()).isEqualTo(byBatch.stats().earlyEvictions());
      assertThat(inPlace.stats().expired()).as("expired").isEqualTo(byBatch.stats().expired());
      assertThat(inPlace.stats().rejected()).isEqualTo(byBatch.stats().rejected());
    }
    for (int round = 0; round < 3; round++) {
      inPlace.upkeep(Long.MAX_VALUE);
      while (!tasks.isEmpty()) {
        tasks.poll().run();
      }
    }
    assertThat(inPlace.restoringInPlace()).isFalse();
    assertThat(inPlace.presized()).as("a presizeLater window ends up presized").isTrue();
    for (long fp = 1; fp <= 2L * idSpace; fp++) {
      assertThat(inPlace.lookup(fp)).isEqualTo(byBatch.lookup(fp));
    }
    assertThat(inPlace.liveEntriesInTable()).isEqualTo(inPlace.held());
  }

  @net.jqwik.api.lifecycle.AfterContainer
  static void shouldHaveComparedMostTries() {
    assertThat(COMPARED.get()).as("tries restored in place and compared").isGreaterThan(60);
  }

  /**
   * The javadoc of restoreInPlace promises "the same result as restoreBatch of them at the instant of their
   * preparation": a window restored in place a bucket after its preparation counts as expired what the batch window
   * counts, both for an entry already expired at the preparation (remember-until 1,000,500: skipped by both) and for
   * one live at the preparation and expired at the restore (1,001,500); held agrees.
   */
  @ParameterizedTest
  @ValueSource(longs = {1_000_500, 1_001_500})
  void expiredCountsWhatExpiresBetweenPreparationAndRestore(long firstEntryExpiresAtMs) {
    long[] now = {1_000_000};
    DedupWindow inPlace = plain(now);
    DedupWindow byBatch = plain(now);
    DedupWindowRestoreInPlaceTest.Entries e = new DedupWindowRestoreInPlaceTest.Entries(new long[][] {
        {1, 0, 995_000, firstEntryExpiresAtMs}, {2, 0, 995_000, 1_005_000}});
    PreparedRestore prepared = inPlace.prepareRestore(e);
    byBatch.restoreBatch(e.fingerprints, e.payloadHashes, e.firstSeen, e.expires, 2);
    now[0] = 1_002_000;
    assertThat(inPlace.restoreInPlace(prepared)).isTrue();
    assertThat(inPlace.held()).isEqualTo(byBatch.held()).isEqualTo(1);
    assertThat(inPlace.stats().expired()).as("expired").isEqualTo(byBatch.stats().expired());
  }

  /**
   * A fingerprint with two entries in the snapshot, the first expiring between the preparation's clock reading and
   * the window's latest reading (a clock that read backwards on the preparing thread). restoreBatch at any instant
   * the window knows (it treats an earlier reading as the latest seen) skips the expired first entry and keeps the
   * second; the restore in place kept the first (live at the preparation's reading) and so forgets the id.
   */
  @Test
  void shouldKeepTheEntryLiveAtTheWindowsNowWhenThePreparationReadAnEarlierInstant() {
    long[] now = {1_010_000};
    DedupWindow inPlace = plain(now);
    DedupWindow byBatch = plain(now);
    // Journal order: an accept expiring at 1,005,000, then one of the same id expiring at 1,015,000.
    DedupWindowRestoreInPlaceTest.Entries e = new DedupWindowRestoreInPlaceTest.Entries(new long[][] {
        {7, 0, 995_000, 1_005_000}, {7, 0, 1_005_000, 1_015_000}});
    now[0] = 1_000_000; // the preparing thread reads an earlier instant than the window has seen
    PreparedRestore prepared = inPlace.prepareRestore(e);
    now[0] = 1_010_000;
    byBatch.restoreBatch(e.fingerprints, e.payloadHashes, e.firstSeen, e.expires, 2);
    assertThat(byBatch.contains(7)).isTrue();
    boolean restored = inPlace.restoreInPlace(prepared);
    if (restored) {
      assertThat(inPlace.contains(7)).as("id 7 remembered until 1,015,000").isTrue();
      assertThat(inPlace.held()).isEqualTo(byBatch.held());
    } else {
      assertThat(inPlace.held()).as("refused: nothing changed").isZero();
    }
  }

  /**
   * Three entries live at the preparation under {@code maxIds} 2 with EVICT_OLDEST: restoreBatch at that instant
   * evicts the oldest bucket early (one early eviction) and holds two. The restore in place a bucket later, when the
   * first entry has expired anyway, would hold the same two ids but count the third as expired rather than evicted,
   * and leave the eviction's memory floor unset: it must refuse (more kept entries than maxIds at the preparation).
   */
  @Test
  void shouldRefuseEntriesKeptAtThePreparationBeyondMaxIdsEvenIfFewerAreLiveAtTheRestore() {
    long[] now = {1_000_000};
    DedupWindow inPlace = window(now, 10, false, 2, CapacityPolicy.EVICT_OLDEST, Runnable::run, 0, false);
    DedupWindow byBatch = window(now, 10, false, 2, CapacityPolicy.EVICT_OLDEST, Runnable::run, 0, false);
    DedupWindowRestoreInPlaceTest.Entries e = new DedupWindowRestoreInPlaceTest.Entries(new long[][] {
        {1, 0, 999_000, 1_001_000}, {2, 0, 999_000, 1_005_000}, {3, 0, 999_000, 1_005_000}});
    PreparedRestore prepared = inPlace.prepareRestore(e);
    byBatch.restoreBatch(e.fingerprints, e.payloadHashes, e.firstSeen, e.expires, 3);
    assertThat(byBatch.stats().earlyEvictions()).isEqualTo(1);
    now[0] = 1_001_000;
    assertThat(inPlace.restoreInPlace(prepared)).as("refused").isFalse();
    assertThat(inPlace.held()).isZero();
    assertThat(inPlace.stats().expired()).isZero();
  }

  /**
   * A window that has read 1,010,000 and a preparation that reads 1,000,000 after it (a clock stepped back on the
   * preparing thread). Entry 7, remembered until 1,014,000: the preparation capped its expiry at its own reading + W
   * (1,010,000), so restored in place the id would be forgotten at once, where restoreBatch on the window (cap at
   * 1,020,000) keeps it and answers its redelivery as a duplicate. Refused.
   */
  @Test
  void shouldRefuseAPreparationThatReadAnEarlierBucketThanTheWindowHadSeen_cappedExpiry() {
    long[] now = {1_010_000};
    DedupWindow inPlace = plain(now);
    DedupWindow byBatch = plain(now);
    DedupWindowRestoreInPlaceTest.Entries e = new DedupWindowRestoreInPlaceTest.Entries(new long[][] {
        {7, 0, 1_004_000, 1_014_000}});
    now[0] = 1_000_000;
    PreparedRestore prepared = inPlace.prepareRestore(e);
    now[0] = 1_010_000;
    byBatch.restoreBatch(e.fingerprints, e.payloadHashes, e.firstSeen, e.expires, 1);
    assertThat(byBatch.check(7)).isEqualTo(WindowVerdict.DUPLICATE);
    assertThat(inPlace.restoreInPlace(prepared)).as("refused").isFalse();
    assertThat(inPlace.held()).isZero();
    assertThat(inPlace.stats().expired()).isZero();
  }

  /**
   * The same order of readings (window 1,010,000, then preparation 1,008,000): entry 8, live at the preparation's
   * reading and expired at the window's, would count as expired restored in place but is skipped by restoreBatch on
   * the window. Which reading came first is unknown to the window, so it refuses; the same readings with the window's
   * taken after the preparation restore in place and count entry 8 as expired, as restoreBatch at the preparation's
   * instant would.
   */
  @Test
  void shouldRefuseAPreparationThatReadAnEarlierBucketThanTheWindowHadSeen_expiredCount() {
    long[] now = {1_010_000};
    DedupWindow refused = plain(now);
    DedupWindowRestoreInPlaceTest.Entries e = new DedupWindowRestoreInPlaceTest.Entries(new long[][] {
        {8, 0, 1_000_000, 1_009_000}, {9, 0, 1_005_000, 1_015_000}});
    now[0] = 1_008_000;
    PreparedRestore prepared = refused.prepareRestore(e);
    now[0] = 1_010_000;
    assertThat(refused.restoreInPlace(prepared)).as("refused").isFalse();
    assertThat(refused.held()).isZero();

    now[0] = 1_008_000;
    DedupWindow restored = plain(now);
    DedupWindow byBatch = plain(now);
    prepared = restored.prepareRestore(e);
    byBatch.restoreBatch(e.fingerprints, e.payloadHashes, e.firstSeen, e.expires, 2);
    now[0] = 1_010_000;
    assertThat(restored.restoreInPlace(prepared)).isTrue();
    assertThat(restored.held()).isEqualTo(byBatch.held()).isEqualTo(1);
    assertThat(restored.stats().expired()).isEqualTo(byBatch.stats().expired()).isEqualTo(1);
  }

  /**
   * A presizeLater window restored in place more than W after it was built (a long replay before the snapshot's
   * entries): the idle gap empties the window, and used to allocate the presized table there, on the owner's thread,
   * beside the one the restore builds. It keeps its small table until the install; one seen once holds ids is
   * brought back to its smaller size too.
   */
  @Test
  void shouldNotAllocateThePresizedTable_whenAPresizeLaterWindowIsRestoredMoreThanAWindowAfterItsBuild() {
    long[] now = {1_000_250};
    List<Runnable> tasks = new ArrayList<>();
    DedupWindow w = window(now, 10, false, DedupWindow.maxIdsLimit(false), CapacityPolicy.REJECT, tasks::add,
        4_000_000, true);
    long smallest = w.stats().tableSlots();
    now[0] += 11 * BUCKET_MS;
    DedupWindowRestoreInPlaceTest.Entries e = new DedupWindowRestoreInPlaceTest.Entries(new long[][] {
        {7, 0, now[0] - 1_000, now[0] + 5_000}});
    assertThat(w.restoreInPlace(w.prepareRestore(e))).isTrue();
    assertThat(w.stats().tableSlots()).as("no table allocated by the restore").isEqualTo(smallest);
    w.upkeep(Long.MAX_VALUE);
    while (!tasks.isEmpty()) {
      tasks.remove(0).run();
    }
    w.upkeep(Long.MAX_VALUE);
    assertThat(w.stats().tableSlots()).as("the presized table, built beside").isEqualTo(1 << 23);
    assertThat(w.check(7)).isEqualTo(WindowVerdict.DUPLICATE);

    DedupWindow small = window(now, 10, false, DedupWindow.maxIdsLimit(false), CapacityPolicy.REJECT, tasks::add,
        4_000_000, true);
    for (long fp = 1; fp <= 100; fp++) {
      small.check(fp);
    }
    long grown = small.stats().tableSlots();
    assertThat(grown).isLessThan(1 << 23);
    now[0] += 11 * BUCKET_MS;
    assertThat(small.check(1)).as("forgotten after the gap").isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(small.stats().tableSlots()).as("emptied at its own size, not presized on the owner's thread")
        .isLessThanOrEqualTo(grown);
    assertThat(small.presized()).isFalse();
  }

  /** The window restored in place never answers from a table smaller than its presized one once installed. */
  @Test
  void shouldBePresizedAfterAnInstallEvenWithFewEntriesAndManyAcceptsMeanwhile() {
    long[] now = {1_000_000};
    List<Runnable> tasks = new ArrayList<>();
    DedupWindow w = window(now, 10, true, DedupWindow.maxIdsLimit(true), CapacityPolicy.REJECT, tasks::add,
        100_000, true);
    DedupWindowRestoreInPlaceTest.Entries e = new DedupWindowRestoreInPlaceTest.Entries(new long[][] {
        {7, 0, 999_000, 1_005_000}});
    assertThat(w.restoreInPlace(w.prepareRestore(e))).isTrue();
    for (long fp = 100; fp < 20_100; fp++) {
      w.check(fp);
    }
    w.upkeep(Long.MAX_VALUE);
    while (!tasks.isEmpty()) {
      tasks.remove(0).run();
    }
    w.upkeep(Long.MAX_VALUE);
    assertThat(w.restoringInPlace()).isFalse();
    assertThat(w.presized()).isTrue();
    assertThat(w.held()).isEqualTo(20_001);
    assertThat(w.liveEntriesInTable()).isEqualTo(20_001);
  }

  /**
   * All the entries restored in place expire before the build is installed (no upkeep for a window): the window
   * used to drop them, and a presizeLater window was then left with its smallest table, which nothing presized any
   * more. Their table is installed all the same: it is the presized one.
   */
  @Test
  void aPresizeLaterWindowWhoseEntriesExpireBeforeTheInstallIsStillPresized() {
    long[] now = {1_000_000};
    List<Runnable> tasks = new ArrayList<>();
    DedupWindow w = window(now, 10, true, DedupWindow.maxIdsLimit(true), CapacityPolicy.REJECT, tasks::add,
        100_000, true);
    DedupWindowRestoreInPlaceTest.Entries e = new DedupWindowRestoreInPlaceTest.Entries(new long[][] {
        {7, 0, 999_000, 1_005_000}});
    assertThat(w.restoreInPlace(w.prepareRestore(e))).isTrue();
    assertThat(w.presized()).isTrue();
    w.check(1);
    now[0] += 6_000;
    w.check(2);
    now[0] += 5_000; // bucket 1011: past the load bucket plus N, and not a whole idle window since the last reading
    w.check(3);
    assertThat(w.contains(7)).isFalse();
    assertThat(w.presized()).as("the partition serves with its presized table").isTrue();
    w.upkeep(Long.MAX_VALUE);
    while (!tasks.isEmpty()) {
      tasks.remove(0).run();
    }
    w.upkeep(Long.MAX_VALUE);
    assertThat(w.restoringInPlace()).isFalse();
    assertThat(w.stats().tableSlots()).isEqualTo(1 << 18);
    assertThat(w.held()).isEqualTo(2);
    assertThat(w.liveEntriesInTable()).isEqualTo(2);
  }

  private static Object call(java.util.function.Supplier<Object> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      return new ArrayList<>(List.of(e.getClass().getName(), String.valueOf(e.getMessage())));
    }
  }
}
