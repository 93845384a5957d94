package io.github.vertxdedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.window.CapacityPolicy;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A partition at capacity under {@code REJECT}: an id it remembers needs no room, so it is answered as ever (a plain
 * check, or any element of a batch), and only a new id is refused, with its own 503 inside a batch.
 */
class FullWindowTest extends ServiceTestSupport {

  @Override
  DedupOptions options() {
    return super.options().setMaxIdsPerPartition(4).setCapacityPolicy(CapacityPolicy.REJECT);
  }

  /** Fills the window: a, b and c remembered, and a live claim of {@code held} reserving the fourth entry. */
  private void fillWithAClaim() {
    for (String id : List.of("a", "b", "c")) {
      assertThat(check(id)).isEqualTo("ACCEPTED");
    }
    assertThat(verdict("claim", id("held"))).isEqualTo("ACCEPTED");
    assertFailure(failure("check", id("new")), DedupFailure.UNAVAILABLE, "window full", "reserved by claims");
  }

  /** Fills the window with checked ids alone (no claim): a, b, c and d. */
  private void fillWithChecks() {
    for (String id : List.of("a", "b", "c", "d")) {
      assertThat(check(id)).isEqualTo("ACCEPTED");
    }
    assertFailure(failure("check", id("new")), DedupFailure.UNAVAILABLE, "window full");
  }

  private static JsonObject events(String... ids) {
    JsonArray events = new JsonArray();
    for (String id : ids) {
      events.add(id(id));
    }
    return new JsonObject().put("events", events);
  }

  @Test
  void shouldAnswerARememberedIdDuplicateWhileLiveClaimsFillTheWindow() {
    fillWithAClaim();

    JsonObject a = ok("check", id("a"));
    assertThat(a.getString("verdict")).isEqualTo("DUPLICATE");
    assertThat(a.getLong("firstSeenMs")).isEqualTo(T0);
    assertThat(check("held")).isEqualTo("IN_FLIGHT");
    assertFailure(failure("check", id("new")), DedupFailure.UNAVAILABLE, "window full");
    assertThat(stats().getLong("duplicates")).isEqualTo(1);
  }

  @Test
  void shouldAnswerABatchOfDuplicatesOnAFullWindow() {
    fillWithAClaim();

    JsonArray checked = ok("checkBatch", events("a", "b", "c", "a")).getJsonArray("verdicts");
    assertThat(checked.stream().map(v -> ((JsonObject) v).getString("verdict")))
        .containsExactly("DUPLICATE", "DUPLICATE", "DUPLICATE", "DUPLICATE");
    JsonArray claimed = ok("claimBatch", events("c", "held", "b")).getJsonArray("verdicts");
    assertThat(claimed.stream().map(v -> ((JsonObject) v).getString("verdict")))
        .containsExactly("DUPLICATE", "IN_FLIGHT", "DUPLICATE");
  }

  @Test
  void shouldAnswerABatchOfPlainDuplicatesOnAWindowFullOfCheckedIds() {
    fillWithChecks();

    JsonArray checked = ok("checkBatch", events("d", "a", "b", "c")).getJsonArray("verdicts");
    assertThat(checked.stream().map(v -> ((JsonObject) v).getString("verdict")))
        .containsExactly("DUPLICATE", "DUPLICATE", "DUPLICATE", "DUPLICATE");
  }

  /**
   * A mixed batch on a full window: each remembered id its verdict, each new id its own 503 (the commitBatch element
   * form: {@code failureCode} and {@code message}, no verdict), in input order, and nothing recorded for the refused.
   */
  @Test
  void shouldAnswerAMixedBatchPerItemWithA503OnlyForTheNewIds() {
    fillWithAClaim();

    JsonArray checked = ok("checkBatch", events("a", "x", "b", "held", "y", "c")).getJsonArray("verdicts");
    assertThat(checked).hasSize(6);
    assertThat(checked.getJsonObject(0).getString("verdict")).isEqualTo("DUPLICATE");
    assertRefused(checked.getJsonObject(1));
    assertThat(checked.getJsonObject(2).getString("verdict")).isEqualTo("DUPLICATE");
    assertThat(checked.getJsonObject(3).getString("verdict")).isEqualTo("IN_FLIGHT");
    assertRefused(checked.getJsonObject(4));
    assertThat(checked.getJsonObject(5).getString("verdict")).isEqualTo("DUPLICATE");

    JsonArray claimed = ok("claimBatch", events("x", "b")).getJsonArray("verdicts");
    assertRefused(claimed.getJsonObject(0));
    assertThat(claimed.getJsonObject(1).getString("verdict")).isEqualTo("DUPLICATE");

    assertThat(ok("lookup", id("x")).getString("state")).as("nothing recorded for a refused id").isEqualTo("ABSENT");
    assertThat(ok("lookup", id("y")).getString("state")).isEqualTo("ABSENT");
    JsonObject s = stats();
    assertThat(s.getLong("held")).isEqualTo(3);
    assertThat(s.getLong("claimsHeld")).isEqualTo(1);
    // Each refused element counts as a refused single request: the one of fillWithAClaim, and three here.
    assertThat(s.getLong("unavailable")).isEqualTo(4);
    assertThat(s.getLong("rejected")).isEqualTo(4);
  }

  /** The same without claims: plain events go through the window's batch check, which stops at the refused id. */
  @Test
  void shouldAnswerAMixedBatchOfPlainEventsPerItemOnAWindowFullOfCheckedIds() {
    fillWithChecks();

    JsonArray checked = ok("checkBatch", events("a", "x", "b", "y", "x", "d")).getJsonArray("verdicts");
    assertThat(checked.getJsonObject(0).getString("verdict")).isEqualTo("DUPLICATE");
    assertRefused(checked.getJsonObject(1));
    assertThat(checked.getJsonObject(2).getString("verdict")).isEqualTo("DUPLICATE");
    assertRefused(checked.getJsonObject(3));
    assertRefused(checked.getJsonObject(4));
    assertThat(checked.getJsonObject(5).getString("verdict")).isEqualTo("DUPLICATE");
    assertThat(stats().getLong("held")).isEqualTo(4);

    // Room again (the window passed): the refused ids are accepted when sent again.
    clock.advanceMs(WINDOW_MS);
    JsonArray again = ok("checkBatch", events("x", "y")).getJsonArray("verdicts");
    assertThat(again.stream().map(v -> ((JsonObject) v).getString("verdict")))
        .containsExactly("ACCEPTED", "ACCEPTED");
  }

  /** Through the client, with the local codec and with JSON: the same per-item results. */
  @ParameterizedTest
  @EnumSource(DedupClient.Transport.class)
  void shouldAnswerEachItemThroughTheClient(DedupClient.Transport transport) {
    fillWithAClaim();
    DedupClient client = DedupClient.create(vertx, options(), transport);

    List<DedupBatchResult> duplicates =
        await(client.checkBatch(List.of(new DedupEvent("a"), new DedupEvent("b"), new DedupEvent("held"))));
    assertThat(duplicates).extracting(r -> r.result().verdict())
        .containsExactly(DedupVerdict.DUPLICATE, DedupVerdict.DUPLICATE, DedupVerdict.IN_FLIGHT);
    assertThat(duplicates.get(0).result().firstSeenMs()).isEqualTo(T0);

    List<DedupBatchResult> mixed = await(client.claimBatch(List.of(new DedupEvent("c"), new DedupEvent("x"),
        new DedupEvent("a"))));
    assertThat(mixed).extracting(DedupBatchResult::failed).containsExactly(false, true, false);
    assertThat(mixed.get(0).result().verdict()).isEqualTo(DedupVerdict.DUPLICATE);
    assertThat(mixed.get(1).failureCode()).isEqualTo(DedupFailure.UNAVAILABLE);
    assertThat(mixed.get(1).message()).contains("window full", "maxIdsPerPartition=4");
    assertThat(mixed.get(1).result()).isNull();
    assertThat(mixed.get(1).cause()).isInstanceOf(ReplyException.class)
        .satisfies(e -> assertThat(e.failureCode()).isEqualTo(DedupFailure.UNAVAILABLE));
    assertThat(mixed.get(2).result().verdict()).isEqualTo(DedupVerdict.DUPLICATE);
  }

  /** The element form: a result or a failure, never both, and the JSON of each reads back as itself. */
  @Test
  void shouldReadBackEachElementFormAndRefuseNeitherOrBoth() {
    DedupResult r = DedupResult.of(DedupVerdict.DUPLICATE, 0);
    assertThatThrownBy(() -> new DedupBatchResult(null, 0, null)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new DedupBatchResult(r, 503, "m")).isInstanceOf(IllegalArgumentException.class);
    assertThat(DedupBatchResult.fromJson(DedupBatchResult.failed(503, "m").toJson()))
        .isEqualTo(DedupBatchResult.failed(503, "m"));
    assertThat(DedupBatchResult.failed(503, "m").toJson())
        .isEqualTo(DedupCommitResult.failed(503, "m").toJson());
    assertThat(DedupBatchResult.fromJson(DedupBatchResult.decided(r).toJson()).result()).isEqualTo(r);
    assertThat(DedupBatchResult.decided(r).cause()).isNull();
  }

  private static void assertRefused(JsonObject element) {
    assertThat(element.getInteger("failureCode")).as("%s", element).isEqualTo(DedupFailure.UNAVAILABLE);
    assertThat(element.getString("message")).contains("window full", "maxIdsPerPartition=4");
    assertThat(element.containsKey("verdict")).isFalse();
  }
}
