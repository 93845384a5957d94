package io.github.vertxdedup.window;

import io.github.vertxdedup.time.ManualClock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What the window reports: lookup times and payload hashes, held, stats, memoryStartMs, restored entries. */
class DedupWindowTimesTest {

  private static final long W = 60_000;
  private static final long B = 1_000;

  private final ManualClock clock = new ManualClock(1_000_250); // a quarter into bucket 1_000

  private DedupWindow window(boolean payloadHashes) {
    return DedupWindow.builder()
        .window(Duration.ofMillis(W))
        .bucket(Duration.ofMillis(B))
        .clock(clock)
        .payloadHashes(payloadHashes)
        .build();
  }

  @Test
  void shouldReportLookupTimesAtBucketPrecision() {
    DedupWindow window = window(false);
    window.check(1);
    window.check(2, DedupWindow.NO_PAYLOAD_HASH, 1_030_500);

    assertThat(window.lookup(1)).isEqualTo(new DedupWindow.Entry(1, 1_000_000, 1_060_000, 0));
    // Remember-until 1_030_500 lies in bucket 1_030: forgotten from the start of that bucket.
    assertThat(window.lookup(2)).isEqualTo(new DedupWindow.Entry(2, 1_000_000, 1_030_000, 0));
    clock.setMs(1_029_999);
    assertThat(window.contains(2)).isTrue();
    assertThat(window.lookup(1).firstSeenMs()).isEqualTo(1_000_000);
    clock.setMs(1_030_000);
    assertThat(window.lookup(2)).isNull();
    clock.setMs(1_059_999);
    assertThat(window.lookup(1)).isNotNull();
    clock.setMs(1_060_000);
    assertThat(window.lookup(1)).isNull();
    assertThat(window.lookup(3)).isNull();
  }

  @Test
  void shouldRoundTimesDownToTheBucketStartForNegativeClockReadings() {
    ManualClock early = new ManualClock(-1_250);
    DedupWindow window = DedupWindow.builder().window(Duration.ofMillis(W)).bucket(Duration.ofMillis(B))
        .clock(early).build();
    window.check(9);
    assertThat(window.lookup(9)).isEqualTo(new DedupWindow.Entry(9, -2_000, 58_000, 0));
    assertThat(window.memoryStartMs()).isEqualTo(-2_000 - W + B);
    early.setMs(57_999);
    assertThat(window.contains(9)).isTrue();
    early.setMs(58_000);
    assertThat(window.contains(9)).isFalse();
  }

  @Test
  void shouldStartMemoryOneWindowLessOneBucketBeforeTheCurrentBucket() {
    DedupWindow window = window(false);
    assertThat(window.memoryStartMs()).isEqualTo(941_000); // (1_000 - 60 + 1) buckets
    clock.setMs(1_000_999);
    assertThat(window.memoryStartMs()).isEqualTo(941_000);
    clock.setMs(1_001_000);
    assertThat(window.memoryStartMs()).isEqualTo(942_000);
    // An id first seen at memoryStartMs is still remembered; one seen just before may not be.
    window.check(5);
    clock.setMs(1_001_000 + W - B);
    assertThat(window.contains(5)).isTrue();
    assertThat(window.memoryStartMs()).isEqualTo(1_001_000);
  }

  @Test
  void shouldDropHeldIdsExactlyAtBucketBoundaries() {
    DedupWindow window = window(false);
    window.check(1);
    window.check(2);
    clock.setMs(1_000_999);
    window.check(3);
    clock.setMs(1_001_000);
    window.check(4);
    window.check(5);

    clock.setMs(1_059_999);
    assertThat(window.held()).isEqualTo(5);
    clock.setMs(1_060_000);
    assertThat(window.held()).isEqualTo(2);
    assertThat(window.stats().expired()).isEqualTo(3);
    clock.setMs(1_060_999);
    assertThat(window.held()).isEqualTo(2);
    clock.setMs(1_061_000);
    assertThat(window.held()).isZero();
    assertThat(window.stats().expired()).isEqualTo(5);
  }

  @Test
  void shouldKeepTheFirstPayloadHashAndReportConflicts() {
    DedupWindow window = window(true);
    assertThat(window.check(1, 11, DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.check(1, 12, DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.CONFLICT);
    assertThat(window.check(1, 11, DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.DUPLICATE);
    assertThat(window.check(1)).isEqualTo(WindowVerdict.DUPLICATE); // no hash given: nothing to compare
    assertThat(window.lookup(1).payloadHash()).isEqualTo(11);

    // An entry kept without a hash has nothing to compare either.
    assertThat(window.check(2)).isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.check(2, 5, DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.DUPLICATE);
    assertThat(window.lookup(2).payloadHash()).isZero();

    // A conflict does not extend the entry either.
    clock.setMs(1_059_999);
    assertThat(window.check(1, 13, DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.CONFLICT);
    clock.setMs(1_060_000);
    assertThat(window.check(1, 13, DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.lookup(1).payloadHash()).isEqualTo(13);
    WindowStats stats = window.stats();
    assertThat(stats.conflicts()).isEqualTo(2);
    assertThat(stats.duplicates()).isEqualTo(3);
    assertThat(stats.accepted()).isEqualTo(3);
  }

  @Test
  void shouldNeitherKeepNorPayForPayloadHashesWhenNotAskedTo() {
    DedupWindow plain = window(false);
    DedupWindow hashed = window(true);
    for (long id = 1; id <= 1_000; id++) {
      plain.check(id, id * 31, DedupWindow.DEFAULT_REMEMBER_UNTIL);
      hashed.check(id, id * 31, DedupWindow.DEFAULT_REMEMBER_UNTIL);
    }
    assertThat(plain.check(7, 1, DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.DUPLICATE);
    assertThat(hashed.check(7, 1, DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.CONFLICT);
    assertThat(plain.lookup(7).payloadHash()).isZero();
    assertThat(hashed.lookup(7).payloadHash()).isEqualTo(7 * 31);

    WindowStats p = plain.stats();
    WindowStats h = hashed.stats();
    assertThat(p.tableSlots()).isEqualTo(h.tableSlots()).isEqualTo(2_048);
    assertThat(p.tableBytes()).isEqualTo(12L * p.tableSlots());
    assertThat(h.tableBytes()).isEqualTo(20L * h.tableSlots());
    assertThat(p.bytesPerHeldId()).isEqualTo(12.0 * 2_048 / 1_000);
    assertThat(p.conflicts()).isZero();
  }

  @Test
  void shouldCountEveryOutcome() {
    DedupWindow window = DedupWindow.builder().window(Duration.ofMillis(W)).bucket(Duration.ofMillis(B))
        .clock(clock).payloadHashes(true).maxIds(3).capacityPolicy(CapacityPolicy.REJECT).build();
    window.check(1, 1, DedupWindow.DEFAULT_REMEMBER_UNTIL);
    window.check(1, 1, DedupWindow.DEFAULT_REMEMBER_UNTIL);
    window.check(1, 2, DedupWindow.DEFAULT_REMEMBER_UNTIL);
    window.check(2, 0, 1_002_000);
    window.check(3);
    try {
      window.check(4);
    } catch (WindowFullException expected) {
      // counted below
    }
    clock.setMs(1_002_000);

    assertThat(window.stats()).isEqualTo(new WindowStats(3, 1, 1, 2, 1, 0, 1, 64, 64 * 20));
    assertThat(window.held()).isEqualTo(2);
    assertThat(window.stats().bytesPerHeldId()).isEqualTo(64 * 20 / 2.0);
    assertThat(new WindowStats(0, 0, 0, 0, 0, 0, 0, 64, 768).bytesPerHeldId()).isZero();
  }

  @Test
  void shouldPutBackRestoredEntriesAsOfTheirOriginalTimes() {
    DedupWindow window = window(true);

    assertThat(window.restore(7, 70, 990_300, 1_050_700)).isTrue();

    assertThat(window.lookup(7)).isEqualTo(new DedupWindow.Entry(7, 990_000, 1_050_000, 70));
    assertThat(window.check(7, 70, DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.DUPLICATE);
    assertThat(window.check(7, 71, DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.CONFLICT);
    WindowStats stats = window.stats();
    assertThat(stats.held()).isEqualTo(1);
    assertThat(stats.accepted()).isZero();
    clock.setMs(1_049_999);
    assertThat(window.contains(7)).isTrue();
    clock.setMs(1_050_000);
    assertThat(window.contains(7)).isFalse();
    assertThat(window.stats().expired()).isEqualTo(1);
  }

  @Test
  void shouldSkipExpiredAndAlreadyLiveEntriesAndClampLateOnesWhenRestoring() {
    DedupWindow window = window(true);
    // Expired: its remember-until lies in the current bucket or before.
    assertThat(window.restore(1, 0, 900_000, 1_000_000)).isFalse();
    assertThat(window.restore(1, 0, 900_000, 1_000_999)).isFalse();
    assertThat(window.contains(1)).isFalse();
    // Beyond now + W (a writer whose clock ran ahead): kept until the end of the window, no longer.
    assertThat(window.restore(2, 0, 1_000_000, 1_500_000)).isTrue();
    assertThat(window.lookup(2).expiresAtMs()).isEqualTo(1_060_000);
    assertThat(window.lookup(2).firstSeenMs()).isEqualTo(1_000_000);
    // First seen more than W before its expiry: the reported first sighting is at most W earlier.
    assertThat(window.restore(4, 0, 100_000, 1_010_000)).isTrue();
    assertThat(window.lookup(4).firstSeenMs()).isEqualTo(1_010_000 - W);
    // Already live: the current entry stays.
    window.check(3, 33, DedupWindow.DEFAULT_REMEMBER_UNTIL);
    assertThat(window.restore(3, 34, 990_000, 1_020_000)).isFalse();
    assertThat(window.lookup(3)).isEqualTo(new DedupWindow.Entry(3, 1_000_000, 1_060_000, 33));
    assertThat(window.held()).isEqualTo(3);
  }

  @Test
  void shouldSizeTheTableOnceForExpectedIds() {
    DedupWindow window = DedupWindow.builder().window(Duration.ofMillis(W)).bucket(Duration.ofMillis(B))
        .clock(clock).expectedIds(10_000).build();
    long slots = window.stats().tableSlots();
    assertThat(slots).isEqualTo(16_384);
    for (long id = 1; id <= 10_000; id++) {
      window.check(id);
    }
    assertThat(window.stats().tableSlots()).isEqualTo(slots);
    assertThat(window.held()).isEqualTo(10_000);
  }
}
