package io.github.vertxdedup.window;

import io.github.vertxdedup.time.ManualClock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The remember-until rule at its edges: an id accepted with remember-until {@code T} (default {@code arrival + W})
 * is a duplicate for every arrival before {@code T - b} and accepted again for every arrival at or after {@code T};
 * between the two either answer may come, but once forgotten it stays forgotten.
 *
 * <p>Each probe of {@code check} gets a window of its own, so that an acceptance at one probe time does not
 * become the entry the next probe finds.
 */
class DedupWindowBoundaryTest {

  /** Marks the default remember-until in the cases below. */
  private static final long DEFAULT = -1;

  static Stream<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    for (long b : new long[] {1, 7, 1_000}) {
      for (int n : new int[] {1, 2, 60}) {
        long w = n * b;
        for (long arrivalInBucket : new long[] {0, 1, b / 2, b - 1}) {
          if (arrivalInBucket >= b || (arrivalInBucket == b / 2 && b / 2 <= 1)) {
            continue;
          }
          for (long rememberFor : new long[] {DEFAULT, w, w - 1, b + 1, b, b - 1, 1}) {
            if (rememberFor == DEFAULT || (rememberFor >= 1 && rememberFor <= w)) {
              cases.add(Arguments.of(b, n, arrivalInBucket, rememberFor));
            }
          }
        }
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "b={0} ms, N={1}, arrival at {2} ms into a bucket, T = arrival + {3} (-1: default W)")
  @MethodSource("cases")
  void shouldBeDuplicateBeforeTMinusBucketAndAcceptedFromT(long b, int n, long arrivalInBucket, long rememberFor) {
    for (long base : new long[] {1_700_000_000_000L, -40_000L * b}) {
      long arrival = Math.floorDiv(base, b) * b + arrivalInBucket;
      checkEdges(b, n, arrival, rememberFor);
    }
  }

  @Property(tries = 3_000)
  void shouldKeepTheRuleForAnyWindowShapeArrivalAndRememberUntil(
      @ForAll @IntRange(min = 1, max = 2_000) int bucketMs,
      @ForAll @IntRange(min = 1, max = 300) int n,
      @ForAll @LongRange(min = -1_000_000_000_000L, max = 4_000_000_000_000L) long arrival,
      @ForAll @LongRange(min = 0, max = 1_000_000) long rememberForChoice) {
    long w = (long) n * bucketMs;
    long rememberFor = rememberForChoice % 5 == 0 ? DEFAULT : 1 + rememberForChoice % w;
    checkEdges(bucketMs, n, arrival, rememberFor);
  }

  private static void checkEdges(long b, int n, long arrival, long rememberFor) {
    long w = n * b;
    long t = arrival + (rememberFor == DEFAULT ? w : rememberFor);
    if (t - b - 1 >= arrival) {
      assertThat(probe(b, n, arrival, rememberFor, t - b - 1)).as("arrival at T - b - 1").isEqualTo(WindowVerdict.DUPLICATE);
    }
    assertThat(probe(b, n, arrival, rememberFor, t)).as("arrival at T").isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(probe(b, n, arrival, rememberFor, t + 1)).as("arrival at T + 1").isEqualTo(WindowVerdict.ACCEPTED);
    assertRememberedThenForgottenForGood(b, n, arrival, rememberFor, t);
  }

  /** Accepts the id at {@code arrival}, then answers an arrival of it at {@code at} in a window of its own. */
  private static WindowVerdict probe(long b, int n, long arrival, long rememberFor, long at) {
    ManualClock clock = new ManualClock(arrival);
    DedupWindow window = window(b, n, clock);
    assertThat(accept(window, arrival, rememberFor)).isEqualTo(WindowVerdict.ACCEPTED);
    clock.setMs(at);
    return window.check(42);
  }

  /**
   * Walks the clock 1 ms at a time (at most about 2,000 steps around the edges): contains() is true before
   * {@code T - b}, false from {@code T} on, and in between never turns true again once false. Duplicates arriving
   * all the way up to {@code T - b} do not move {@code T}.
   */
  private static void assertRememberedThenForgottenForGood(long b, int n, long arrival, long rememberFor, long t) {
    ManualClock clock = new ManualClock(arrival);
    DedupWindow window = window(b, n, clock);
    accept(window, arrival, rememberFor);
    long from = Math.max(arrival, t - b - 1_000);
    long duplicates = 0;
    for (long at = arrival; at < t - b; at = at < from ? Math.min(from, at + b) : at + 1) {
      clock.setMs(at);
      assertThat(window.check(42)).as("duplicate at %d, T = %d", at, t).isEqualTo(WindowVerdict.DUPLICATE);
      duplicates++;
    }
    boolean forgotten = false;
    for (long at = Math.max(arrival, t - b); at <= t + 2 * b; at++) {
      clock.setMs(at);
      boolean remembered = window.contains(42);
      if (at >= t) {
        assertThat(remembered).as("remembered at %d >= T = %d", at, t).isFalse();
      }
      assertThat(forgotten && remembered).as("remembered again at %d after being forgotten", at).isFalse();
      forgotten |= !remembered;
    }
    WindowStats stats = window.stats();
    assertThat(stats.accepted()).isEqualTo(1);
    assertThat(stats.duplicates()).isEqualTo(duplicates);
    // A T inside the arrival's own bucket leaves nothing to remember, so nothing expires.
    assertThat(stats.expired()).isEqualTo(Math.floorDiv(t, b) > Math.floorDiv(arrival, b) ? 1 : 0);
    assertThat(stats.held()).isZero();
  }

  private static DedupWindow window(long b, int n, ManualClock clock) {
    return DedupWindow.builder()
        .window(Duration.ofMillis(n * b))
        .bucket(Duration.ofMillis(b))
        .clock(clock)
        .build();
  }

  private static WindowVerdict accept(DedupWindow window, long arrival, long rememberFor) {
    return rememberFor == DEFAULT
        ? window.check(42)
        : window.check(42, DedupWindow.NO_PAYLOAD_HASH, arrival + rememberFor);
  }
}
