package io.github.vertxdedup.window;

import io.github.vertxdedup.time.ManualClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link DedupWindow#restoreBatch} against single {@link DedupWindow#restore} calls on a twin window. */
class DedupWindowRestoreBatchTest {

  private static final long START = 1_700_000_000_000L;
  private static final long W = 60_000;

  private final ManualClock clock = new ManualClock(START);

  private DedupWindow window() {
    return DedupWindow.builder().window(Duration.ofMillis(W)).bucket(Duration.ofSeconds(1)).clock(clock)
        .maxIds(1_000_000).build();
  }

  @Test
  void shouldRestoreABatchExactlyAsSingleRestoresWould() {
    DedupWindow batched = window();
    DedupWindow single = window();
    SplittableRandom random = new SplittableRandom(42);
    int n = 5_000;
    long[] fps = new long[n];
    long[] payloads = new long[n];
    long[] firstSeen = new long[n];
    long[] expires = new long[n];
    for (int i = 0; i < n; i++) {
      // Some repeats (already live), some expired, some beyond now + W (kept until now + W).
      fps[i] = i % 7 == 6 ? fps[i - 3] : 1 + random.nextLong(Long.MAX_VALUE - 1);
      payloads[i] = random.nextInt(3);
      firstSeen[i] = START - random.nextLong(W);
      expires[i] = i % 11 == 10 ? START - 1 : firstSeen[i] + random.nextLong(1, 2 * W);
    }
    int restored = batched.restoreBatch(fps, payloads, firstSeen, expires, n);
    int expected = 0;
    for (int i = 0; i < n; i++) {
      if (single.restore(fps[i], payloads[i], firstSeen[i], expires[i])) {
        expected++;
      }
    }
    assertThat(restored).isEqualTo(expected).isPositive();
    assertThat(batched.held()).isEqualTo(single.held());
    for (int i = 0; i < n; i++) {
      assertThat(batched.lookup(fps[i])).as("entry %d", i).isEqualTo(single.lookup(fps[i]));
    }
    clock.advanceMs(W / 2);
    assertThat(batched.held()).isEqualTo(single.held());
  }

  @Test
  void shouldRefuseABadEntryBeforeRestoringAnything() {
    DedupWindow w = window();
    long[] fps = {5, 0};
    long[] zeros = {0, 0};
    long[] first = {START, START};
    long[] expires = {START + 10, START + 10};
    assertThatThrownBy(() -> w.restoreBatch(fps, zeros, first, expires, 2))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fingerprints[1] must be non-zero");
    assertThatThrownBy(() -> w.restoreBatch(new long[] {5}, zeros, new long[] {START}, new long[] {START - 1}, 1))
        .hasMessageContaining("expiresAtMs[0] must be >= firstSeenMs[0]");
    assertThat(w.held()).isZero();
  }
}
