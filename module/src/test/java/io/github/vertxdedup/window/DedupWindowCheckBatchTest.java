package io.github.vertxdedup.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/**
 * {@link DedupWindow#checkBatch} must answer exactly as single {@link DedupWindow#check(long)} calls at the same
 * instant: checked against a twin window fed one id at a time.
 */
class DedupWindowCheckBatchTest {

  private long readingMs;

  private DedupWindow window(long maxIds, CapacityPolicy policy) {
    DedupWindow.Builder b = DedupWindow.builder()
        .window(Duration.ofMillis(600))
        .bucket(Duration.ofMillis(10))
        .clock(() -> readingMs)
        .capacityPolicy(policy);
    if (maxIds > 0) {
      b.maxIds(maxIds);
    }
    return b.build();
  }

  @Property(tries = 50)
  void shouldAnswerLikeSingleChecks(@ForAll long seed, @ForAll @IntRange(min = 8, max = 5_000) int idSpace,
      @ForAll @LongRange(min = 0, max = 2_000) long maxIds) {
    CapacityPolicy policy = maxIds > 0 ? CapacityPolicy.EVICT_OLDEST : CapacityPolicy.REJECT;
    readingMs = 0;
    DedupWindow batched = window(maxIds, policy);
    DedupWindow single = window(maxIds, policy);
    SplittableRandom r = new SplittableRandom(seed);
    long[] ids = new long[300];
    WindowVerdict[] verdicts = new WindowVerdict[300];
    for (int round = 0; round < 400; round++) {
      readingMs += r.nextInt(4) == 0 ? r.nextInt(700) : r.nextInt(15);
      int n = 1 + r.nextInt(ids.length);
      for (int i = 0; i < n; i++) {
        ids[i] = 1 + r.nextInt(idSpace);
      }
      int offset = r.nextInt(ids.length - n + 1);
      long[] shifted = new long[ids.length];
      System.arraycopy(ids, 0, shifted, offset, n);
      Arrays.fill(verdicts, null);
      int accepted = batched.checkBatch(shifted, offset, n, verdicts);
      int acceptedSingly = 0;
      for (int i = 0; i < n; i++) {
        WindowVerdict expected = single.check(ids[i]);
        assertThat(verdicts[offset + i]).as("round %d, event %d of %d, id %d", round, i, n, ids[i])
            .isEqualTo(expected);
        if (expected == WindowVerdict.ACCEPTED) {
          acceptedSingly++;
        }
      }
      assertThat(accepted).isEqualTo(acceptedSingly);
      assertThat(batched.held()).isEqualTo(single.held());
    }
    assertThat(answers(batched.stats())).isEqualTo(answers(single.stats()));
  }

  /**
   * The counters of a window's answers, without the table's size: a batch pays its sweep work before its probes,
   * where single checks pay it between them, so the two may delete a dead entry at different moments and find the
   * table full (and double it) at different moments.
   */
  private static WindowStats answers(WindowStats s) {
    return new WindowStats(s.accepted(), s.duplicates(), s.conflicts(), s.held(), s.expired(), s.earlyEvictions(),
        s.rejected(), 0, 0);
  }

  /**
   * Batches as long as Kafka polls, over a table that starts at its smallest size and doubles several times, with time
   * moving a few buckets per batch (sweep work owed) and now and then most of a window (the catch-up sweep): a batch
   * pays its sweep work before its first probe, and a growth or a full sweep may fall between an id's read-ahead and
   * its probe; none of that may change a verdict or a counter.
   */
  @Property(tries = 30)
  void shouldAnswerLikeSingleChecksAcrossSweepsAndGrowth(@ForAll long seed,
      @ForAll @IntRange(min = 100, max = 2_000) int maxBatch) {
    readingMs = 0;
    DedupWindow batched = window(0, CapacityPolicy.REJECT);
    DedupWindow single = window(0, CapacityPolicy.REJECT);
    SplittableRandom r = new SplittableRandom(seed);
    long[] ids = new long[maxBatch];
    WindowVerdict[] verdicts = new WindowVerdict[maxBatch];
    long nextFresh = 1;
    int capacityChanges = 0;
    long swept = 0;
    for (int round = 0; round < 120; round++) {
      readingMs += r.nextInt(10) == 0 ? 300 + r.nextInt(250) : r.nextInt(25);
      int n = 1 + r.nextInt(maxBatch);
      for (int i = 0; i < n; i++) {
        // One event in ten repeats a recent id (the workload's redeliveries); the rest are new.
        long n0 = r.nextInt(10) == 0 && nextFresh > 1 ? Math.max(1, nextFresh - 1 - r.nextInt(4 * maxBatch))
            : nextFresh++;
        ids[i] = n0 * 0x9E3779B97F4A7C15L;
      }
      long slotsBefore = batched.stats().tableSlots();
      long deletedBefore = batched.table().deletedEntries;
      Arrays.fill(verdicts, null);
      int accepted = batched.checkBatch(ids, 0, n, verdicts);
      int acceptedSingly = 0;
      for (int i = 0; i < n; i++) {
        WindowVerdict expected = single.check(ids[i]);
        assertThat(verdicts[i]).as("round %d, event %d of %d", round, i, n).isEqualTo(expected);
        if (expected == WindowVerdict.ACCEPTED) {
          acceptedSingly++;
        }
      }
      assertThat(accepted).isEqualTo(acceptedSingly);
      assertThat(answers(batched.stats())).as("round %d", round).isEqualTo(answers(single.stats()));
      capacityChanges += batched.stats().tableSlots() != slotsBefore ? 1 : 0;
      swept += batched.table().deletedEntries - deletedBefore;
    }
    assertThat(batched.liveEntriesInTable()).isEqualTo(batched.held());
    assertThat(single.liveEntriesInTable()).isEqualTo(single.held());
    assertThat(capacityChanges).as("the table must have grown (or been replaced) during the run").isPositive();
    assertThat(swept).as("batches must have deleted dead entries").isPositive();
  }

  @Test
  void shouldAnswerRepeatInsideBatchAsDuplicate() {
    DedupWindow w = window(0, CapacityPolicy.REJECT);
    WindowVerdict[] out = new WindowVerdict[4];
    assertThat(w.checkBatch(new long[] {5, 6, 5, 5}, 0, 4, out)).isEqualTo(2);
    assertThat(out).containsExactly(WindowVerdict.ACCEPTED, WindowVerdict.ACCEPTED, WindowVerdict.DUPLICATE, WindowVerdict.DUPLICATE);
  }

  @Test
  void shouldRejectZeroFingerprintBeforeRecordingAnything() {
    DedupWindow w = window(0, CapacityPolicy.REJECT);
    assertThatThrownBy(() -> w.checkBatch(new long[] {5, 0}, 0, 2, new WindowVerdict[2]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fingerprints[1]");
    assertThat(w.contains(5)).isFalse();
  }

  @Test
  void shouldRecordEventsBeforeTheRefusedOneWhenFullUnderReject() {
    DedupWindow w = window(2, CapacityPolicy.REJECT);
    WindowVerdict[] out = new WindowVerdict[4];
    assertThatThrownBy(() -> w.checkBatch(new long[] {1, 2, 1, 3}, 0, 4, out))
        .isInstanceOf(WindowFullException.class)
        .hasMessageContaining("maxIds=2");
    assertThat(out).containsExactly(WindowVerdict.ACCEPTED, WindowVerdict.ACCEPTED, WindowVerdict.DUPLICATE, null);
    assertThat(w.contains(3)).isFalse();
    assertThat(w.held()).isEqualTo(2);
  }

  @Test
  void shouldRejectRangesOutsideTheArrays() {
    DedupWindow w = window(0, CapacityPolicy.REJECT);
    assertThatThrownBy(() -> w.checkBatch(new long[2], 1, 2, new WindowVerdict[3]))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> w.checkBatch(new long[] {1, 2, 3}, 0, 3, new WindowVerdict[2]))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void prefetch_recordsNothingAndChangesNoAnswer() {
    DedupWindow w = window(0, CapacityPolicy.EVICT_OLDEST);
    assertThat(w.check(7L)).isEqualTo(WindowVerdict.ACCEPTED);
    for (long fp = -5; fp <= 5; fp++) {
      w.prefetch(fp); // 0 and unknown ids included: a read, nothing more
    }
    assertThat(w.lookup(3L)).isNull();
    assertThat(w.stats().held()).isEqualTo(1);
    assertThat(w.check(7L)).isEqualTo(WindowVerdict.DUPLICATE);
    assertThat(w.check(3L)).isEqualTo(WindowVerdict.ACCEPTED);
  }
}
