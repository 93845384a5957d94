package io.github.vertxdedup.journal.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.journal.ClaimEntry;
import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.JournalOptions;
import io.github.vertxdedup.journal.JournalVisitor;
import io.github.vertxdedup.journal.OffsetCommit;
import io.github.vertxdedup.journal.RollSnapshotSource;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.time.ManualClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a replay means for the owner's recovery: expired entries skipped, commits matched with their claim, open
 * claims handed back until their lease ends, format-version-1 claims decoded, offsets and the start of memory.
 */
class RecoveryTest {

  private static final long NOW = 1_700_000_000_000L;
  private static final long W = 60_000;

  @TempDir
  Path dir;

  private final List<long[]> live = new ArrayList<>();
  private final Recovery recovery = new Recovery(NOW, W, (fp, payload, firstSeen, expires) ->
      live.add(new long[] {fp, payload, firstSeen, expires}));

  private List<ClaimEntry> openClaims(long nowMs) {
    List<ClaimEntry> open = new ArrayList<>();
    recovery.forEachOpenClaim(nowMs, open::add);
    return open;
  }

  @Test
  void shouldSkipExpiredAcceptsAndHandOverLiveOnesForTheIdAndItsKey() {
    recovery.onAccept(1, 0, 0, NOW - W, NOW);           // expired exactly now
    recovery.onAccept(2, 20, 0xAB, NOW - 10, NOW + 50);  // live, with a key
    recovery.onAccept(3, 0, 0, NOW - 5, NOW + 1);        // live, no key
    assertThat(live).containsExactly(
        new long[] {2, 0xAB, NOW - 10, NOW + 50},
        new long[] {20, 0xAB, NOW - 10, NOW + 50},
        new long[] {3, 0, NOW - 5, NOW + 1});
  }

  @Test
  void shouldTurnACommitIntoALiveEntryWithItsClaimsKeyAndPayloadAndItsFirstSeenTime() {
    // Default remember-until: first seen at the commit, expiry - W.
    recovery.onClaim(ClaimEntry.of(1, 10, 0x11, 7, NOW - 500, NOW + 1_000, ClaimEntry.NOT_RECORDED, "c"));
    recovery.onCommit(1, 7, NOW + W - 100);
    // Explicit remember-until: first seen at the claim (the record has no commit time).
    recovery.onClaim(ClaimEntry.of(2, 0, 0x22, 8, NOW - 400, NOW + 1_000, NOW + 5_000, "c"));
    recovery.onCommit(2, 8, NOW + 5_000);
    // An explicit remember-until before the claim time: first seen never after the expiry.
    recovery.onClaim(ClaimEntry.of(3, 0, 0, 9, NOW + 300, NOW + 1_000, NOW + 200, ""));
    recovery.onCommit(3, 9, NOW + 200);
    // A commit whose claim is not in the replayed cycles: no key, no payload hash.
    recovery.onCommit(4, 10, NOW + 900);
    // An expired commit still settles its claim.
    recovery.onClaim(ClaimEntry.of(5, 0, 0, 11, NOW - W, NOW + 1_000, ClaimEntry.NOT_RECORDED, ""));
    recovery.onCommit(5, 11, NOW - 1);

    assertThat(live).containsExactly(
        new long[] {1, 0x11, NOW - 100, NOW + W - 100},
        new long[] {10, 0x11, NOW - 100, NOW + W - 100},
        new long[] {2, 0x22, NOW - 400, NOW + 5_000},
        new long[] {3, 0, NOW + 200, NOW + 200},
        new long[] {4, 0, NOW + 900 - W, NOW + 900});
    assertThat(openClaims(NOW)).isEmpty();
  }

  @Test
  void shouldHandBackTheLatestClaimLeftOpenUntilItsLeaseEndsAndNeverAsACommit() {
    recovery.onClaim(ClaimEntry.of(1, 10, 0x11, 7, NOW - 500, NOW + 1_000, ClaimEntry.NOT_RECORDED, "old"));
    recovery.onClaim(ClaimEntry.of(1, 10, 0x11, 8, NOW - 100, NOW + 2_000, NOW + 9_000, "worker-1"));
    recovery.onClaim(ClaimEntry.of(2, 0, 0, 9, NOW - 100, NOW + 2_000, ClaimEntry.NOT_RECORDED, ""));
    recovery.onRelease(2, 9);

    assertThat(live).isEmpty();
    assertThat(openClaims(NOW)).containsExactly(
        ClaimEntry.of(1, 10, 0x11, 8, NOW - 100, NOW + 2_000, NOW + 9_000, "worker-1"));
    assertThat(openClaims(NOW + 2_000)).as("the lease has ended").isEmpty();
  }

  @Test
  void shouldReadAFormat1ClaimFromItsClaimerTextAndNameNobody() {
    String text = ClaimerTextV1.encode(NOW - 300, 0xBEEF, ClaimEntry.NOT_RECORDED);
    recovery.onClaim(new ClaimEntry(1, 10, 0, 7, ClaimEntry.NOT_RECORDED, NOW + 1_000, ClaimEntry.NOT_RECORDED,
        text, 1));
    // Text that is not of that form: claimed at the lease end or now, whichever is earlier; no payload hash.
    recovery.onClaim(new ClaimEntry(2, 0, 0, 8, ClaimEntry.NOT_RECORDED, NOW + 1_000, ClaimEntry.NOT_RECORDED,
        "worker-7", 1));

    assertThat(openClaims(NOW)).containsExactlyInAnyOrder(
        ClaimEntry.of(1, 10, 0xBEEF, 7, NOW - 300, NOW + 1_000, ClaimEntry.NOT_RECORDED, ClaimEntry.NO_CLAIMER),
        ClaimEntry.of(2, 0, 0, 8, NOW, NOW + 1_000, ClaimEntry.NOT_RECORDED, ClaimEntry.NO_CLAIMER));
  }

  @Test
  void shouldKeepTheHighestOffsetAndBeginMemoryAtTheEarliestEntryOrFirstOpen() {
    assertThat(recovery.memoryBeginsMs(Recovery.NO_MEMORY, NOW)).isEqualTo(Recovery.NO_MEMORY);
    assertThat(recovery.memoryBeginsMs(NOW + 5, NOW)).as("never after now").isEqualTo(NOW);

    recovery.onOffsetCommit("orders", 0, 10);
    recovery.onOffsetCommit("orders", 0, 7);
    recovery.onOffsetCommit("orders", 1, 3);
    recovery.onAccept(1, 0, 0, NOW - 2_000, NOW - 1);  // expired, yet recorded since then
    recovery.onClaim(ClaimEntry.of(2, 0, 0, 7, NOW - 3_000, NOW - 1, ClaimEntry.NOT_RECORDED, ""));

    assertThat(recovery.offsets().toList()).containsExactlyInAnyOrder(
        new OffsetCommit("orders", 0, 10), new OffsetCommit("orders", 1, 3));
    assertThat(recovery.memoryBeginsMs(NOW - 1_000, NOW)).isEqualTo(NOW - 3_000);
    assertThat(recovery.memoryBeginsMs(NOW - 4_000, NOW)).isEqualTo(NOW - 4_000);
  }

  @Test
  void shouldRecoverWhatAJournalHoldsAfterARoll() {
    ManualClock clock = new ManualClock(NOW);
    JournalOptions options = new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE)
        .setRollCycle(Duration.ofMinutes(1));
    CarriedState carried = new CarriedState(clock);
    options.setRollSnapshotSource(carried);
    try (Journal j = Journal.open(dir, options)) {
      j.replay(new JournalVisitor() {
      });
      j.appendAccept(1, 10, 0, NOW, NOW + W);
      ClaimEntry open = ClaimEntry.of(2, 0, 0x22, 7, NOW, NOW + 10 * W, ClaimEntry.NOT_RECORDED, "worker-1");
      j.appendClaim(open);
      carried.claimOpened(open);
      j.appendOffsetCommit("orders", 0, 5);
      carried.offsetCommitted(new OffsetCommit("orders", 0, 5));
      clock.advanceMs(2 * 60_000);  // a later cycle: it starts with the open claim and the offset
      j.appendAccept(3, 0, 0, clock.nowMs(), clock.nowMs() + W);
    }
    long now = clock.nowMs();
    assertThat(carried.openToken(2)).isEqualTo(7);
    List<long[]> entries = new ArrayList<>();
    Recovery r = new Recovery(now, W, (fp, payload, firstSeen, expires) -> entries.add(new long[] {fp, expires}));
    try (Journal j = Journal.open(dir, options.setRollSnapshotSource(RollSnapshotSource.NONE))) {
      j.replay(r);
    }
    assertThat(entries).as("id 1 expired during the two minutes").containsExactly(new long[] {3, now + W});
    List<ClaimEntry> claims = new ArrayList<>();
    r.forEachOpenClaim(now, claims::add);
    assertThat(claims).containsExactly(
        ClaimEntry.of(2, 0, 0x22, 7, NOW, NOW + 10 * W, ClaimEntry.NOT_RECORDED, "worker-1"));
    assertThat(r.offsets().get("orders", 0)).isEqualTo(5);
  }
}
