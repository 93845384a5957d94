package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** The rebuild rule: which offsets a newly assigned partition reads, and until when each id read is remembered. */
class RebuildRuleTest {

  private static final long NOW = 1_700_000_000_000L;
  private static final long W = 600_000;

  @Test
  void startOffset_isTheLaterOfTheStoresOffsetAndTheFirstRecentRecord() {
    assertThat(RebuildRule.startOffset(-1, 40, 100)).isEqualTo(40);   // no journal: the window's records
    assertThat(RebuildRule.startOffset(70, 40, 100)).isEqualTo(70);   // a stale journal: what it lacks
    assertThat(RebuildRule.startOffset(20, 40, 100)).isEqualTo(40);   // a journal older than the window
    assertThat(RebuildRule.startOffset(-1, 150, 100)).isEqualTo(100); // nothing recent before the commit
    assertThat(RebuildRule.startOffset(-1, -1, 100)).isEqualTo(100);  // no record that recent at all
    assertThat(RebuildRule.startOffset(130, 40, 100)).isEqualTo(100); // the journal is ahead of Kafka
  }

  @Test
  void needed_onlyWhenKafkasCommittedOffsetIsPastWhatTheStoreCovers() {
    assertThat(RebuildRule.needed(-1, 100)).isTrue();
    assertThat(RebuildRule.needed(99, 100)).isTrue();
    assertThat(RebuildRule.needed(100, 100)).isFalse();
    assertThat(RebuildRule.needed(120, 100)).isFalse(); // a rewind: the journal covers more than Kafka asks
    assertThat(RebuildRule.needed(-1, -1)).isFalse();   // no committed offset: nothing was handled
    assertThat(RebuildRule.needed(-1, 0)).isFalse();
  }

  @Test
  void rememberUntil_isAnchoredAtTheRecordTimestamp() {
    assertThat(RebuildRule.cutoffMs(NOW, W, 0)).isEqualTo(NOW - W);
    assertThat(RebuildRule.cutoffMs(NOW, W, 60_000)).isEqualTo(NOW - W - 60_000);
    assertThat(RebuildRule.rememberUntilMs(NOW - 60_000, NOW, W, 0)).isEqualTo(NOW - 60_000 + W);
    assertThat(RebuildRule.rememberUntilMs(NOW + 60_000, NOW, W, 0)).isEqualTo(NOW + W); // future: now
    assertThat(RebuildRule.rememberUntilMs(-1, NOW, W, 0)).isEqualTo(NOW + W);           // none: now
    assertThat(RebuildRule.rememberUntilMs(NOW - W, NOW, W, 0)).isEqualTo(RebuildRule.SKIP);
    // lookBack: the record was accepted up to lookBack after its timestamp; never beyond now + W.
    assertThat(RebuildRule.rememberUntilMs(NOW - W - 30_000, NOW, W, 60_000)).isEqualTo(NOW + 30_000);
    assertThat(RebuildRule.rememberUntilMs(NOW - 10_000, NOW, W, 60_000)).isEqualTo(NOW + W);
  }

  @Property
  void everyOffsetOfTheWindowNotInTheStoreIsRead(@ForAll @LongRange(min = -1, max = 1000) long store,
      @ForAll @LongRange(min = -1, max = 1000) long firstRecent, @ForAll @LongRange(min = -1, max = 1000) long committed) {
    long start = RebuildRule.startOffset(store, firstRecent, committed);
    for (long offset = 0; offset < 1000; offset++) {
      boolean inWindow = firstRecent >= 0 && offset >= firstRecent;
      boolean inStore = offset < store;
      boolean handled = offset < committed;
      boolean read = offset >= start && offset < committed;
      // Read exactly the handled records of the window that the store lacks.
      assertThat(read).as("offset %d", offset).isEqualTo(handled && inWindow && !inStore);
    }
    assertThat(RebuildRule.needed(store, committed) || start >= committed || committed < 0).isTrue();
  }

  @Property
  void anIdIsRestoredForAtMostTheWindowAndNeverForgottenBeforeTheOldOwnerWithLagWithinLookBack(
      @ForAll @LongRange(min = -1, max = 4_000_000) long ageMs, @ForAll @LongRange(min = 0, max = 1_000_000) long lagMs,
      @ForAll @LongRange(min = 0, max = 1_000_000) long lookBackMs) {
    long timestamp = NOW - ageMs;
    long until = RebuildRule.rememberUntilMs(timestamp, NOW, W, lookBackMs);
    if (until == RebuildRule.SKIP) {
      // Only an id whose memory would end (within the margin) by now is left out.
      assertThat(Math.min(timestamp, NOW) + lookBackMs + W - NOW).isLessThan(RebuildRule.MIN_REMAINING_MS);
      return;
    }
    assertThat(until).isGreaterThanOrEqualTo(NOW + RebuildRule.MIN_REMAINING_MS).isLessThanOrEqualTo(NOW + W);
    long acceptedByOldOwner = Math.min(timestamp + lagMs, NOW);
    if (lagMs <= lookBackMs) {
      assertThat(until).isGreaterThanOrEqualTo(Math.min(acceptedByOldOwner + W, NOW + W));
    } else {
      assertThat(until).isGreaterThanOrEqualTo(acceptedByOldOwner + W - (lagMs - lookBackMs));
    }
  }

  @Test
  void coverageStart_isTheCutoffUnlessRecordsOfTheWindowWereRemoved() {
    long cutoff = NOW - W;
    // Nothing removed, or what was removed is older than the first record left, which is older than the cutoff.
    assertThat(RebuildRule.coverageStartMs(cutoff, -1, 0, 100, 40, NOW - 60_000, NOW)).isEqualTo(cutoff);
    assertThat(RebuildRule.coverageStartMs(cutoff, -1, 30, 100, 40, NOW - 60_000, NOW)).isEqualTo(cutoff);
    // The first recent record is the first one left: what was removed may have been recent.
    assertThat(RebuildRule.coverageStartMs(cutoff, -1, 40, 100, 40, NOW - 60_000, NOW)).isEqualTo(NOW - 59_999);
    // ... unless the store holds everything before it.
    assertThat(RebuildRule.coverageStartMs(cutoff, 40, 40, 100, 40, NOW - 60_000, NOW)).isEqualTo(cutoff);
    assertThat(RebuildRule.coverageStartMs(cutoff, 39, 40, 100, 40, NOW - 60_000, NOW)).isEqualTo(NOW - 59_999);
    // Everything removed: nothing says when the removed records were stamped.
    assertThat(RebuildRule.coverageStartMs(cutoff, -1, 100, 100, -1, -1, NOW)).isEqualTo(NOW);
    // Records left, all older than the cutoff: what was removed is older still.
    assertThat(RebuildRule.coverageStartMs(cutoff, -1, 100, 120, -1, -1, NOW)).isEqualTo(cutoff);
    // A first record stamped in the future counts as now.
    assertThat(RebuildRule.coverageStartMs(cutoff, -1, 40, 100, 40, NOW + 60_000, NOW)).isEqualTo(NOW);
  }

  /**
   * A partition's log as a model: record {@code o} is stamped {@code stamps[o]} (non-decreasing, as broker append
   * times and in-order create times are), the records before {@code logStart} were removed, and the store holds the
   * ids of the records before {@code storeNext}. The window the rebuild vouches for must hold every id of a record
   * stamped at or after the coverage start that is inside the window: none of those may be removed and missing from
   * the store (but for a record stamped at or after now: coverage never starts later than now).
   */
  @Property
  void coverageStart_neverVouchesForARemovedRecordTheStoreLacks(
      @ForAll @Size(max = 40) List<@IntRange(min = 0, max = 120_000) Integer> gapsMs,
      @ForAll @LongRange(min = 0, max = 2 * W) long firstAgeMs,
      @ForAll @IntRange(min = 0, max = 40) int logStartPick, @ForAll @IntRange(min = -1, max = 40) int storePick) {
    int n = gapsMs.size();
    long[] stamps = new long[n];
    long t = NOW - firstAgeMs;
    for (int o = 0; o < n; o++) {
      t += gapsMs.get(o);
      stamps[o] = t;
    }
    int logStart = Math.min(logStartPick, n);
    long storeNext = Math.min(storePick, n);
    long cutoff = RebuildRule.cutoffMs(NOW, W, 0);
    int firstRecent = -1;
    for (int o = logStart; o < n; o++) {
      if (stamps[o] >= cutoff) {
        firstRecent = o;
        break;
      }
    }
    long coverage = RebuildRule.coverageStartMs(cutoff, storeNext, logStart, n, firstRecent,
        firstRecent < 0 ? -1 : stamps[firstRecent], NOW);

    assertThat(coverage).isBetween(cutoff, NOW);
    boolean lostOne = false;
    for (int o = 0; o < logStart; o++) {
      boolean heldByStore = o < storeNext;
      // Coverage never goes past now: a removed record stamped now or later is the rule's stated blind spot.
      boolean vouchedFor = stamps[o] < NOW && stamps[o] >= coverage;
      assertThat(heldByStore || !vouchedFor).as("removed record %d stamped %d", o, stamps[o]).isTrue();
      lostOne |= !heldByStore && stamps[o] >= cutoff;
    }
    if (logStart == 0 || storeNext >= logStart) {
      // Nothing the store lacks was removed: the window covers all of it.
      assertThat(coverage).isEqualTo(cutoff);
    }
    if (lostOne) {
      assertThat(RebuildRule.lostRecentRecords(storeNext, logStart, n, firstRecent)).isTrue();
    }
  }
}
