package io.github.vertxdedup.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Cases found by review: memory start after evicting short-lived ids, presizing after idling, builder limits. */
class DedupWindowReviewFixesTest {

  private final ManualClock clock = new ManualClock(0);

  @Test
  void shouldNotVouchForIdsForgottenByEvictingAShortLivedBucket() {
    DedupWindow w = DedupWindow.builder().window(Duration.ofSeconds(60)).bucket(Duration.ofSeconds(1))
        .clock(clock).maxIds(2).capacityPolicy(CapacityPolicy.EVICT_OLDEST).build();
    clock.setMs(100_000);
    w.check(1);
    w.check(2, DedupWindow.NO_PAYLOAD_HASH, 130_000);
    w.check(3, DedupWindow.NO_PAYLOAD_HASH, 110_000);

    assertThat(w.stats().earlyEvictions()).isEqualTo(1);
    assertThat(w.contains(2)).isFalse();
    // Id 2 was first seen at 100 s and is forgotten: the window vouches only for arrivals after that bucket.
    assertThat(w.memoryStartMs()).isEqualTo(101_000);
  }

  @Test
  void shouldKeepTheMemoryStartOfDefaultEntriesWhenEvictingThem() {
    DedupWindow w = DedupWindow.builder().window(Duration.ofSeconds(60)).bucket(Duration.ofSeconds(1))
        .clock(clock).maxIds(2).capacityPolicy(CapacityPolicy.EVICT_OLDEST).build();
    clock.setMs(100_000);
    w.check(1);
    clock.setMs(101_000);
    w.check(2);
    w.check(3);

    assertThat(w.contains(1)).isFalse();
    assertThat(w.memoryStartMs()).isEqualTo(101_000);
  }

  @Test
  void shouldKeepItsPresizedTableAfterIdlingLongerThanTheWindow() {
    DedupWindow w = DedupWindow.builder().window(Duration.ofMinutes(1)).clock(clock).expectedIds(100_000).build();
    w.check(1);
    long slots = w.stats().tableSlots();
    clock.advanceMs(60_000);
    w.check(2);

    assertThat(w.stats().tableSlots()).isEqualTo(slots).isGreaterThan(100_000);
    assertThat(w.held()).isEqualTo(1);
    assertThat(w.contains(1)).isFalse();
  }

  @Test
  void shouldRefuseExpectedIdsAboveMaxIds() {
    assertThatThrownBy(() -> DedupWindow.builder().window(Duration.ofMinutes(1)).maxIds(10).expectedIds(11).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expectedIds must be <= maxIds (10) but was 11");
  }

  @Test
  void shouldNameTheNullArrayOfABatch() {
    DedupWindow w = DedupWindow.builder().window(Duration.ofMinutes(1)).clock(clock).build();
    assertThatThrownBy(() -> w.checkBatch(new long[] {1}, 0, 1, null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("verdicts");
  }
}
