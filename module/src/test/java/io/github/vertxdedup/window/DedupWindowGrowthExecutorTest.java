package io.github.vertxdedup.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link DedupWindow.Builder#growthExecutor}: upkeep hands the table's doubling to the executor, the owner goes on
 * deciding on the current table while it is built, and the next upkeep installs it with the ids accepted meanwhile;
 * a check that needs room first, a refused task, an idle reset and an early eviction all leave the window right. The
 * differential test ({@link DedupWindowPropertyTest}) runs the same executor at random points against the model.
 */
class DedupWindowGrowthExecutorTest {

  private static final long BUCKET_MS = 1_000;
  private static final long WINDOW_MS = 60 * BUCKET_MS;

  private long readingMs = 5 * WINDOW_MS;
  private long nextId = 1;
  private final Deque<Runnable> tasks = new ArrayDeque<>();

  /**
   * A window presized to 2^15 slots: upkeep judges how near the next doubling is by the accepts since the previous
   * upkeep, at most 1/64 of the table (512 here), so a table of this size leaves the checks room while it is built.
   */
  private DedupWindow window(java.util.concurrent.Executor executor) {
    return DedupWindow.builder()
        .window(Duration.ofMillis(WINDOW_MS))
        .bucket(Duration.ofMillis(BUCKET_MS))
        .clock(() -> readingMs)
        .expectedIds(20_000)
        .growthExecutor(executor)
        .build();
  }

  /**
   * Accepts new ids, with an upkeep after every 16 (as a partition's timer would between requests), until upkeep has
   * started a doubling: it starts one when the occupied slots and twice the accepts since the previous upkeep reach
   * the load limit, so 32 more accepts at most fit in the table before it must grow. Returns the ids.
   */
  private Set<Long> fillUntilGrowing(DedupWindow window) {
    Set<Long> ids = new HashSet<>();
    while (!window.growing()) {
      long id = nextId++;
      assertThat(window.check(id)).isEqualTo(WindowVerdict.ACCEPTED);
      ids.add(id);
      if (ids.size() % 16 == 0) {
        window.upkeep(Long.MAX_VALUE);
      }
      assertThat(ids.size()).as("ids accepted before upkeep started a doubling").isLessThan(30_000);
    }
    return ids;
  }

  /**
   * Accepts new ids into {@code ids}, with no upkeep, until a check has made room by doubling the table, and checks
   * that it doubled.
   *
   * @return the table's slots before
   */
  private long acceptUntilTheChecksDouble(DedupWindow window, Set<Long> ids) {
    long slots = window.stats().tableSlots();
    while (window.stats().tableSlots() == slots) {
      long id = nextId++;
      assertThat(window.check(id)).isEqualTo(WindowVerdict.ACCEPTED);
      ids.add(id);
    }
    assertThat(window.stats().tableSlots()).isEqualTo(2 * slots);
    return slots;
  }

  /**
   * Accepts new ids, with an upkeep after every 16, until the table has doubled, checking after each that no doubling
   * is left in flight (the executor refused it or ran it at once). Returns the ids.
   */
  private Set<Long> fillUntilDoubledWithNoDoublingInFlight(DedupWindow window) {
    Set<Long> ids = new HashSet<>();
    long slots = window.stats().tableSlots();
    while (window.stats().tableSlots() == slots) {
      long id = nextId++;
      assertThat(window.check(id)).isEqualTo(WindowVerdict.ACCEPTED);
      ids.add(id);
      if (ids.size() % 16 == 0) {
        window.upkeep(Long.MAX_VALUE);
      }
      assertThat(window.growing()).isFalse();
    }
    return ids;
  }

  private static void assertRemembered(DedupWindow window, Set<Long> ids) {
    for (long id : ids) {
      assertThat(window.check(id)).as("id %d", id).isEqualTo(WindowVerdict.DUPLICATE);
    }
    assertThat(window.held()).isEqualTo(ids.size());
    assertThat(window.liveEntriesInTable()).isEqualTo(window.held());
  }

  @Test
  void shouldBuildTheDoublingOnTheExecutorAndInstallItWithTheIdsAcceptedMeanwhile() {
    DedupWindow window = window(tasks::add);
    Set<Long> ids = fillUntilGrowing(window);
    long slots = window.stats().tableSlots();
    assertThat(tasks).hasSize(1);

    // The owner goes on on the current table: new ids, duplicates, and the upkeep, which waits for the build.
    for (int i = 0; i < 5; i++) {
      long id = nextId++;
      assertThat(window.check(id)).isEqualTo(WindowVerdict.ACCEPTED);
      ids.add(id);
    }
    assertRemembered(window, ids);
    assertThat(window.upkeep(Long.MAX_VALUE)).isZero();
    assertThat(window.growing()).isTrue();
    assertThat(window.stats().tableSlots()).isEqualTo(slots);

    tasks.poll().run();
    // Built, not installed yet: an id accepted now is in the old table only; the install copies it too.
    long late = nextId++;
    assertThat(window.check(late)).isEqualTo(WindowVerdict.ACCEPTED);
    ids.add(late);
    assertThat(window.stats().tableSlots()).isEqualTo(slots);

    window.upkeep(Long.MAX_VALUE);
    assertThat(window.growing()).isFalse();
    assertThat(window.stats().tableSlots()).isEqualTo(2 * slots);
    assertThat(window.doublingsBeside).isEqualTo(1);
    assertThat(window.table().occupied()).isEqualTo(ids.size());
    assertRemembered(window, ids);
  }

  @Test
  void shouldDoubleOnTheOwnerWhenACheckNeedsRoomBeforeTheBuildIsDoneAndDropTheBuild() {
    DedupWindow window = window(tasks::add);
    Set<Long> ids = fillUntilGrowing(window);
    long slots = acceptUntilTheChecksDouble(window, ids);
    assertThat(window.growing()).as("the check dropped the doubling in flight").isFalse();

    tasks.poll().run(); // finishes late: nothing installs what it built
    window.upkeep(Long.MAX_VALUE);
    assertThat(window.stats().tableSlots()).isEqualTo(2 * slots);
    assertThat(window.doublingsBeside).isZero();
    assertRemembered(window, ids);
  }

  @Test
  void shouldInstallAFinishedBuildWhenACheckNeedsRoomBeforeTheNextUpkeep() {
    DedupWindow window = window(tasks::add);
    Set<Long> ids = fillUntilGrowing(window);
    tasks.poll().run();
    acceptUntilTheChecksDouble(window, ids);
    assertThat(window.doublingsBeside).as("the check installed the build instead of rehashing").isEqualTo(1);
    assertRemembered(window, ids);
  }

  @Test
  void shouldKeepIdsReacceptedAfterExpiryWhileTheDoublingIsBuilt() {
    DedupWindow window = window(tasks::add);
    // Half the ids are remembered for 2 buckets only.
    Set<Long> shortLived = new HashSet<>();
    Set<Long> ids = new HashSet<>();
    while (!window.growing()) {
      long id = nextId++;
      boolean brief = id % 2 == 0;
      assertThat(window.check(id, DedupWindow.NO_PAYLOAD_HASH,
          brief ? readingMs + 2 * BUCKET_MS : DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.ACCEPTED);
      (brief ? shortLived : ids).add(id);
      if (id % 16 == 0) {
        window.upkeep(Long.MAX_VALUE);
      }
    }
    assertThat(shortLived).isNotEmpty();
    readingMs += 3 * BUCKET_MS; // the brief ones expire while the doubling is built
    int again = 0;
    for (long id : shortLived) {
      if (again++ < 20) { // fewer than the room left before the table must grow
        assertThat(window.check(id)).as("expired id %d", id).isEqualTo(WindowVerdict.ACCEPTED);
        ids.add(id);
      }
    }
    tasks.poll().run();
    window.upkeep(Long.MAX_VALUE);
    assertThat(window.doublingsBeside).isEqualTo(1);
    assertRemembered(window, ids);
    for (long id : shortLived) {
      if (!ids.contains(id)) {
        assertThat(window.contains(id)).as("expired id %d", id).isFalse();
      }
    }
    // The sweep that waited for the build deletes the expired copies now.
    long deletedBefore = window.table().deletedEntries;
    readingMs += BUCKET_MS;
    window.upkeep(Long.MAX_VALUE);
    readingMs += BUCKET_MS;
    window.upkeep(Long.MAX_VALUE);
    assertThat(window.table().deletedEntries).isGreaterThan(deletedBefore);
    assertRemembered(window, ids);
  }

  @Test
  void shouldNotSweepWhileTheDoublingIsBuilt() {
    DedupWindow window = window(tasks::add);
    Set<Long> ids = new HashSet<>();
    while (!window.growing()) {
      long id = nextId++;
      assertThat(window.check(id, DedupWindow.NO_PAYLOAD_HASH, readingMs + BUCKET_MS))
          .isEqualTo(WindowVerdict.ACCEPTED);
      window.upkeep(Long.MAX_VALUE);
    }
    readingMs += 2 * BUCKET_MS; // every id so far has expired: sweep work is owed
    long deleted = window.table().deletedEntries;
    for (int i = 0; i < 1_000; i++) {
      long id = nextId++;
      assertThat(window.check(id)).isEqualTo(WindowVerdict.ACCEPTED);
      ids.add(id);
      if (window.table().needsRoom()) {
        break;
      }
    }
    assertThat(window.upkeep(Long.MAX_VALUE)).as("upkeep waits for the build").isZero();
    assertThat(window.table().deletedEntries).as("deleted while building").isEqualTo(deleted);
    assertThat(window.growing()).isTrue();
    tasks.poll().run();
    window.upkeep(Long.MAX_VALUE);
    assertThat(window.growing()).isFalse();
    assertRemembered(window, ids);
  }

  @Test
  void shouldDropTheDoublingAtAnIdleReset() {
    DedupWindow window = window(tasks::add);
    fillUntilGrowing(window);
    readingMs += 2 * WINDOW_MS;
    assertThat(window.check(nextId++)).isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.growing()).isFalse();
    long slots = window.stats().tableSlots();
    tasks.poll().run();
    window.upkeep(Long.MAX_VALUE);
    assertThat(window.stats().tableSlots()).isEqualTo(slots);
    assertThat(window.held()).isEqualTo(1);
  }

  @Test
  void shouldDropTheDoublingWhenReserveRebuildsTheTable() {
    DedupWindow window = window(tasks::add);
    Set<Long> ids = fillUntilGrowing(window);
    window.reserve(100_000);
    assertThat(window.growing()).isFalse();
    long slots = window.stats().tableSlots();
    tasks.poll().run();
    window.upkeep(Long.MAX_VALUE);
    assertThat(window.stats().tableSlots()).isEqualTo(slots);
    assertRemembered(window, ids);
  }

  @Test
  void shouldSettleTheDoublingBeforeAnEarlyEvictionSweepsTheTable() {
    DedupWindow window = DedupWindow.builder()
        .window(Duration.ofMillis(WINDOW_MS))
        .bucket(Duration.ofMillis(BUCKET_MS))
        .clock(() -> readingMs)
        .maxIds(60)
        .capacityPolicy(CapacityPolicy.EVICT_OLDEST)
        .growthExecutor(tasks::add)
        .build();
    // 48 ids fill the 64-slot table to its load limit: upkeep starts the doubling on the next ones.
    while (!window.growing()) {
      assertThat(window.check(nextId++)).isEqualTo(WindowVerdict.ACCEPTED);
      window.upkeep(Long.MAX_VALUE);
    }
    tasks.poll().run();
    // Full (60 ids): each new id evicts the bucket that expires first, all of them here: the eviction sweeps the
    // whole table, after installing the built doubling.
    while (window.held() < 60) {
      assertThat(window.check(nextId++)).isEqualTo(WindowVerdict.ACCEPTED);
    }
    long evicted = window.stats().earlyEvictions();
    readingMs += BUCKET_MS;
    long id = nextId++;
    assertThat(window.check(id, DedupWindow.NO_PAYLOAD_HASH, readingMs + BUCKET_MS))
        .isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.stats().earlyEvictions()).isGreaterThan(evicted);
    assertThat(window.growing()).isFalse();
    assertThat(window.doublingsBeside).isEqualTo(1);
    assertThat(window.held()).isEqualTo(1);
    assertThat(window.liveEntriesInTable()).isEqualTo(1);
    assertThat(window.check(id)).isEqualTo(WindowVerdict.DUPLICATE);
  }

  @Test
  void shouldLeaveGrowthToTheChecksWhenTheExecutorRefuses() {
    DedupWindow window = window(task -> {
      throw new RejectedExecutionException("shut down");
    });
    Set<Long> ids = fillUntilDoubledWithNoDoublingInFlight(window);
    assertThat(window.doublingsBeside).isZero();
    assertRemembered(window, ids);
  }

  @Test
  void shouldInstallAtOnceWhenTheExecutorRunsTheTaskInExecute() {
    DedupWindow window = window(Runnable::run);
    Set<Long> ids = fillUntilDoubledWithNoDoublingInFlight(window);
    assertThat(window.doublingsBeside).isEqualTo(1);
    assertRemembered(window, ids);
  }

  @Test
  void shouldRefuseToRunADoublingTwice() {
    DedupWindow window = window(tasks::add);
    fillUntilGrowing(window);
    Runnable task = tasks.poll();
    task.run();
    assertThatThrownBy(task::run).isInstanceOf(IllegalStateException.class).hasMessageContaining("runs once");
  }

  /**
   * A real worker thread builds each doubling while this thread checks: from 2^15 slots to 2^21 (1 M ids, a tenth of
   * them repeated), with an upkeep every 256 checks. Every verdict is compared with a set of the ids accepted. Upkeep
   * every 256 checks is far more often than a partition's (a timer of 100 ms or more), so the checks would fill the
   * table before most builds finish; at every other upkeep this thread first waits for the build in flight, after
   * racing it for 256 checks.
   */
  @Test
  void shouldAnswerRightWhileAWorkerThreadBuildsTheDoublings() throws Exception {
    ExecutorService worker = Executors.newSingleThreadExecutor();
    Deque<Future<?>> builds = new ArrayDeque<>();
    try {
      DedupWindow window = window(task -> builds.add(worker.submit(task)));
      Set<Long> accepted = new HashSet<>();
      SplittableRandom random = new SplittableRandom(7);
      long[] recent = new long[1024];
      int n = 0;
      while (accepted.size() < 1_000_000) {
        long id;
        if (n > 0 && random.nextInt(10) == 0) {
          id = recent[random.nextInt(Math.min(n, recent.length))];
        } else {
          id = random.nextLong() | 1;
        }
        WindowVerdict expected = accepted.add(id) ? WindowVerdict.ACCEPTED : WindowVerdict.DUPLICATE;
        assertThat(window.check(id)).as("id %d", id).isEqualTo(expected);
        recent[n++ & (recent.length - 1)] = id;
        if (n % 512 == 0 && window.growing()) {
          builds.peekLast().get(30, TimeUnit.SECONDS);
        }
        if (n % 256 == 0) {
          window.upkeep(1 << 16);
        }
      }
      worker.shutdown();
      assertThat(worker.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      window.upkeep(Long.MAX_VALUE);
      assertThat(window.doublingsBeside).as("doublings built by the worker").isPositive();
      assertThat(window.stats().tableSlots()).isGreaterThanOrEqualTo(1 << 21);
      assertThat(window.held()).isEqualTo(accepted.size());
      assertThat(window.liveEntriesInTable()).isEqualTo(accepted.size());
      for (long id : accepted) {
        assertThat(window.contains(id)).isTrue();
      }
    } finally {
      worker.shutdownNow();
    }
  }

  @Test
  void shouldNotBuildADoublingDroppedBeforeItsTaskRuns() {
    DedupWindow window = window(tasks::add);
    Set<Long> ids = fillUntilGrowing(window);
    acceptUntilTheChecksDouble(window, ids); // the check rehashes on the owner and drops the doubling in flight
    assertThat(window.growing()).isFalse();
    TableDoubling dropped = (TableDoubling) tasks.poll();
    dropped.run(); // runs late, as a task queued behind others does
    assertThat(dropped.builtSlots()).as("slots built for a doubling nothing will install").isZero();
    assertRemembered(window, ids);
  }

  /**
   * {@code reserve} first moves the window to the clock's time, whose catch-up sweep installs the finished doubling:
   * the doubled table is large enough, and the sweep work owed for the entries that expired meanwhile (copied by the
   * build as live ones) stays owed.
   */
  @Test
  void shouldKeepTheSweepOwedWhenReserveFindsTheDoublingInstalledLargeEnough() {
    DedupWindow window = window(tasks::add);
    while (!window.growing()) {
      long id = nextId++;
      boolean brief = id % 2 == 0;
      assertThat(window.check(id, DedupWindow.NO_PAYLOAD_HASH,
          brief ? readingMs + 2 * BUCKET_MS : DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.ACCEPTED);
      if (id % 16 == 0) {
        window.upkeep(Long.MAX_VALUE);
      }
    }
    tasks.poll().run();
    long slots = window.stats().tableSlots();
    for (int i = 0; i < 3; i++) {
      readingMs += 7 * BUCKET_MS; // no upkeep: the sweep falls behind, and the catch-up comes due
      window.held();
    }
    window.reserve(30_000); // more than the table holds, fewer than the doubled one does
    assertThat(window.stats().tableSlots()).isEqualTo(2 * slots);
    assertThat(window.doublingsBeside).isEqualTo(1);
    assertThat(window.upkeep(Long.MAX_VALUE)).isZero();
    assertThat((long) window.table().occupied()).as("entries in the table once the sweep owed is paid")
        .isEqualTo(window.liveEntriesInTable());
  }
}
