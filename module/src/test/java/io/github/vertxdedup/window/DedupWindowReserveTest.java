package io.github.vertxdedup.window;

import io.github.vertxdedup.time.ManualClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link DedupWindow#reserve}: the table sized before entries are restored in table order. */
class DedupWindowReserveTest {

  private static final long START = 1_700_000_000_000L;
  private static final long W = 60_000;

  private final ManualClock clock = new ManualClock(START);

  private DedupWindow.Builder builder() {
    return DedupWindow.builder().window(Duration.ofMillis(W)).bucket(Duration.ofSeconds(1)).clock(clock);
  }

  /** Fingerprints in the order a window snapshot holds them: ascending home slots of a Fibonacci-hashed table. */
  private static long[] inTableOrder(int n) {
    long[] fps = new SplittableRandom(7).longs(n).map(f -> f == 0 ? 1 : f).toArray();
    Long[] boxed = Arrays.stream(fps).boxed().toArray(Long[]::new);
    Arrays.sort(boxed, (a, b) -> Long.compareUnsigned(a * FingerprintTable.FIBONACCI, b * FingerprintTable.FIBONACCI));
    return Arrays.stream(boxed).mapToLong(Long::longValue).toArray();
  }

  /**
   * A window not presized, reserved for 100,000 entries, takes them in table order without its table growing while
   * they are restored: the growth that would otherwise happen midway is what let such entries pile into one probe
   * chain (each doubling leaves the entries restored so far, all homed in the first slots, in one run).
   */
  @Test
  void shouldTakeEntriesInTableOrderWithoutGrowingOnceReserved() {
    DedupWindow w = builder().build();
    int n = 100_000;
    w.reserve(n);
    long slots = w.stats().tableSlots();
    assertThat(slots).as("as expectedIds(%d) would presize it", n)
        .isEqualTo(builder().expectedIds(n).build().stats().tableSlots());
    long[] fps = inTableOrder(n);
    long[] none = new long[n];
    long[] firstSeen = new long[n];
    long[] expires = new long[n];
    Arrays.fill(firstSeen, START);
    Arrays.fill(expires, START + W);
    for (int from = 0; from < n; from += 16_384) {
      int len = Math.min(16_384, n - from);
      assertThat(w.restoreBatch(Arrays.copyOfRange(fps, from, from + len), none, firstSeen, expires, len))
          .isEqualTo(len);
    }
    assertThat(w.stats().tableSlots()).as("no growth while restoring").isEqualTo(slots);
    assertThat(w.held()).isEqualTo(n);
    for (long f : fps) {
      assertThat(w.contains(f)).isTrue();
    }
  }

  @Test
  void shouldKeepWhatTheWindowHoldsWhenItGrows() {
    DedupWindow w = builder().build();
    for (long f = 1; f <= 1_000; f++) {
      assertThat(w.check(f)).isEqualTo(WindowVerdict.ACCEPTED);
    }
    long before = w.stats().tableSlots();
    w.reserve(50_000);
    assertThat(w.stats().tableSlots()).isGreaterThan(before);
    assertThat(w.held()).isEqualTo(1_000);
    for (long f = 1; f <= 1_000; f++) {
      assertThat(w.check(f)).isEqualTo(WindowVerdict.DUPLICATE);
    }
  }

  @Test
  void shouldNeitherShrinkNorPassMaxIds() {
    DedupWindow presized = builder().expectedIds(50_000).build();
    long slots = presized.stats().tableSlots();
    presized.reserve(10);
    assertThat(presized.stats().tableSlots()).isEqualTo(slots);

    DedupWindow capped = builder().maxIds(1_000).build();
    capped.reserve(1_000_000);
    assertThat(capped.stats().tableSlots()).isEqualTo(builder().maxIds(1_000).expectedIds(1_000).build().stats()
        .tableSlots());
  }

  @Test
  void shouldRefuseANegativeCountNamingIt() {
    DedupWindow w = builder().build();
    assertThatThrownBy(() -> w.reserve(-1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("ids must be >= 0 but was -1");
  }
}
