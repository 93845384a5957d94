package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupOptions;
import org.junit.jupiter.api.Test;

/**
 * The takeover's decision from what it learned: a first owner, a clean release, a journal handed over only when its
 * file names the previous owner's term, and a counter that went back below an epoch the deployment had read, which is treated as a loss whatever the release map and the
 * journal's file say (neither can vouch for the newest epoch when the counter's own history is gone).
 */
class OwnerTakeoverTest {

  private static final long NOW = 1_700_000_000_000L;
  private static final DedupOptions OPTIONS = new DedupOptions().setAddress("t").setWindowMs(60_000)
      .setBucketMs(1_000).validate();

  @Test
  void shouldTrustAFirstOwnerAndAHandedOverJournal() {
    OwnerTakeover first = new OwnerTakeover(1, OwnerEpochFile.NO_EPOCH, OwnerEpochFile.NO_EPOCH,
        OwnerEpochFile.NO_TERM, OwnerEpochFile.Contents.NONE, 0);
    assertThat(first.previous()).isZero();
    assertThat(first.clean()).isTrue();
    assertThat(first.handedOver(false)).isTrue();

    OwnerTakeover next = new OwnerTakeover(4, 3, 3, 77, journal(3, 77), 0);
    assertThat(next.previous()).isEqualTo(3);
    assertThat(next.clean()).isTrue();
    assertThat(next.handedOver(true)).isTrue();
    assertThat(next.handedOver(false)).as("no journal directory: nothing handed over").isFalse();
    OwnerTerm t = next.term(NOW, OPTIONS, true, "o", () -> 0);
    assertThat(t.journalHandedOver()).isTrue();
    assertThat(t.unvouchedUntilMs()).isEqualTo(OwnerEpochFile.NO_MARK);
  }

  @Test
  void shouldHandOverOnlyAJournalWhoseFileNamesThePreviousOwnersTerm() {
    // After a restart of the whole cluster epochs start again at 1: a stale file of an earlier epoch 3 matches the
    // previous epoch by chance, but not the term the cluster recorded for it.
    assertThat(new OwnerTakeover(4, 3, 3, 77, journal(3, 12), 0).handedOver(true)).isFalse();
    // A file of an earlier build names no term, nor does a record missing its term: "no term" never matches.
    assertThat(new OwnerTakeover(4, 3, 3, 77, journal(3, OwnerEpochFile.NO_TERM), 0).handedOver(true)).isFalse();
    assertThat(new OwnerTakeover(4, 3, 3, OwnerEpochFile.NO_TERM, journal(3, OwnerEpochFile.NO_TERM), 0)
        .handedOver(true)).isFalse();
    // No record of the previous owner's deployment (it never deployed, or the cluster lost the record).
    assertThat(new OwnerTakeover(4, 3, OwnerEpochFile.NO_EPOCH, OwnerEpochFile.NO_TERM, journal(3, 77), 0)
        .handedOver(true)).isFalse();
    // The record names an older deployment than the previous epoch's.
    assertThat(new OwnerTakeover(4, 3, 2, 77, journal(3, 77), 0).handedOver(true)).isFalse();
    assertThat(new OwnerTakeover(4, 3, 3, 77, journal(3, 77), 0).handedOver(true)).isTrue();
  }

  private static OwnerEpochFile.Contents journal(long epoch, long termId) {
    return new OwnerEpochFile.Contents(epoch, OwnerEpochFile.NO_MARK, termId);
  }

  @Test
  void shouldTreatACounterThatWentBackAsALossWhateverTheReleaseAndTheJournalSay() {
    // The counter read 1 again after this deployment had read 3; it was moved past 3. The release map and the
    // journal's file both name epoch 3, yet the newest owner may have been a later one this deployment never saw.
    OwnerTakeover k = new OwnerTakeover(4, 3, 3, 77, journal(3, 77), 3);
    assertThat(k.counterWentBack()).isTrue();
    assertThat(k.previous()).isEqualTo(3);
    assertThat(k.clean()).isFalse();
    assertThat(k.handedOver(true)).isFalse();
    OwnerTerm t = k.term(NOW, OPTIONS, true, "o", () -> 0);
    assertThat(t.previousEpoch()).isEqualTo(3);
    assertThat(t.journalHandedOver()).isFalse();
    assertThat(t.unvouchedUntilMs()).isEqualTo(NOW + 60_000);
  }
}
