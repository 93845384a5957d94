package io.github.vertxdedup.window;

import io.github.vertxdedup.time.ManualClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The {@code maxIds} cap under both capacity policies. */
class DedupWindowCapacityTest {

  private static final long W = 60_000;
  private static final long B = 1_000;
  private static final long START = 1_700_000_000_000L;

  private final ManualClock clock = new ManualClock(START);

  private DedupWindow window(long maxIds, CapacityPolicy policy, boolean payloadHashes) {
    return DedupWindow.builder()
        .window(Duration.ofMillis(W))
        .bucket(Duration.ofMillis(B))
        .clock(clock)
        .maxIds(maxIds)
        .capacityPolicy(policy)
        .payloadHashes(payloadHashes)
        .build();
  }

  @Test
  void shouldRefuseANewIdUnderRejectAndRecordNothing() {
    DedupWindow window = window(3, CapacityPolicy.REJECT, true);
    window.check(1, 11, DedupWindow.DEFAULT_REMEMBER_UNTIL);
    window.check(2);
    window.check(3);

    assertThatThrownBy(() -> window.check(4))
        .isInstanceOf(WindowFullException.class)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("maxIds=3")
        .hasMessageContaining("REJECT");

    assertThat(window.contains(4)).isFalse();
    assertThat(window.lookup(4)).isNull();
    WindowStats stats = window.stats();
    assertThat(stats.rejected()).isEqualTo(1);
    assertThat(stats.accepted()).isEqualTo(3);
    assertThat(stats.held()).isEqualTo(3);
    assertThat(stats.earlyEvictions()).isZero();
    assertThat(window.liveEntriesInTable()).isEqualTo(3);
  }

  @Test
  void shouldKeepAnsweringDuplicatesAndConflictsWhenFullUnderReject() {
    DedupWindow window = window(2, CapacityPolicy.REJECT, true);
    window.check(1, 11, DedupWindow.DEFAULT_REMEMBER_UNTIL);
    window.check(2);
    assertThatThrownBy(() -> window.check(3)).isInstanceOf(WindowFullException.class);

    assertThat(window.check(1, 11, DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.DUPLICATE);
    assertThat(window.check(1, 12, DedupWindow.DEFAULT_REMEMBER_UNTIL)).isEqualTo(WindowVerdict.CONFLICT);
    assertThat(window.check(2)).isEqualTo(WindowVerdict.DUPLICATE);
    // An id whose remember-until falls in the current bucket needs no room: accepted, not recorded.
    assertThat(window.check(3, 0, START + 1)).isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.held()).isEqualTo(2);
    assertThatThrownBy(() -> window.restore(3, 0, START, START + W)).isInstanceOf(WindowFullException.class)
        .hasMessageContaining("maxIds=2");
    assertThat(window.restore(1, 0, START, START + W)).isFalse(); // already live: no room needed

    clock.advanceMs(W);
    assertThat(window.check(3)).isEqualTo(WindowVerdict.ACCEPTED);
    WindowStats stats = window.stats();
    assertThat(stats.rejected()).isEqualTo(2);
    assertThat(stats.duplicates()).isEqualTo(2);
    assertThat(stats.conflicts()).isEqualTo(1);
  }

  @Test
  void shouldForgetExactlyTheSoonestExpiringBucketUnderEvictOldest() {
    DedupWindow window = window(4, CapacityPolicy.EVICT_OLDEST, false);
    window.check(1);
    window.check(2);
    clock.advanceMs(B);
    window.check(3);
    clock.advanceMs(B);
    window.check(4);
    clock.advanceMs(B);

    assertThat(window.check(5)).isEqualTo(WindowVerdict.ACCEPTED);

    assertThat(window.contains(1)).isFalse();
    assertThat(window.contains(2)).isFalse();
    assertThat(window.contains(3)).isTrue();
    assertThat(window.contains(4)).isTrue();
    assertThat(window.contains(5)).isTrue();
    WindowStats stats = window.stats();
    assertThat(stats.earlyEvictions()).isEqualTo(2);
    assertThat(stats.held()).isEqualTo(3);
    assertThat(stats.rejected()).isZero();
    assertThat(stats.expired()).isZero();
    // Arrivals of the evicted bucket are no longer covered.
    assertThat(window.memoryStartMs()).isEqualTo(START + B);

    assertThat(window.check(6)).isEqualTo(WindowVerdict.ACCEPTED); // room left: nothing evicted
    assertThat(window.check(7)).isEqualTo(WindowVerdict.ACCEPTED); // evicts the bucket of 3
    assertThat(window.contains(3)).isFalse();
    assertThat(window.stats().earlyEvictions()).isEqualTo(3);
    assertThat(window.memoryStartMs()).isEqualTo(START + 2 * B);
    // An evicted id is accepted again, as new.
    assertThat(window.check(1)).isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.liveEntriesInTable()).isEqualTo(window.held());
  }

  @Test
  void shouldEvictBySoonestExpiryNotByArrivalUnderEvictOldest() {
    DedupWindow window = window(3, CapacityPolicy.EVICT_OLDEST, false);
    window.check(1, 0, START + 50_000); // oldest arrival, but remembered for 50 s
    clock.advanceMs(B);
    window.check(2); // until START + 61 s
    clock.advanceMs(B);
    window.check(3, 0, START + 12_000); // newest arrival, expires first

    window.check(4);

    assertThat(window.contains(3)).isFalse();
    assertThat(window.contains(1)).isTrue();
    assertThat(window.contains(2)).isTrue();
    assertThat(window.contains(4)).isTrue();
  }

  @Test
  void shouldKeepTheNewIdWhenEveryHeldIdSharesItsBucketUnderEvictOldest() {
    DedupWindow window = window(2, CapacityPolicy.EVICT_OLDEST, false);
    window.check(1);
    window.check(2);

    assertThat(window.check(3)).isEqualTo(WindowVerdict.ACCEPTED); // evicts 1 and 2: the bucket 3 goes into too

    assertThat(window.check(3)).isEqualTo(WindowVerdict.DUPLICATE);
    assertThat(window.held()).isEqualTo(1);
    assertThat(window.check(4)).isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.check(5)).isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.contains(5)).isTrue();
    assertThat(window.contains(3)).isFalse();
    assertThat(window.contains(4)).isFalse();
    WindowStats stats = window.stats();
    assertThat(stats.earlyEvictions()).isEqualTo(4);
    assertThat(stats.held()).isEqualTo(1);
    assertThat(window.liveEntriesInTable()).isEqualTo(1);
    clock.advanceMs(W - 1);
    assertThat(window.check(5)).isEqualTo(WindowVerdict.DUPLICATE);
    clock.advanceMs(1);
    assertThat(window.check(5)).isEqualTo(WindowVerdict.ACCEPTED);
  }

  @Test
  void shouldKeepANewIdThatExpiresBeforeTheEvictedBucketUnderEvictOldest() {
    DedupWindow window = window(2, CapacityPolicy.EVICT_OLDEST, false);
    window.check(1);
    window.check(2);

    assertThat(window.check(3, 0, START + 5_000)).isEqualTo(WindowVerdict.ACCEPTED);

    assertThat(window.contains(3)).isTrue();
    assertThat(window.lookup(3).expiresAtMs()).isEqualTo(START + 5_000);
    assertThat(window.held()).isEqualTo(1);
    assertThat(window.liveEntriesInTable()).isEqualTo(1);
    clock.advanceMs(4_999);
    assertThat(window.check(3)).isEqualTo(WindowVerdict.DUPLICATE);
    clock.advanceMs(1);
    assertThat(window.check(3)).isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.stats().expired()).isEqualTo(1);
  }

  @Test
  void shouldMakeRoomWhenRestoringIntoAFullWindowUnderEvictOldest() {
    DedupWindow window = window(2, CapacityPolicy.EVICT_OLDEST, true);
    window.check(1);
    window.check(2);

    assertThat(window.restore(3, 33, START - 50_000, START + 10_000)).isTrue();

    assertThat(window.contains(3)).isTrue();
    assertThat(window.lookup(3).payloadHash()).isEqualTo(33);
    assertThat(window.held()).isEqualTo(1);
    assertThat(window.stats().earlyEvictions()).isEqualTo(2);
    assertThat(window.stats().accepted()).isEqualTo(2);
  }

  @Test
  void shouldHoldAtMostMaxIdsUnderEvictOldestWithHeavyTraffic() {
    DedupWindow window = window(100, CapacityPolicy.EVICT_OLDEST, false);
    long id = 1;
    for (int bucket = 0; bucket < 200; bucket++) {
      for (int i = 0; i < 37; i++) {
        assertThat(window.check(id++)).isEqualTo(WindowVerdict.ACCEPTED);
        assertThat(window.held()).isLessThanOrEqualTo(100);
      }
      // The 37 newest are always remembered.
      assertThat(window.contains(id - 1)).isTrue();
      assertThat(window.contains(id - 37)).isTrue();
      clock.advanceMs(B);
    }
    WindowStats stats = window.stats();
    assertThat(stats.accepted()).isEqualTo(id - 1);
    assertThat(stats.held() + stats.expired() + stats.earlyEvictions()).isEqualTo(id - 1);
    assertThat(window.liveEntriesInTable()).isEqualTo(stats.held());
  }

  @Test
  void shouldNotCoverForIdsForgottenByEvictingAShortLivedBucket() {
    ManualClock fromZero = new ManualClock(0);
    DedupWindow w = DedupWindow.builder().window(Duration.ofSeconds(60)).bucket(Duration.ofSeconds(1))
        .clock(fromZero).maxIds(2).capacityPolicy(CapacityPolicy.EVICT_OLDEST).build();
    fromZero.setMs(100_000);
    w.check(1);
    w.check(2, DedupWindow.NO_PAYLOAD_HASH, 130_000);
    w.check(3, DedupWindow.NO_PAYLOAD_HASH, 110_000);

    assertThat(w.stats().earlyEvictions()).isEqualTo(1);
    assertThat(w.contains(2)).isFalse();
    // Id 2 was first seen at 100 s and is forgotten: the window covers only for arrivals after that bucket.
    assertThat(w.memoryStartMs()).isEqualTo(101_000);
  }

  @Test
  void shouldKeepTheMemoryStartOfDefaultEntriesWhenEvictingThem() {
    ManualClock fromZero = new ManualClock(0);
    DedupWindow w = DedupWindow.builder().window(Duration.ofSeconds(60)).bucket(Duration.ofSeconds(1))
        .clock(fromZero).maxIds(2).capacityPolicy(CapacityPolicy.EVICT_OLDEST).build();
    fromZero.setMs(100_000);
    w.check(1);
    fromZero.setMs(101_000);
    w.check(2);
    w.check(3);

    assertThat(w.contains(1)).isFalse();
    assertThat(w.memoryStartMs()).isEqualTo(101_000);
  }
}
