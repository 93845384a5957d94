package io.github.vertxdedup.window;

import io.github.vertxdedup.time.ManualClock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The textbook cases of a bucket-ring window (semantics, memory bound), restated against this window. */
class DedupWindowSeedCasesTest {

  private final ManualClock clock = new ManualClock(0);
  private final DedupWindow window = DedupWindow.builder()
      .window(Duration.ofSeconds(60))
      .bucket(Duration.ofSeconds(1))
      .clock(clock)
      .build();

  @Test
  void shouldDropDuplicateInsideWindowAndAcceptAgainAfterIt() {
    assertThat(window.check(7)).isEqualTo(WindowVerdict.ACCEPTED);
    clock.setMs(30_000);
    assertThat(window.check(7)).isEqualTo(WindowVerdict.DUPLICATE);
    clock.setMs(59_000);
    assertThat(window.check(7)).isEqualTo(WindowVerdict.DUPLICATE);
    clock.setMs(60_000);
    assertThat(window.check(7)).isEqualTo(WindowVerdict.ACCEPTED);
  }

  @Test
  void shouldDropReorderedDuplicates() {
    clock.setMs(61_000);
    for (long id : new long[] {5, 3, 4}) {
      assertThat(window.check(id)).isEqualTo(WindowVerdict.ACCEPTED);
    }
    clock.setMs(62_000);
    for (long id : new long[] {3, 5, 4}) {
      assertThat(window.check(id)).isEqualTo(WindowVerdict.DUPLICATE);
    }
  }

  @Test
  void shouldAcceptAllDistinctIdsAndBoundHeldByRateTimesWindow() {
    final int rate = 1_000;
    long maxHeld = 0;
    for (int t = 0; t < 600; t++) {
      clock.setMs(t * 1_000L);
      for (int i = 0; i < rate; i++) {
        assertThat(window.check((long) t * rate + i + 1)).isEqualTo(WindowVerdict.ACCEPTED);
      }
      maxHeld = Math.max(maxHeld, window.held());
    }
    assertThat(maxHeld).isLessThanOrEqualTo(rate * 60L).isGreaterThanOrEqualTo(rate * 59L);
    assertThat(window.stats().accepted()).isEqualTo(600L * rate);
  }
}
