package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
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
}
