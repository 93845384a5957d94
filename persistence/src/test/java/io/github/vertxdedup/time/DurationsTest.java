package io.github.vertxdedup.time;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The positive-whole-milliseconds check: its result, and each refusal naming the setting and the value. */
class DurationsTest {

  @Test
  void positiveMillis_returnsTheMilliseconds() {
    assertThat(Durations.positiveMillis("window", Duration.ofMillis(1))).isEqualTo(1);
    assertThat(Durations.positiveMillis("window", Duration.ofHours(2))).isEqualTo(7_200_000);
    assertThat(Durations.positiveMillis("lease", Duration.ofMillis(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void positiveMillis_zeroOrNegative() {
    assertThatThrownBy(() -> Durations.positiveMillis("window", Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("window must be > 0 but was PT0S");
    assertThatThrownBy(() -> Durations.positiveMillis("bucket", Duration.ofMillis(-5)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("bucket must be > 0 but was PT-0.005S");
  }

  @Test
  void positiveMillis_fractionOfAMillisecond() {
    assertThatThrownBy(() -> Durations.positiveMillis("lease", Duration.ofNanos(1_500_000)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("lease must be a whole number of milliseconds but was PT0.0015S");
  }

  @Test
  void positiveMillis_beyondALongOfMillisecondsIsLeftToTheCaller() {
    assertThatThrownBy(() -> Durations.positiveMillis("window", Duration.ofSeconds(Long.MAX_VALUE)))
        .isInstanceOf(ArithmeticException.class);
    assertThatThrownBy(() -> Durations.positiveMillis("window", null)).isInstanceOf(NullPointerException.class);
  }
}
