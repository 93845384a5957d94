package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.impl.journal.ChroniclePartitionJournal;
import io.github.vertxdedup.impl.journal.NoJournal;
import io.github.vertxdedup.impl.protocol.ParsedEvent;
import io.github.vertxdedup.impl.protocol.RequestDecoder;
import io.github.vertxdedup.impl.protocol.RequestFailure;
import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Claim tokens name their lease end, so that a repeated commit finds its committed claim in the lease-ordered queue
 * (see {@link ClaimTokens}, and {@link Claims}, "Committed claims"): the cases that queue must get right, and the
 * claims it cannot locate (restored from the journal, out of lease order), which keep the old map.
 */
class ClaimTokenTest {

  private static final long T0 = 1_700_000_000_000L;
  private static final DedupOptions OPTIONS = new DedupOptions().setWindowMs(3_600_000).setBucketMs(60_000)
      .setLeaseMs(30_000).validate();

  private final ManualClock clock = new ManualClock(T0);
  private final PartitionCore core = new PartitionCore(OPTIONS, 0, clock, NoJournal.INSTANCE);
  private final RequestDecoder decoder = new RequestDecoder(OPTIONS, 0);

  @Test
  void shouldIssueSixteenHexDigitTokensThatDifferForOneIdAndOneLeaseEnd() {
    Set<String> seen = new HashSet<>();
    // Claim and release one id 1,000 times in the same millisecond: every lease ends at the same instant.
    for (int i = 0; i < 1_000; i++) {
      String token = claim("a", 0).claimToken();
      assertThat(token).hasSize(16).matches("[0-9a-f]{16}");
      assertThat(seen.add(token)).as("token %s issued twice", token).isTrue();
      release("a", token);
    }
    // The journal keeps a token as a number; the text is that number's hex digits.
    String token = claim("b", 0).claimToken();
    assertThat(ChroniclePartitionJournal.tokenText(ChroniclePartitionJournal.tokenValue(token))).isEqualTo(token);
  }

  @Test
  void shouldLetGoOfCommittedAndReleasedClaimsWhileTheirLeaseRuns() {
    List<String> tokens = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      tokens.add(claim("id-" + i, 0).claimToken());
    }
    assertThat(core.claims().queuedClaimObjects()).as("live claims may lapse: kept").isEqualTo(300);
    for (int i = 0; i < 200; i++) {
      commit("id-" + i, tokens.get(i));
    }
    for (int i = 200; i < 250; i++) {
      release("id-" + i, tokens.get(i));
    }

    assertThat(core.claims().queuedClaimObjects()).as("only the 50 live claims").isEqualTo(50);
    assertThat(commit("id-7", tokens.get(7)).verdict()).as("a repeat is still answered").isEqualTo(
        DedupVerdict.COMMITTED);
    assertConflict(() -> commit("id-207", tokens.get(207)), "a released claim is not committed by a repeat");
    assertConflict(() -> commit("id-7", tokens.get(7).toUpperCase(java.util.Locale.ROOT)),
        "the token's text must be the one issued");
    clock.advanceMs(30_000);
    assertThat(core.sweepExpiredLeases()).as("the 50 live claims lapse").isEqualTo(50);
    assertThat(core.claims().queuedClaimObjects()).isZero();
    assertConflict(() -> commit("id-7", tokens.get(7)), "lease over");
  }

  @Test
  void shouldAnswerARepeatedCommitFromTheLeaseQueueUntilTheLeaseEnds() {
    String token = claim("a", 0).claimToken();
    // Other claims with the same lease end and with later ones around it, so the search has neighbours to skip.
    for (int i = 0; i < 50; i++) {
      claim("same-" + i, 0);
    }
    clock.advanceMs(1);
    for (int i = 0; i < 50; i++) {
      claim("later-" + i, 0);
    }
    assertThat(commit("a", token).verdict()).isEqualTo(DedupVerdict.COMMITTED);
    assertThat(commit("a", token).verdict()).as("repeated").isEqualTo(DedupVerdict.COMMITTED);
    assertConflict(() -> commit("a", flipLastDigit(token)), "another token");
    assertConflict(() -> commit("same-0", token), "the token of another id");
    assertConflict(() -> commit("a", "not-a-token"), "not hex");
    assertConflict(() -> release("a", token), "a committed claim cannot be released");
    clock.setMs(T0 + 30_000);
    assertConflict(() -> commit("a", token), "the committed claim's lease has ended");
  }

  @Test
  void shouldRefuseTheTokenOfAReleasedClaimAfterTheIdWasClaimedAgainAndCommitted() {
    String first = claim("a", 0).claimToken();
    release("a", first);
    String second = claim("a", 0).claimToken();
    assertThat(second).isNotEqualTo(first);
    assertConflict(() -> commit("a", first), "released, and the id is claimed by another token");
    assertThat(commit("a", second).verdict()).isEqualTo(DedupVerdict.COMMITTED);
    assertConflict(() -> commit("a", first), "released, the id committed by another token");
    assertThat(commit("a", second).verdict()).isEqualTo(DedupVerdict.COMMITTED);
  }

  @Test
  void shouldNeverGiveAReleasedClaimsTokenToANewClaimOfTheSameIdWithTheSameLeaseEnd() {
    // A per-request lease ending where an earlier claim's did, after more claims than the sequence number has values:
    // a token made of lease end and sequence would repeat here, so such claims get random tokens.
    String stale = claim("x", 20_000).claimToken();
    release("x", stale);
    for (int i = 0; i < 1 << ClaimTokens.TOKEN_SEQUENCE_BITS; i++) {
      if (i % 1_000 == 999) {
        clock.advanceMs(1);
      }
      release("f", claim("f", 1).claimToken());
    }
    clock.setMs(T0 + 10_000);
    String fresh = claim("x", 10_000).claimToken();
    assertThat(fresh).isNotEqualTo(stale);
    assertConflict(() -> release("x", stale), "the stale holder cannot release the new claim");
    assertConflict(() -> commit("x", stale), "nor commit it");
    assertThat(commit("x", fresh).verdict()).isEqualTo(DedupVerdict.COMMITTED);
  }

  @Test
  void shouldAnswerARepeatedCommitAfterTheIdsRememberUntilHasPassed() {
    // Remembered until T0 + 5 s, while the lease runs to T0 + 30 s.
    String token = core.claim(decode(new JsonObject().put("id", "a").put("rememberUntilMs", T0 + 5_000),
        DedupAction.CLAIM)).claimToken();
    assertThat(commit("a", token).verdict()).isEqualTo(DedupVerdict.COMMITTED);
    clock.advanceMs(10_000);
    assertThat(core.lookup(decode(new JsonObject().put("id", "a"), DedupAction.LOOKUP)).state())
        .as("forgotten").isEqualTo(io.github.vertxdedup.EntryState.ABSENT);
    assertThat(commit("a", token).verdict()).as("the commit took effect").isEqualTo(DedupVerdict.COMMITTED);
    assertConflict(() -> commit("a", flipLastDigit(token)), "another token");
    clock.advanceMs(20_000);
    assertConflict(() -> commit("a", token), "the lease has ended");
  }

  @Test
  void shouldRefuseTheTokenOfALapsedClaim() {
    String token = claim("a", 0).claimToken();
    clock.advanceMs(30_000);
    assertConflict(() -> commit("a", token), "lease ended before the commit");
    assertThat(core.sweepExpiredLeases()).as("noticed by the commit already").isZero();
    assertConflict(() -> commit("a", token), "still");
  }

  @Test
  void shouldAnswerARepeatedCommitOfAClaimOutOfLeaseOrder() {
    claim("long", 0);
    // A shorter per-request lease ends before the last claim's: the claim goes to the heap, not the queue.
    String token = claim("short", 5_000).claimToken();
    assertThat(commit("short", token).verdict()).isEqualTo(DedupVerdict.COMMITTED);
    assertThat(commit("short", token).verdict()).as("repeated").isEqualTo(DedupVerdict.COMMITTED);
    clock.advanceMs(5_000);
    assertThat(core.sweepExpiredLeases()).as("a committed claim is not a lapsed one").isZero();
    assertConflict(() -> commit("short", token), "its lease has ended");
  }

  @Test
  void shouldAnswerARepeatedCommitOfARestoredClaim() {
    // A claim of an earlier run, as the journal replays it: its token counts its lease end from another instant.
    ParsedEvent e = decode(new JsonObject().put("id", "a"), DedupAction.CLAIM);
    core.restoreClaim(e.idFp, 0, DedupWindow.NO_PAYLOAD_HASH, "8000000000000007", T0 - 1_000, T0 + 29_000,
        DedupWindow.DEFAULT_REMEMBER_UNTIL, null);
    assertThat(commit("a", "8000000000000007").verdict()).isEqualTo(DedupVerdict.COMMITTED);
    assertThat(commit("a", "8000000000000007").verdict()).as("repeated").isEqualTo(DedupVerdict.COMMITTED);
    clock.advanceMs(29_000);
    assertThat(core.sweepExpiredLeases()).isZero();
    assertConflict(() -> commit("a", "8000000000000007"), "its lease has ended");
  }

  @Test
  void shouldFindCommittedClaimsAcrossTheQueueWrappingAndGrowing() {
    ClaimQueue q = new ClaimQueue();
    // Wrap the ring: fill, drain half, refill past its length so that it grows while wrapped.
    long lease = 1_000;
    long[] seq = new long[40];
    for (int i = 0; i < 12; i++) {
      seq[i] = q.addLast(claimAt(i, lease + i / 3));
    }
    for (int i = 0; i < 8; i++) {
      assertThat(q.pollFirst().idFp).isEqualTo(i);
    }
    for (int i = 12; i < 40; i++) {
      seq[i] = q.addLast(claimAt(i, lease + i / 3));
    }
    assertThat(q.size()).isEqualTo(32);
    assertThat(q.firstLeaseEndMs()).isEqualTo(lease + 8 / 3);
    assertThat(q.lastLeaseEndMs()).isEqualTo(lease + 39 / 3);
    for (int i = 8; i < 40; i++) {
      assertThat(q.findCommitted(lease + i / 3, i, i * 31L)).as("claim %s, live", i).isFalse();
      q.detach(seq[i], i % 2 == 0, false);
    }
    for (int i = 8; i < 40; i++) {
      assertThat(q.findCommitted(lease + i / 3, i, i * 31L)).as("claim %s", i).isEqualTo(i % 2 == 0);
    }
    assertThat(q.claimsHeld()).as("detached entries let their claims go").isZero();
    q.detach(seq[3], true, false); // polled already: ignored
    assertThat(q.findCommitted(lease + 1, 3, 3 * 31L)).as("polled already").isFalse();
    assertThat(q.findCommitted(lease + 5, 16, 17L)).as("wrong token").isFalse();
    assertThat(q.findCommitted(lease + 5, 17, 16 * 31L)).as("wrong id").isFalse();
    assertThat(q.findCommitted(lease + 100, 16, 16 * 31L)).as("no such lease end").isFalse();
    for (int i = 8; i < 40; i++) {
      assertThat(q.pollFirst()).as("entry %s holds no claim", i).isNull();
    }
    assertThat(q.isEmpty()).isTrue();
    assertThat(q.firstLeaseEndMs()).isEqualTo(Long.MAX_VALUE);
    assertThat(q.lastLeaseEndMs()).isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void shouldKeepTheClaimObjectOfAnEntryOnlyWhileTheSweepNeedsIt() {
    ClaimQueue q = new ClaimQueue();
    Claim live = claimAt(1, 1_000);
    Claim committed = claimAt(2, 1_000);
    Claim kept = claimAt(3, 1_001);
    q.addLast(live);
    long s2 = q.addLast(committed);
    long s3 = q.addLast(kept);
    q.detach(s2, true, false);
    q.detach(s3, true, true);

    assertThat(q.claimsHeld()).isEqualTo(2);
    assertThat(q.pollFirst()).as("a live claim lapses at its lease end").isSameAs(live);
    assertThat(q.pollFirst()).as("a committed claim is gone").isNull();
    assertThat(q.pollFirst()).as("kept for the sweep").isSameAs(kept);
  }

  private static Claim claimAt(long idFp, long leaseEndMs) {
    return new Claim(idFp, 0, 0, DedupWindow.DEFAULT_REMEMBER_UNTIL, "t" + idFp, idFp * 31L, true, 0, leaseEndMs,
        null);
  }

  private DedupResult claim(String id, long leaseMs) {
    JsonObject body = new JsonObject().put("id", id);
    if (leaseMs != 0) {
      body.put("leaseMs", leaseMs);
    }
    return core.claim(decode(body, DedupAction.CLAIM));
  }

  private DedupResult commit(String id, String token) {
    return core.commit(decode(new JsonObject().put("id", id).put("claimToken", token), DedupAction.COMMIT));
  }

  private DedupResult release(String id, String token) {
    return core.release(decode(new JsonObject().put("id", id).put("claimToken", token), DedupAction.RELEASE));
  }

  private ParsedEvent decode(JsonObject body, DedupAction action) {
    return decoder.decode(body, action, clock.nowMs(), -1);
  }

  private static String flipLastDigit(String token) {
    char last = token.charAt(token.length() - 1);
    return token.substring(0, token.length() - 1) + (last == '0' ? '1' : '0');
  }

  private static void assertConflict(Runnable call, Object step) {
    RequestFailure f = catchThrowableOfType(call::run, RequestFailure.class);
    assertThat(f).as("%s", step).isNotNull();
    assertThat(f.code()).as("%s", step).isEqualTo(DedupFailure.STATE_CONFLICT);
  }
}
