package io.github.vertxdedup.window;

import io.github.vertxdedup.time.ManualClock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** How the window follows its clock: readings that go backwards, long idles, and wrapping expiry epochs. */
class DedupWindowClockTest {

  private long readingMs = 1_000_000;

  private DedupWindow window(long windowMs, long bucketMs) {
    return DedupWindow.builder()
        .window(Duration.ofMillis(windowMs))
        .bucket(Duration.ofMillis(bucketMs))
        .clock(() -> readingMs)
        .build();
  }

  @Test
  void shouldNeitherWipeNorFreezeWhenTheClockReadingGoesBackwards() {
    DedupWindow window = window(60_000, 1_000); // T = arrival + 60 s
    readingMs = 1_000_000;
    assertThat(window.check(1)).isEqualTo(WindowVerdict.ACCEPTED); // forgotten from 1_060_000
    readingMs = 1_030_000;
    assertThat(window.check(2)).isEqualTo(WindowVerdict.ACCEPTED); // forgotten from 1_090_000

    readingMs = 0; // a step back of almost 17 minutes: not a wipe
    assertThat(window.held()).isEqualTo(2);
    assertThat(window.check(1)).isEqualTo(WindowVerdict.DUPLICATE);
    assertThat(window.check(3)).isEqualTo(WindowVerdict.ACCEPTED); // counts as arriving at 1_030_000
    assertThat(window.lookup(3).firstSeenMs()).isEqualTo(1_030_000);
    assertThat(window.lookup(3).expiresAtMs()).isEqualTo(1_090_000);

    readingMs = 1_060_000; // once the reading is past the latest one seen, expiry runs on: no freeze
    assertThat(window.check(1)).isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.check(2)).isEqualTo(WindowVerdict.DUPLICATE);
    readingMs = 1_090_000;
    assertThat(window.contains(2)).isFalse();
    assertThat(window.contains(3)).isFalse();
    assertThat(window.held()).isEqualTo(1);
    assertThat(window.stats().expired()).isEqualTo(3);
  }

  @Test
  void shouldNotRememberAnExpiredIdAgainWhenTheClockReadingGoesBackwards() {
    DedupWindow window = window(10_000, 1_000);
    window.check(7);
    readingMs += 10_000;
    assertThat(window.contains(7)).isFalse();
    readingMs -= 5_000;
    assertThat(window.contains(7)).isFalse();
    assertThat(window.check(7)).isEqualTo(WindowVerdict.ACCEPTED);
  }

  @Test
  void shouldJudgeRememberUntilAgainstTheLatestReadingWhenTheReadingGoesBackwards() {
    readingMs = 50_000;
    DedupWindow window = window(10_000, 1_000);
    window.check(1);
    readingMs = 40_000; // behind: the window's now stays 50_000
    assertThat(window.check(2, DedupWindow.NO_PAYLOAD_HASH, 60_000)).isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.lookup(2).expiresAtMs()).isEqualTo(60_000);
    assertThat(window.check(3, DedupWindow.NO_PAYLOAD_HASH, 55_000)).isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.lookup(3).expiresAtMs()).isEqualTo(55_000);
  }

  @Test
  void shouldEmptyAfterIdlingLongerThanTheWindowThenWorkNormally() {
    DedupWindow window = window(60_000, 1_000);
    for (long id = 1; id <= 1_000; id++) {
      window.check(id);
    }
    long slotsWhenFull = window.stats().tableSlots();
    readingMs += 60_001;

    WindowStats idle = window.stats();
    assertThat(idle.held()).isZero();
    assertThat(idle.expired()).isEqualTo(1_000);
    assertThat(idle.accepted()).isEqualTo(1_000);
    assertThat(idle.tableSlots()).isLessThan(slotsWhenFull);
    assertThat(window.liveEntriesInTable()).isZero();

    assertThat(window.check(5)).isEqualTo(WindowVerdict.ACCEPTED);
    readingMs += 30_000;
    assertThat(window.check(5)).isEqualTo(WindowVerdict.DUPLICATE);
    assertThat(window.check(6)).isEqualTo(WindowVerdict.ACCEPTED);
    readingMs += 30_000;
    assertThat(window.check(5)).isEqualTo(WindowVerdict.ACCEPTED);
    assertThat(window.check(6)).isEqualTo(WindowVerdict.DUPLICATE);
    assertThat(window.held()).isEqualTo(2);
  }

  @Test
  void shouldEmptyAfterIdlingExactlyOneWindow() {
    DedupWindow window = window(60_000, 1_000);
    readingMs = 1_000_500; // mid-bucket: the entry is forgotten from the start of bucket 1_060
    window.check(1);
    readingMs = 1_059_999;
    assertThat(window.contains(1)).isTrue();
    readingMs = 1_060_000;
    assertThat(window.held()).isZero();
    assertThat(window.contains(1)).isFalse();
  }

  /**
   * Sparse traffic over more than two epoch periods (2^18 buckets each). "Sleeper" ids are accepted once and
   * checked again only every 150,000 buckets, so a dead entry that is never swept would read as live once its
   * wrapped expiry epoch comes round again (after 2^17 buckets). Everything is compared with the model.
   */
  @ParameterizedTest(name = "N={0}, b={1} ms, longest step {2} buckets")
  @CsvSource({"4, 1000, 9", "60, 1, 3", "1024, 1, 1", "16384, 1, 1", "16384, 1, 20000"})
  void shouldAgreeWithModelOverManyEpochWrapsOfSparseTraffic(int n, long bucketMs, int longestStep) {
    SplittableRandom random = new SplittableRandom(n * 31L + longestStep);
    long start = -3 * bucketMs - 1; // negative times too
    WindowDifferential d =
        new WindowDifferential(n * bucketMs, bucketMs, 0, CapacityPolicy.REJECT, true, start);
    long[] sleepers = new long[20];
    for (int i = 0; i < sleepers.length; i++) {
      sleepers[i] = 0x1000 + i;
      d.check(sleepers[i]);
    }
    long startBucket = Math.floorDiv(start, bucketMs);
    long lastSleeperCheck = startBucket;
    long steps = 0;
    int sleeperRounds = 0;
    while (d.model.bucket - startBucket < (1L << 19) + (1L << 17)) {
      int buckets = 1 + random.nextInt(longestStep);
      d.advance(buckets * bucketMs - random.nextInt((int) bucketMs) + random.nextInt((int) bucketMs));
      long hot = 1 + random.nextInt(6);
      switch (random.nextInt(8)) {
        case 0 -> d.check(hot, 1 + random.nextInt(2), DedupWindow.DEFAULT_REMEMBER_UNTIL);
        case 1 -> d.check(hot, 0, d.nowMs() + 1 + random.nextLong(n * bucketMs));
        case 2 -> d.contains(hot);
        case 3 -> d.lookup(hot);
        case 4 -> d.setReading(d.readingMs() - random.nextLong(4 * buckets * bucketMs)); // backwards, a little
        default -> d.check(hot);
      }
      if (d.model.bucket - lastSleeperCheck >= 150_000) {
        lastSleeperCheck = d.model.bucket;
        sleeperRounds++;
        for (long sleeper : sleepers) {
          d.check(sleeper);
        }
      }
      if (++steps % 16_384 == 0) {
        d.verifyAll();
      }
    }
    d.verifyAll();
    assertThat(sleeperRounds).isGreaterThanOrEqualTo(4);
  }

  @Test
  void shouldKeepItsPresizedTableAfterIdlingLongerThanTheWindow() {
    ManualClock clock = new ManualClock(0);
    DedupWindow w = DedupWindow.builder().window(Duration.ofMinutes(1)).clock(clock).expectedIds(100_000).build();
    w.check(1);
    long slots = w.stats().tableSlots();
    clock.advanceMs(60_000);
    w.check(2);

    assertThat(w.stats().tableSlots()).isEqualTo(slots).isGreaterThan(100_000);
    assertThat(w.held()).isEqualTo(1);
    assertThat(w.contains(1)).isFalse();
  }
}
