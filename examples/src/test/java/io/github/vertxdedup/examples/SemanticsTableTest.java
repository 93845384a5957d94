package io.github.vertxdedup.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.time.ManualClock;
import io.github.vertxdedup.window.WindowVerdict;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The boundary table of {@code docs/semantics.md}, row by row, against the window itself, for first sightings at the
 * start, the middle and the end of a bucket (the boundary is exact to a bucket, so each must hold wherever in its
 * bucket the id arrived).
 */
class SemanticsTableTest {

  private static final long W = 60_000;
  private static final long B = 1_000;
  private static final long START = 1_000_000;

  private final ManualClock clock = new ManualClock(START);
  private final DedupWindow window = DedupWindow.builder()
      .window(Duration.ofMillis(W)).bucket(Duration.ofMillis(B)).clock(clock).build();

  @ParameterizedTest
  @ValueSource(longs = {0, 1, 500, 999})
  void aCopyIsADuplicateUntilWMinusBAndAcceptedFromW(long offsetInBucket) {
    long t0 = START + 5 * B + offsetInBucket;
    clock.setMs(t0);
    assertThat(window.check(7)).isEqualTo(WindowVerdict.ACCEPTED);

    clock.setMs(t0 + W - B - 1);
    assertThat(window.check(7)).isEqualTo(WindowVerdict.DUPLICATE);   // the duplicate does not extend the life...
    clock.setMs(t0 + W);
    assertThat(window.check(7)).isEqualTo(WindowVerdict.ACCEPTED);    // ...so the copy at t0 + W is accepted
  }

  @ParameterizedTest
  @ValueSource(longs = {0, 1, 500, 999})
  void anEntryWithItsOwnRememberUntilIsADuplicateUntilTMinusBAndAcceptedFromT(long offsetInBucket) {
    long t0 = START + 5 * B + offsetInBucket;
    long t = t0 + 15_000 + offsetInBucket;                      // T within (now, now + W]
    clock.setMs(t0);
    assertThat(window.check(8, DedupWindow.NO_PAYLOAD_HASH, t)).isEqualTo(WindowVerdict.ACCEPTED);

    clock.setMs(t - B - 1);
    assertThat(window.check(8)).isEqualTo(WindowVerdict.DUPLICATE);
    clock.setMs(t);
    assertThat(window.check(8)).isEqualTo(WindowVerdict.ACCEPTED);
  }
}
