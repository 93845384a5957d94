package io.github.vertxdedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/** Every action and verdict of the wire contract, one partition, memory only, time driven by a ManualClock. */
class DedupServiceTest extends ServiceTestSupport {

  @Test
  void shouldAcceptFirstSightingAndAnswerDuplicateWithTimes() {
    JsonObject first = ok("check", id("a"));
    assertThat(first.getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(first.getInteger("partition")).isZero();
    assertThat(first.containsKey("firstSeenMs")).isFalse();

    clock.advanceMs(2_500);
    JsonObject dup = ok("check", id("a"));
    assertThat(dup.getString("verdict")).isEqualTo("DUPLICATE");
    assertThat(dup.getInteger("partition")).isZero();
    assertThat(dup.getLong("firstSeenMs")).isEqualTo(T0);
    assertThat(dup.getLong("ageMs")).isEqualTo(2_500);
    assertThat(dup.getLong("expiresAtMs")).isEqualTo(T0 + WINDOW_MS);
  }

  @Test
  void shouldAcceptAgainOnceTheWindowHasPassed() {
    assertThat(check("a")).isEqualTo("ACCEPTED");
    clock.advanceMs(WINDOW_MS - BUCKET_MS - 1);
    assertThat(check("a")).isEqualTo("DUPLICATE");
    clock.setMs(T0 + WINDOW_MS);
    assertThat(check("a")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldNotExtendExpiryOnDuplicates() {
    assertThat(check("a")).isEqualTo("ACCEPTED");
    for (int i = 1; i < 6; i++) {
      clock.setMs(T0 + i * 10_000L);
      JsonObject dup = ok("check", id("a"));
      assertThat(dup.getString("verdict")).isEqualTo("DUPLICATE");
      assertThat(dup.getLong("expiresAtMs")).isEqualTo(T0 + WINDOW_MS);
    }
    clock.setMs(T0 + WINDOW_MS);
    assertThat(check("a")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldAnswerConflictForSameIdWithOtherPayloadAndKeepTheFirstHash() {
    assertThat(verdict("check", id("a").put("payloadHash", "h1"))).isEqualTo("ACCEPTED");
    JsonObject conflict = ok("check", id("a").put("payloadHash", "h2"));
    assertThat(conflict.getString("verdict")).isEqualTo("CONFLICT");
    assertThat(conflict.getLong("firstSeenMs")).isEqualTo(T0);
    assertThat(verdict("check", id("a").put("payloadHash", "h1"))).isEqualTo("DUPLICATE");
    assertThat(verdict("check", id("a"))).isEqualTo("DUPLICATE");
    assertThat(stats().getLong("conflicts")).isEqualTo(1);
  }

  @Test
  void shouldTreatAnEventAsDuplicateWhenEitherItsIdOrItsKeyWasSeen() {
    assertThat(verdict("check", id("a").put("key", "order-1"))).isEqualTo("ACCEPTED");
    assertThat(verdict("check", id("b").put("key", "order-1"))).isEqualTo("DUPLICATE");
    assertThat(verdict("check", id("a").put("key", "order-2"))).isEqualTo("DUPLICATE");
    assertThat(verdict("check", id("c").put("key", "order-2"))).isEqualTo("ACCEPTED");
    // Ids and keys live in separate fingerprint scopes: an id equal to a seen key is new.
    assertThat(check("order-1")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldHonourAnExplicitRememberUntil() {
    assertThat(verdict("check", id("a").put("rememberUntilMs", T0 + 10_000))).isEqualTo("ACCEPTED");
    clock.setMs(T0 + 8_999);
    JsonObject dup = ok("check", id("a"));
    assertThat(dup.getString("verdict")).isEqualTo("DUPLICATE");
    assertThat(dup.getLong("expiresAtMs")).isEqualTo(T0 + 10_000);
    clock.setMs(T0 + 10_000);
    assertThat(check("a")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldAnswerUnknownForAnEventOlderThanThePartitionCanCoverForAndRecordNothing() {
    JsonObject old = ok("check", id("a").put("eventTimeMs", T0 - 1));
    assertThat(old.getString("verdict")).isEqualTo("UNKNOWN");
    assertThat(old.getInteger("partition")).isZero();
    assertThat(ok("lookup", id("a")).getString("state")).isEqualTo("ABSENT");

    assertThat(verdict("check", id("b").put("eventTimeMs", T0))).isEqualTo("ACCEPTED");
    clock.advanceMs(WINDOW_MS / 2);
    // A remembered id is a duplicate whatever its event time.
    assertThat(verdict("check", id("b").put("eventTimeMs", T0 - 3_600_000))).isEqualTo("DUPLICATE");
    clock.advanceMs(WINDOW_MS);
    assertThat(verdict("check", id("c").put("eventTimeMs", T0 + 1_000))).isEqualTo("UNKNOWN");
    JsonObject s = stats();
    assertThat(s.getLong("unknown")).isEqualTo(2);
    assertThat(s.getLong("lateDeliveries")).isEqualTo(2);
  }

  /**
   * An event time after now counts as now (a producer's clock ahead of the partition's is no fault of the event): far
   * beyond now + W, up to the largest long, it is covered, neither UNKNOWN nor uncovered nor late, in a single
   * check, a claim and a batch (where such events stay on the batch check's plain path and still answer like single
   * calls).
   */
  @Test
  void shouldCountAnEventTimeAfterNowAsNow() {
    JsonObject future = ok("check", id("a").put("eventTimeMs", T0 + 2 * WINDOW_MS));
    assertThat(future.getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(future.containsKey("uncovered")).isFalse();
    JsonArray events = new JsonArray().add(id("b").put("eventTimeMs", Long.MAX_VALUE))
        .add(id("a").put("eventTimeMs", T0 + WINDOW_MS + 1)).add(id("b").put("eventTimeMs", T0))
        .add(id("c").put("eventTimeMs", T0 - 1));
    JsonArray verdicts = ok("checkBatch", new JsonObject().put("events", events)).getJsonArray("verdicts");
    assertThat(verdicts.stream().map(v -> ((JsonObject) v).getString("verdict")))
        .containsExactly("ACCEPTED", "DUPLICATE", "DUPLICATE", "UNKNOWN");
    assertThat(verdict("claim", id("d").put("eventTimeMs", Long.MAX_VALUE))).isEqualTo("ACCEPTED");
    JsonObject s = stats();
    assertThat(s.getLong("accepted")).isEqualTo(3);
    assertThat(s.getLong("unknown")).as("only the event older than the partition's memory").isEqualTo(1);
    assertThat(s.getLong("uncovered")).isZero();
    assertThat(s.getLong("lateDeliveries")).isZero();
  }

  @Test
  void shouldAnswerLookupWithStateAndTimesAndRecordNothing() {
    JsonObject absent = ok("lookup", id("a"));
    assertThat(absent.getBoolean("known")).isFalse();
    assertThat(absent.getString("state")).isEqualTo("ABSENT");
    assertThat(check("a")).isEqualTo("ACCEPTED");

    clock.advanceMs(1_500);
    JsonObject known = ok("lookup", id("a"));
    assertThat(known.getBoolean("known")).isTrue();
    assertThat(known.getString("state")).isEqualTo("REMEMBERED");
    assertThat(known.getLong("firstSeenMs")).isEqualTo(T0);
    assertThat(known.getLong("expiresAtMs")).isEqualTo(T0 + WINDOW_MS);

    assertThat(check("a")).isEqualTo("DUPLICATE");
    assertThat(stats().getLong("accepted")).isEqualTo(1);
  }

  @Test
  void shouldCountEveryVerdictInStats() {
    check("a");
    check("a");
    verdict("check", id("b").put("payloadHash", "x"));
    verdict("check", id("b").put("payloadHash", "y"));
    JsonObject claim = ok("claim", id("c"));
    check("c");
    verdict("check", id("d").put("eventTimeMs", 0));
    JsonObject s = stats();
    assertThat(s.getLong("accepted")).isEqualTo(3);
    assertThat(s.getLong("duplicates")).isEqualTo(1);
    assertThat(s.getLong("conflicts")).isEqualTo(1);
    assertThat(s.getLong("inFlight")).isEqualTo(1);
    assertThat(s.getLong("unknown")).isEqualTo(1);
    assertThat(s.getLong("claimsHeld")).isEqualTo(1);
    assertThat(s.getLong("held")).isEqualTo(2);
    assertThat(s.getString("state")).isEqualTo("READY");
    assertThat(claim.getString("claimToken")).hasSize(16);
  }

  // Claims ---------------------------------------------------------------------------------------------------------

  @Test
  void shouldHoldAClaimInFlightUntilCommitThenRememberItUntilExpiry() {
    JsonObject claim = ok("claim", id("a"));
    assertThat(claim.getString("verdict")).isEqualTo("ACCEPTED");
    String token = claim.getString("claimToken");

    clock.advanceMs(1_000);
    JsonObject inFlight = ok("check", id("a"));
    assertThat(inFlight.getString("verdict")).isEqualTo("IN_FLIGHT");
    assertThat(inFlight.getLong("firstSeenMs")).isEqualTo(T0);
    assertThat(inFlight.getLong("ageMs")).isEqualTo(1_000);
    assertThat(inFlight.getLong("expiresAtMs")).isEqualTo(T0 + DedupOptions.DEFAULT_LEASE_MS);
    assertThat(verdict("claim", id("a"))).isEqualTo("IN_FLIGHT");
    assertThat(ok("lookup", id("a")).getString("state")).isEqualTo("IN_FLIGHT");

    JsonObject commit = ok("commit", id("a").put("claimToken", token));
    assertThat(commit.getString("verdict")).isEqualTo("COMMITTED");
    assertThat(commit.getInteger("partition")).isZero();
    // Repeating a commit is harmless.
    assertThat(verdict("commit", id("a").put("claimToken", token))).isEqualTo("COMMITTED");
    assertThat(ok("lookup", id("a")).getString("state")).isEqualTo("REMEMBERED");
    assertThat(verdict("claim", id("a"))).isEqualTo("DUPLICATE");

    long committedAt = T0 + 1_000;
    clock.setMs(committedAt + WINDOW_MS - BUCKET_MS - 1);
    assertThat(check("a")).isEqualTo("DUPLICATE");
    clock.setMs(committedAt + WINDOW_MS);
    assertThat(check("a")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldAcceptTheSameIdAgainAfterRelease() {
    String token = ok("claim", id("a")).getString("claimToken");
    JsonObject released = ok("release", id("a").put("claimToken", token));
    assertThat(released.getString("verdict")).isEqualTo("RELEASED");
    assertThat(ok("lookup", id("a")).getString("state")).isEqualTo("ABSENT");
    assertThat(check("a")).isEqualTo("ACCEPTED");
    assertThat(stats().getLong("releases")).isEqualTo(1);
  }

  @Test
  void shouldAcceptTheSameIdAgainAfterTheLeaseRunsOut() {
    String token = ok("claim", id("a").put("leaseMs", 5_000)).getString("claimToken");
    clock.advanceMs(4_999);
    assertThat(check("a")).isEqualTo("IN_FLIGHT");
    clock.advanceMs(1);
    JsonObject again = ok("claim", id("a"));
    assertThat(again.getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(again.getString("claimToken")).isNotEqualTo(token);
    // The first claimer's token no longer commits anything.
    assertFailure(failure("commit", id("a").put("claimToken", token)), 409, "claimToken does not match");
    assertThat(stats().getLong("expiredLeases")).isEqualTo(1);
  }

  @Test
  void shouldCountALapsedLeaseOnceAndRefuseItsCommit() {
    String token = ok("claim", id("a").put("leaseMs", 1_000)).getString("claimToken");
    ok("claim", id("b").put("leaseMs", 1_000));
    clock.advanceMs(1_000);
    assertFailure(failure("commit", id("a").put("claimToken", token)), 409, "lease", "ran out");
    JsonObject s = stats();
    assertThat(s.getLong("expiredLeases")).isEqualTo(2);
    assertThat(s.getLong("claimsHeld")).isZero();
    assertThat(check("a")).isEqualTo("ACCEPTED");
    assertThat(check("b")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldRefuseCommitOrReleaseWithTheWrongTokenAndKeepTheClaim() {
    String token = ok("claim", id("a")).getString("claimToken");
    assertFailure(failure("commit", id("a").put("claimToken", "0123456789abcdef")), 409, "claimToken");
    assertFailure(failure("release", id("a").put("claimToken", "nope")), 409, "claimToken");
    assertThat(check("a")).isEqualTo("IN_FLIGHT");
    assertThat(verdict("release", id("a").put("claimToken", token))).isEqualTo("RELEASED");
    assertFailure(failure("release", id("a").put("claimToken", token)), 409, "not claimed");
  }

  @Test
  void shouldRefuseReleaseOfACommittedId() {
    String token = ok("claim", id("a")).getString("claimToken");
    ok("commit", id("a").put("claimToken", token));
    assertFailure(failure("release", id("a").put("claimToken", token)), 409, "was committed");
    assertThat(check("a")).isEqualTo("DUPLICATE");
  }

  @Test
  void shouldHoldTheBusinessKeyOfAClaimToo() {
    String token = ok("claim", id("a").put("key", "k")).getString("claimToken");
    assertThat(verdict("check", id("b").put("key", "k"))).isEqualTo("IN_FLIGHT");
    ok("commit", id("a").put("key", "k").put("claimToken", token));
    assertThat(verdict("check", id("b").put("key", "k"))).isEqualTo("DUPLICATE");
  }

  @Test
  void shouldApplyTheExplicitExpiryOfAClaimWhenItIsCommitted() {
    String token = ok("claim", id("a").put("rememberUntilMs", T0 + 20_000)).getString("claimToken");
    clock.advanceMs(1_000);
    ok("commit", id("a").put("claimToken", token));
    clock.setMs(T0 + 18_999);
    assertThat(check("a")).isEqualTo("DUPLICATE");
    clock.setMs(T0 + 20_000);
    assertThat(check("a")).isEqualTo("ACCEPTED");
  }

  // Batches --------------------------------------------------------------------------------------------------------

  @Test
  void shouldAnswerABatchLikeSingleCallsInOrder() {
    check("old");
    JsonArray events = new JsonArray().add(id("a")).add(id("b")).add(id("a")).add(id("old"))
        .add(id("c").put("payloadHash", "1")).add(id("c").put("payloadHash", "2"));
    JsonArray verdicts = ok("checkBatch", new JsonObject().put("events", events)).getJsonArray("verdicts");
    assertThat(verdicts.stream().map(v -> ((JsonObject) v).getString("verdict")))
        .containsExactly("ACCEPTED", "ACCEPTED", "DUPLICATE", "DUPLICATE", "ACCEPTED", "CONFLICT");
    assertThat(verdicts.getJsonObject(2).getLong("firstSeenMs")).isEqualTo(T0);
    assertThat(verdicts.getJsonObject(0).getInteger("partition")).isZero();
  }

  @Test
  void shouldClaimABatchAndAnswerInFlightForARepeatInsideIt() {
    JsonArray events = new JsonArray().add(id("a")).add(id("a")).add(id("b"));
    JsonArray verdicts = ok("claimBatch", new JsonObject().put("events", events)).getJsonArray("verdicts");
    assertThat(verdicts.getJsonObject(0).getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(verdicts.getJsonObject(1).getString("verdict")).isEqualTo("IN_FLIGHT");
    assertThat(verdicts.getJsonObject(2).getString("verdict")).isEqualTo("ACCEPTED");
    String token = verdicts.getJsonObject(2).getString("claimToken");
    assertThat(verdict("commit", id("b").put("claimToken", token))).isEqualTo("COMMITTED");
  }

  @Test
  void shouldFailTheWholeBatchForOneInvalidEventAndRecordNothing() {
    JsonArray events = new JsonArray().add(id("a")).add(id("b")).add(new JsonObject().put("id", 5));
    ReplyException e = failure("checkBatch", new JsonObject().put("events", events));
    assertFailure(e, 400, "events[2].id");
    assertThat(check("a")).isEqualTo("ACCEPTED");
    assertThat(check("b")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldAnswerAnEmptyBatchWithNoVerdicts() {
    JsonObject reply = ok("checkBatch", new JsonObject().put("events", new JsonArray()));
    assertThat(reply.getJsonArray("verdicts")).isEmpty();
  }

  @Test
  void shouldAnswerARepeatedCommitButRefuseACommitWithAnotherTokenOrWithoutAClaim() {
    String token = ok("claim", id("c1")).getString("claimToken");
    assertThat(verdict("commit", id("c1").put("claimToken", token))).isEqualTo("COMMITTED");
    assertThat(verdict("commit", id("c1").put("claimToken", token))).isEqualTo("COMMITTED");
    assertFailure(failure("commit", id("c1").put("claimToken", "bogus")), 409, "not claimed");
    assertThat(check("checked-only")).isEqualTo("ACCEPTED");
    assertFailure(failure("commit", id("checked-only").put("claimToken", "any")), 409, "not claimed");
    assertThat(check("c1")).isEqualTo("DUPLICATE");
  }
}
