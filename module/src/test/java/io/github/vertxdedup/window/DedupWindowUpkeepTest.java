package io.github.vertxdedup.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@link DedupWindow#upkeep}: the sweep work of the latest bucket step is left to it, checks pay that work one bucket
 * later when no upkeep ran, and upkeep makes room in the table ahead of the checks. The differential test
 * ({@link DedupWindowPropertyTest}) checks that upkeep changes no answer.
 */
class DedupWindowUpkeepTest {

  private static final long BUCKET_MS = 10;

  private long readingMs;
  private long nextId = 1;

  /**
   * With 8 buckets a bucket step owes one sweep pass over the whole table, with 16 half a pass. Presized for
   * {@code expectedIds}, so that no check in a test needs room (making room sweeps the whole table).
   */
  private DedupWindow window(int buckets, int expectedIds) {
    return DedupWindow.builder()
        .window(Duration.ofMillis(buckets * BUCKET_MS))
        .bucket(Duration.ofMillis(BUCKET_MS))
        .clock(() -> readingMs)
        .expectedIds(expectedIds)
        .build();
  }

  /** Checks {@code n} new ids in one batch: a batch pays, before its probes, the sweep work due. */
  private int acceptBatch(DedupWindow window, int n) {
    long[] ids = new long[n];
    for (int i = 0; i < n; i++) {
      ids[i] = nextId++;
    }
    return window.checkBatch(ids, 0, n, new WindowVerdict[n]);
  }

  /**
   * Accepts 40 ids in bucket 0, then steps bucket by bucket with all the sweep work paid by upkeep at each step, up to
   * the bucket where the 40 expire; no upkeep there.
   */
  private DedupWindow fortyExpiring(int buckets) {
    DedupWindow window = window(buckets, 1_000);
    assertThat(acceptBatch(window, 40)).isEqualTo(40);
    for (int bucket = 1; bucket < buckets; bucket++) {
      readingMs = bucket * BUCKET_MS;
      assertThat(window.upkeep(Long.MAX_VALUE)).as("owed after upkeep at bucket %d", bucket).isZero();
    }
    readingMs = buckets * BUCKET_MS;
    assertThat(window.held()).isZero();
    assertThat(window.liveEntriesInTable()).isZero();
    assertThat(window.table().occupied()).as("occupied slots, dead entries").isEqualTo(40);
    assertThat(window.table().deletedEntries).as("deleted so far").isZero();
    return window;
  }

  /** {@link #fortyExpiring}, then a batch of new ids in the bucket where the 40 expire: it must delete none of them. */
  private DedupWindow fortyExpiringAndABatch(int buckets, int batch) {
    DedupWindow window = fortyExpiring(buckets);
    acceptBatch(window, batch);
    assertThat(window.table().deletedEntries).as("deleted in the bucket they expired").isZero();
    return window;
  }

  /**
   * A bucket step owes sweep work only while the table holds a dead entry: nothing while the window fills, a pass once
   * ids expire, and nothing again once the sweep has deleted them.
   */
  @Test
  void shouldOweSweepWorkOnlyWhileTheTableHoldsDeadEntries() {
    DedupWindow window = window(8, 1_000);
    for (int bucket = 0; bucket < 8; bucket++) {
      readingMs = bucket * BUCKET_MS;
      assertThat(acceptBatch(window, 5)).isEqualTo(5);
      assertThat(window.upkeep(0)).as("owed while filling, bucket %d", bucket).isZero();
    }
    readingMs = 8 * BUCKET_MS; // the 5 ids of bucket 0 expire
    assertThat(window.upkeep(0)).as("owed once ids expired").isEqualTo(window.table().capacity());
    assertThat(window.upkeep(Long.MAX_VALUE)).isZero();
    assertThat(window.table().occupied()).as("occupied after the sweep").isEqualTo(35);

    // No step, nothing owed; the next step, at which bucket 1's ids expire, owes a pass again.
    readingMs = 8 * BUCKET_MS + 1;
    assertThat(window.upkeep(0)).as("owed within the same bucket, none dead").isZero();
    readingMs = 9 * BUCKET_MS; // the 5 ids of bucket 1 expire
    assertThat(window.upkeep(0)).as("owed at the next step").isEqualTo(window.table().capacity());
  }

  @Test
  void shouldLeaveTheLatestBucketsSweepToUpkeep() {
    DedupWindow window = fortyExpiringAndABatch(8, 100);

    assertThat(window.upkeep(Long.MAX_VALUE)).as("sweep work owed after upkeep").isZero();
    assertThat(window.table().deletedEntries).as("expired entries upkeep deleted").isEqualTo(40);
    assertThat(window.liveEntriesInTable()).isEqualTo(100);
  }

  @Test
  void shouldHaveChecksPayTheSweepABucketLaterWithoutUpkeep() {
    DedupWindow window = fortyExpiringAndABatch(8, 100);

    readingMs += BUCKET_MS;
    for (int batch = 0; batch < 3; batch++) { // 300 checks pay 4,096 slots of sweep or more, the table has 2,048
      acceptBatch(window, 100);
    }
    assertThat(window.table().deletedEntries).as("deleted a bucket later").isEqualTo(40);
  }

  @Test
  void shouldHaveABatchPayTheWorkDueAndLeaveTheFreshToUpkeep() {
    DedupWindow window = fortyExpiringAndABatch(16, 1);

    // A step owes half a pass: the batch pays the half owed since bucket 16 (due), not the half of bucket 17 (fresh).
    readingMs += BUCKET_MS;
    acceptBatch(window, 64);
    assertThat(window.table().deletedEntries).as("deleted by the batch, half the table swept").isBetween(1L, 39L);
    window.upkeep(Long.MAX_VALUE);
    assertThat(window.table().deletedEntries).as("deleted after upkeep").isEqualTo(40);
    assertThat(window.liveEntriesInTable()).isEqualTo(65);
  }

  @Test
  void shouldPayNoMoreThanItsBudget() {
    DedupWindow window = fortyExpiring(8);
    int slots = (int) window.stats().tableSlots();

    assertThat(window.upkeep(10)).as("owed after 10 slots").isEqualTo(slots - 10);
    assertThat(window.upkeep(0)).as("owed after none").isEqualTo(slots - 10);
    assertThat(window.upkeep(Long.MAX_VALUE)).isZero();
    assertThat(window.liveEntriesInTable()).isZero();
    assertThat(window.table().occupied()).as("slots still occupied").isZero();
  }

  @Test
  void shouldMakeRoomAheadOfTheChecks() {
    DedupWindow window = window(8, 0);
    int slots = (int) window.stats().tableSlots();
    int limit = window.table().resizeAt();
    window.upkeep(Long.MAX_VALUE);

    acceptBatch(window, limit / 2);
    window.upkeep(Long.MAX_VALUE);
    assertThat(window.stats().tableSlots()).as("far from the load limit").isEqualTo(slots);

    acceptBatch(window, limit - 1 - limit / 2);
    window.upkeep(Long.MAX_VALUE);
    assertThat(window.stats().tableSlots()).as("one accept short of the load limit").isEqualTo(2L * slots);
    assertThat(window.liveEntriesInTable()).isEqualTo(limit - 1);
  }

  @Test
  void shouldLeaveRoomToTheChecksWithoutUpkeep() {
    DedupWindow window = window(8, 0);
    int slots = (int) window.stats().tableSlots();
    int limit = window.table().resizeAt();

    acceptBatch(window, limit - 1);
    assertThat(window.stats().tableSlots()).isEqualTo(slots);
    acceptBatch(window, 2);
    assertThat(window.stats().tableSlots()).as("doubled by the check past the limit").isEqualTo(2L * slots);
  }

  /**
   * A steady window of 60 buckets of 100 ms presized for 100,000 ids: accepts balanced by expiries, at {@code load}
   * times the table's load limit in live entries, in batches every quarter bucket, with or without the upkeep of all
   * the sweep work owed before each batch (in runs of 65,536 slots, as a partition's).
   *
   * @return who doubled the table first and in which bucket ({@code "upkeep@63"}, {@code "check@63"}), or "none"
   */
  private String whoDoubles(double load, boolean upkeep) {
    readingMs = 0;
    DedupWindow window = DedupWindow.builder().window(Duration.ofMillis(6_000)).bucket(Duration.ofMillis(100))
        .clock(() -> readingMs).expectedIds(100_000).build();
    long slots = window.stats().tableSlots();
    int perQuarter = (int) (window.table().resizeAt() * load / 60 / 4);
    for (int bucket = 0; bucket < 6 * 60; bucket++) {
      for (int quarter = 0; quarter < 4; quarter++) {
        readingMs = bucket * 100L + quarter * 25L;
        if (upkeep) {
          while (window.upkeep(1 << 16) > 0) {
            // the next run
          }
          if (window.stats().tableSlots() != slots) {
            return "upkeep@" + bucket;
          }
        }
        acceptBatch(window, perQuarter);
        if (window.stats().tableSlots() != slots) {
          return "check@" + bucket;
        }
      }
    }
    assertThat(window.liveEntriesInTable()).isEqualTo(window.held());
    return "none";
  }

  @Test
  void shouldNotDoubleATableThatTheChecksWouldNotDouble() {
    // Live entries at 95 % of the limit: the sweep keeps the occupied slots below it, with or without upkeep.
    assertThat(whoDoubles(0.95, false)).isEqualTo("none");
    assertThat(whoDoubles(0.95, true)).isEqualTo("none");
  }

  @Test
  void shouldDoubleAheadOfTheCheckThatWouldDouble() {
    // At 97 % dead entries push the occupied slots to the limit: a check doubles the table in bucket 62 without
    // upkeep; with it, the upkeep before that check does.
    String byCheck = whoDoubles(0.97, false);
    assertThat(byCheck).startsWith("check@");
    assertThat(whoDoubles(0.97, true)).isEqualTo(byCheck.replace("check@", "upkeep@"));
  }

  @Test
  void shouldNotPayAWholePassInOneCheckWithoutUpkeep() {
    // 8 buckets: a bucket step owes a whole pass. Two checks per new id (16 slots of sweep each, on average) keep up
    // with it: the work of a step is paid across the next bucket's checks, none of them sweeps the table at once.
    DedupWindow window = DedupWindow.builder().window(Duration.ofMillis(800)).bucket(Duration.ofMillis(100))
        .clock(() -> readingMs).expectedIds(300_000).build();
    int newPerBucket = 300_000 / 8;
    long worst = 0;
    for (int bucket = 0; bucket < 40; bucket++) {
      readingMs = bucket * 100L;
      for (int i = 0; i < newPerBucket; i++) {
        long deletedBefore = window.table().deletedEntries;
        assertThat(window.check(nextId)).isEqualTo(WindowVerdict.ACCEPTED);
        window.check(nextId++);
        if (bucket > 16) {
          worst = Math.max(worst, window.table().deletedEntries - deletedBefore);
        }
      }
    }
    assertThat(worst).as("entries deleted inside one check, of %d slots", window.stats().tableSlots())
        .isLessThan(1_000);
    assertThat(window.liveEntriesInTable()).isEqualTo(window.held());
  }

  @Test
  void shouldRefuseANegativeBudget() {
    DedupWindow window = window(8, 0);
    acceptBatch(window, 3);

    assertThatThrownBy(() -> window.upkeep(-1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxSlots must be >= 0 but was -1");
    assertThat(window.held()).isEqualTo(3);
  }
}
