package io.github.vertxdedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code commitBatch}: commits answered per id (a lapsed or unheld claim is that id's 409, the others commit), bad
 * input refused before anything is applied, and the wire and local forms of the reply.
 */
class CommitBatchTest extends ServiceTestSupport {

  private String claim(String id, long leaseMs) {
    JsonObject reply = ok("claim", id(id).put("leaseMs", leaseMs));
    assertThat(reply.getString("verdict")).isEqualTo("ACCEPTED");
    return reply.getString("claimToken");
  }

  @Test
  void shouldAnswerEachCommitOnTheWireWithALapsedClaimInTheMiddle() {
    String a = claim("a", 10_000);
    String lapsing = claim("lapsing", 1_000);
    String c = claim("c", 10_000);
    clock.advanceMs(1_500);
    JsonArray events = new JsonArray()
        .add(id("a").put("claimToken", a))
        .add(id("lapsing").put("claimToken", lapsing))
        .add(id("c").put("claimToken", c))
        .add(id("never").put("claimToken", "t"))
        .add(id("c").put("claimToken", "wrong"));
    JsonArray results = ok("commitBatch", new JsonObject().put("events", events)).getJsonArray("results");

    assertThat(results).hasSize(5);
    assertThat(results.getJsonObject(0).getString("verdict")).isEqualTo("COMMITTED");
    assertThat(results.getJsonObject(0).getInteger("partition")).isEqualTo(0);
    assertThat(results.getJsonObject(1).getInteger("failureCode")).isEqualTo(DedupFailure.STATE_CONFLICT);
    assertThat(results.getJsonObject(1).getString("message")).contains("lease of the claim of id ran out");
    assertThat(results.getJsonObject(1).containsKey("verdict")).isFalse();
    assertThat(results.getJsonObject(2).getString("verdict")).isEqualTo("COMMITTED");
    assertThat(results.getJsonObject(3).getInteger("failureCode")).isEqualTo(DedupFailure.STATE_CONFLICT);
    assertThat(results.getJsonObject(3).getString("message")).contains("id is not claimed");
    // c was committed by element 2; a commit with another token is refused as a single commit would be.
    assertThat(results.getJsonObject(4).getInteger("failureCode")).isEqualTo(DedupFailure.STATE_CONFLICT);

    assertThat(check("a")).isEqualTo("DUPLICATE");
    assertThat(check("c")).isEqualTo("DUPLICATE");
    assertThat(check("lapsing")).as("its claim lapsed, so it was never remembered").isEqualTo("ACCEPTED");
    JsonObject s = stats();
    assertThat(s.getLong("commits")).isEqualTo(2);
    assertThat(s.getLong("stateConflicts")).isEqualTo(3);
  }

  @Test
  void shouldAnswerARepeatedCommitBatchCommittedAgain() {
    String a = claim("a", 10_000);
    JsonObject body = new JsonObject().put("events", new JsonArray().add(id("a").put("claimToken", a)));
    assertThat(ok("commitBatch", body).getJsonArray("results").getJsonObject(0).getString("verdict"))
        .isEqualTo("COMMITTED");
    // A retry after a lost reply: harmless, as for a single commit.
    assertThat(ok("commitBatch", body).getJsonArray("results").getJsonObject(0).getString("verdict"))
        .isEqualTo("COMMITTED");
    assertThat(stats().getLong("commits")).isEqualTo(1);
  }

  @Test
  void shouldValidateEveryCommitBeforeApplyingAny() {
    String a = claim("a", 10_000);
    JsonArray events = new JsonArray().add(id("a").put("claimToken", a)).add(id("b"));
    ReplyException e = failure("commitBatch", new JsonObject().put("events", events));
    assertFailure(e, DedupFailure.BAD_REQUEST, "events[1].claimToken is required");
    assertThat(ok("lookup", id("a")).getString("state")).as("a is still only claimed").isEqualTo("IN_FLIGHT");
    assertThat(stats().getLong("commits")).isZero();
    assertThat(verdict("commit", id("a").put("claimToken", a))).isEqualTo("COMMITTED");
  }

  @Test
  void shouldRefuseACommitBatchAtTheRouter() {
    ReplyException e = failure("dedup", "commitBatch", new JsonObject().put("events", new JsonArray()
        .add(id("a").put("claimToken", "t"))));
    assertFailure(e, DedupFailure.BAD_REQUEST, "commitBatch must be sent to a partition address");
  }

  @ParameterizedTest
  @EnumSource(DedupClient.Transport.class)
  void shouldAnswerPerIdThroughTheClient(DedupClient.Transport transport) {
    DedupClient client = DedupClient.create(vertx, options(), transport);
    String a = await(client.claim(new DedupEvent("a").setLeaseMs(10_000L))).claimToken();
    String lapsing = await(client.claim(new DedupEvent("lapsing").setLeaseMs(1_000L))).claimToken();
    String c = await(client.claim(new DedupEvent("c").setLeaseMs(10_000L))).claimToken();
    clock.advanceMs(1_500);
    List<DedupCommitResult> results = await(client.commitBatch(List.of(
        new DedupEvent("a").setClaimToken(a),
        new DedupEvent("lapsing").setClaimToken(lapsing),
        new DedupEvent("c").setClaimToken(c))));

    assertThat(results).extracting(DedupCommitResult::committed).containsExactly(true, false, true);
    assertThat(results.get(0).result().verdict()).isEqualTo(DedupVerdict.COMMITTED);
    assertThat(results.get(1).failureCode()).isEqualTo(DedupFailure.STATE_CONFLICT);
    assertThat(results.get(1).message()).contains("ran out");
    assertThat(results.get(1).result()).isNull();
    assertThat(await(client.check("a")).verdict()).isEqualTo(DedupVerdict.DUPLICATE);
    assertThat(await(client.check("lapsing")).verdict()).isEqualTo(DedupVerdict.ACCEPTED);

    assertThatThrownBy(() -> await(client.commitBatch(List.of())))
        .isInstanceOfSatisfying(ReplyException.class, e -> {
          assertThat(e.failureCode()).isEqualTo(DedupFailure.BAD_REQUEST);
          assertThat(e.getMessage()).contains("events must hold 1..1000 commits (maxBatch) but was empty");
        });
    assertThatThrownBy(() -> await(client.commitBatch(List.of(new DedupEvent("x")))))
        .isInstanceOfSatisfying(ReplyException.class,
            e -> assertThat(e.getMessage()).contains("events[0].claimToken is required"));
  }

  @Test
  void shouldRefuseAResultWithNeitherOrBothForms() {
    DedupResult r = DedupResult.of(DedupVerdict.COMMITTED, 0);
    assertThatThrownBy(() -> new DedupCommitResult(null, 0, null)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new DedupCommitResult(r, 409, "m")).isInstanceOf(IllegalArgumentException.class);
    assertThat(DedupCommitResult.fromJson(DedupCommitResult.failed(409, "m").toJson()))
        .isEqualTo(DedupCommitResult.failed(409, "m"));
    assertThat(DedupCommitResult.fromJson(DedupCommitResult.committed(r).toJson()).result()).isEqualTo(r);
  }
}
