package io.github.vertxdedup.window;

import io.github.vertxdedup.time.ManualClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Every error of the builder and of the window: its type, and a message that names the field and the limit. */
class DedupWindowValidationTest {

  private final ManualClock clock = new ManualClock(1_000_000);

  private DedupWindow.Builder minute() {
    return DedupWindow.builder().window(Duration.ofMinutes(1)).bucket(Duration.ofSeconds(1)).clock(clock);
  }

  // --- builder ------------------------------------------------------------------------------------------------

  @Test
  void shouldRequireAWindow() {
    assertThatThrownBy(() -> DedupWindow.builder().bucket(Duration.ofSeconds(1)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("window is required");
  }

  @Test
  void shouldRefuseAWindowThatIsNotAWholeMultipleOfTheBucket() {
    assertThatThrownBy(() -> DedupWindow.builder().window(Duration.ofSeconds(60)).bucket(Duration.ofSeconds(7))
        .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("window (60000 ms)")
        .hasMessageContaining("whole multiple of bucket (7000 ms)");
  }

  @Test
  void shouldRefuseADefaultBucketThatIsNotAWholeNumberOfMilliseconds() {
    assertThatThrownBy(() -> DedupWindow.builder().window(Duration.ofMillis(90)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("window / 60")
        .hasMessageContaining("multiple of 60 ms but was 90 ms");
  }

  @Test
  void shouldDefaultTheBucketToOneSixtiethOfTheWindow() {
    DedupWindow window = DedupWindow.builder().window(Duration.ofMinutes(5)).clock(clock).build();
    assertThat(window.bucket()).isEqualTo(Duration.ofSeconds(5));
    assertThat(window.bucketCount()).isEqualTo(60);
  }

  @Test
  void shouldRefuseMoreThanMaxBucketsBuckets() {
    long limit = DedupWindow.MAX_BUCKETS;
    assertThat(DedupWindow.builder().window(Duration.ofMillis(limit)).bucket(Duration.ofMillis(1)).clock(clock)
        .build().bucketCount()).isEqualTo(16_384);

    assertThatThrownBy(() -> DedupWindow.builder().window(Duration.ofMillis(limit + 1)).bucket(Duration.ofMillis(1))
        .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("window / bucket must be <= 16384 buckets but was 16385");
  }

  @Test
  void shouldRefuseNonPositiveDurations() {
    assertThatThrownBy(() -> DedupWindow.builder().window(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("window must be > 0 but was PT0S");
    assertThatThrownBy(() -> DedupWindow.builder().window(Duration.ofSeconds(-60)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("window must be > 0 but was PT-1M");
    assertThatThrownBy(() -> DedupWindow.builder().bucket(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("bucket must be > 0 but was PT0S");
    assertThatThrownBy(() -> DedupWindow.builder().bucket(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("bucket must be > 0 but was PT-0.001S");
  }

  @Test
  void shouldRefuseSubMillisecondDurations() {
    assertThatThrownBy(() -> DedupWindow.builder().window(Duration.ofNanos(60_000_000_001L)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("window must be a whole number of milliseconds but was");
    assertThatThrownBy(() -> DedupWindow.builder().bucket(Duration.ofNanos(500_000)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("bucket must be a whole number of milliseconds but was PT0.0005S");
    assertThatThrownBy(() -> DedupWindow.builder().bucket(Duration.ofNanos(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("bucket must be a whole number of milliseconds");
  }

  @Test
  void shouldRefuseDurationsBeyondLongMilliseconds() {
    assertThatThrownBy(() -> DedupWindow.builder().window(Duration.ofSeconds(Long.MAX_VALUE)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("window must be <= 9223372036854775807 ms but was");
    assertThatThrownBy(() -> DedupWindow.builder().bucket(Duration.ofSeconds(Long.MAX_VALUE / 1000 + 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("bucket must be <= 9223372036854775807 ms but was");
  }

  @Test
  void shouldRefuseNullArgumentsNamingThem() {
    assertThatThrownBy(() -> DedupWindow.builder().window(null))
        .isInstanceOf(NullPointerException.class).hasMessage("window");
    assertThatThrownBy(() -> DedupWindow.builder().bucket(null))
        .isInstanceOf(NullPointerException.class).hasMessage("bucket");
    assertThatThrownBy(() -> DedupWindow.builder().clock(null))
        .isInstanceOf(NullPointerException.class).hasMessage("clock");
    assertThatThrownBy(() -> DedupWindow.builder().capacityPolicy(null))
        .isInstanceOf(NullPointerException.class).hasMessage("capacityPolicy");
  }

  @Test
  void shouldRefuseMaxIdsOutOfRange() {
    assertThatThrownBy(() -> DedupWindow.builder().maxIds(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxIds must be >= 1 but was 0");
    assertThatThrownBy(() -> DedupWindow.builder().maxIds(-5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxIds must be >= 1 but was -5");

    long plain = DedupWindow.maxIdsLimit(false);
    long withHashes = DedupWindow.maxIdsLimit(true);
    assertThat(plain).isEqualTo(100_663_295L);
    assertThat(withHashes).isEqualTo(50_331_647L);
    assertThatThrownBy(() -> minute().maxIds(plain + 1).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxIds must be <= 100663295 but was 100663296");
    assertThatThrownBy(() -> minute().payloadHashes(true).maxIds(withHashes + 1).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxIds must be <= 50331647 but was 50331648");
    assertThat(minute().maxIds(1).build()).isNotNull();
  }

  @Test
  void shouldRefuseExpectedIdsOutOfRange() {
    assertThatThrownBy(() -> DedupWindow.builder().expectedIds(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("expectedIds must be >= 0 but was -1");
    assertThatThrownBy(() -> minute().payloadHashes(true).expectedIds(50_331_648).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("expectedIds must be <= 50331647 but was 50331648");
  }

  @Test
  void shouldRefuseExpectedIdsAboveMaxIds() {
    assertThatThrownBy(() -> DedupWindow.builder().window(Duration.ofMinutes(1)).maxIds(10).expectedIds(11).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expectedIds must be <= maxIds (10) but was 11");
  }

  @Test
  void shouldBuildAgainFromAChangedBuilder() {
    DedupWindow.Builder builder = DedupWindow.builder().window(Duration.ofMinutes(1)).clock(clock);
    assertThat(builder.build().bucketCount()).isEqualTo(60);

    // The first build must not have fixed the default bucket (1 s) or the default cap (the plain limit).
    DedupWindow wider = builder.window(Duration.ofMinutes(2)).payloadHashes(true).build();

    assertThat(wider.bucket()).isEqualTo(Duration.ofSeconds(2));
    assertThat(wider.bucketCount()).isEqualTo(60);
  }

  // --- window methods ---------------------------------------------------------------------------------------------

  @Test
  void shouldRefuseFingerprintZeroEverywhere() {
    DedupWindow window = minute().build();
    String message = "fingerprint must be non-zero (0 marks an empty slot) but was 0";
    assertThatThrownBy(() -> window.check(0)).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    assertThatThrownBy(() -> window.check(0, 5, DedupWindow.DEFAULT_REMEMBER_UNTIL))
        .isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    assertThatThrownBy(() -> window.contains(0)).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    assertThatThrownBy(() -> window.lookup(0)).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    assertThatThrownBy(() -> window.restore(0, 0, 1_000_000, 1_010_000))
        .isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    assertNothingRecorded(window);
  }

  @Test
  void shouldNameTheNullArrayOfABatch() {
    DedupWindow w = DedupWindow.builder().window(Duration.ofMinutes(1)).clock(clock).build();
    assertThatThrownBy(() -> w.checkBatch(new long[] {1}, 0, 1, null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("verdicts");
  }

  @Test
  void shouldRefuseRememberUntilThatIsAlreadyPast() {
    DedupWindow window = minute().build();
    assertThatThrownBy(() -> window.check(1, 0, 1_000_000))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rememberUntilMs must be after now (1000000) but was 1000000");
    assertThatThrownBy(() -> window.check(1, 0, 999_000))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rememberUntilMs must be after now (1000000) but was 999000");
    assertThatThrownBy(() -> window.check(1, 0, Long.MIN_VALUE + 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("rememberUntilMs must be after now (1000000)");
    assertNothingRecorded(window);
  }

  @Test
  void shouldRefuseRememberUntilBeyondTheWindow() {
    DedupWindow window = minute().build();
    assertThat(window.check(1, 0, 1_060_000)).isEqualTo(WindowVerdict.ACCEPTED); // exactly now + W is allowed

    assertThatThrownBy(() -> window.check(2, 0, 1_060_001))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rememberUntilMs must be <= now + window (1000000 + 60000 = 1060000) but was 1060001");
    assertThatThrownBy(() -> window.check(2, 0, Long.MAX_VALUE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("rememberUntilMs must be <= now + window");
    assertThat(window.contains(2)).isFalse();
    assertThat(window.stats().accepted()).isEqualTo(1);
  }

  @Test
  void shouldRefuseRememberUntilBeyondTheWindowWhenTheDifferenceOverflows() {
    ManualClock early = new ManualClock(-1_000);
    DedupWindow window = DedupWindow.builder().window(Duration.ofMinutes(1)).clock(early).build();

    assertThatThrownBy(() -> window.check(2, 0, Long.MAX_VALUE)) // Long.MAX_VALUE - (-1000) overflows
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("rememberUntilMs must be <= now + window");
    assertNothingRecorded(window);
  }

  @Test
  void shouldRefuseRestoringAnEntryThatExpiresBeforeItWasFirstSeen() {
    DedupWindow window = minute().build();
    assertThatThrownBy(() -> window.restore(1, 0, 1_000_000, 999_999))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("expiresAtMs must be >= firstSeenMs (1000000) but was 999999");
    assertNothingRecorded(window);
  }

  @Test
  void shouldRefuseManualClockStepsBackwardsOrPastTheEndOfTime() {
    assertThatThrownBy(() -> clock.advanceMs(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("deltaMs must be >= 0 but was -1");
    assertThatThrownBy(() -> clock.advance(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("amount must be >= 0 but was PT-0.001S");
    assertThatThrownBy(() -> clock.setMs(999_999))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("epochMs must be >= the current time 1000000 (the clock is monotonic) but was 999999");
    assertThatThrownBy(() -> clock.advanceMs(Long.MAX_VALUE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("deltaMs must be <= Long.MAX_VALUE - now (now = 1000000)");
    assertThatThrownBy(() -> clock.advance(Duration.ofSeconds(Long.MAX_VALUE)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("amount must be <= 9223372036854775807 ms");
    assertThat(clock.nowMs()).isEqualTo(1_000_000);
    assertThat(new ManualClock(-5).advanceMs(Long.MAX_VALUE).nowMs()).isEqualTo(Long.MAX_VALUE - 5);
  }

  private static void assertNothingRecorded(DedupWindow window) {
    WindowStats stats = window.stats();
    assertThat(stats.held()).isZero();
    assertThat(stats.accepted()).isZero();
    assertThat(stats.duplicates()).isZero();
    assertThat(stats.rejected()).isZero();
    assertThat(window.liveEntriesInTable()).isZero();
  }
}
