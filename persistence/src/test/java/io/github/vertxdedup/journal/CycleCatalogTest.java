package io.github.vertxdedup.journal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CycleCatalogTest {

  private final CycleCatalog catalog = new CycleCatalog();

  private void cycle(int c, long maxExpiry, boolean snapshotComplete) {
    catalog.present(c);
    catalog.exact(c, maxExpiry);
    if (snapshotComplete) {
      catalog.snapshotComplete(c);
    }
  }

  @Test
  void shouldStartNowhereInAnEmptyJournal() {
    assertThat(catalog.replayStart(100)).isEqualTo(CycleCatalog.NONE);
  }

  @Test
  void shouldStartAtTheFirstCycleThatMayHoldALiveEntry() {
    cycle(10, 50, true);
    cycle(11, 150, true);
    cycle(12, 60, true);
    cycle(13, RecordFormat.NO_EXPIRY, true);
    assertThat(catalog.replayStart(100)).isEqualTo(11);
    assertThat(catalog.replayStart(150)).as("expired at exactly its max expiry").isEqualTo(13);
  }

  @Test
  void shouldNeverStartPastTheNewestCycleWhichHoldsTheLatestOffsets() {
    cycle(10, 50, true);
    cycle(11, 60, true);
    assertThat(catalog.replayStart(1_000)).isEqualTo(11);
  }

  @Test
  void shouldTreatAnUnknownMaxExpiryAsLive() {
    cycle(10, 50, true);
    catalog.present(11);
    catalog.snapshotComplete(11);
    cycle(12, 60, true);
    assertThat(catalog.replayStart(1_000)).isEqualTo(11);
  }

  @Test
  void shouldStepBackToACycleWithACompleteSnapshot() {
    cycle(10, 50, true);
    cycle(11, 50, false);
    cycle(12, 500, false);
    assertThat(catalog.replayStart(100)).isEqualTo(10);
  }

  @Test
  void shouldTakeTheLatestKnownSummaryAndIgnoreUnknownOnes() {
    catalog.present(10);
    catalog.summary(10, RecordFormat.UNKNOWN_EXPIRY);
    catalog.summary(10, 70);
    catalog.summary(10, 40);
    assertThat(catalog.maxExpiry(10)).isEqualTo(70);
    catalog.summary(99, 70);
    assertThat(catalog.list()).containsExactly(10);
  }
}
