package io.github.vertxdedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigInteger;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The bad-input table: each kind of malformed or ill-timed request is answered with the right failure code and a
 * message naming the field (and the limit), and the partition keeps answering correctly afterwards, with every id it
 * had accepted still remembered.
 */
class BadInputTest extends ServiceTestSupport {

  private static final List<String> KEPT = List.of("kept-1", "kept-2", "kept-3", "kept-4", "kept-5");

  static Stream<Arguments> badRequests() {
    String big = "x".repeat(1025);
    String bigUtf8 = "é".repeat(600); // 600 characters, 1200 UTF-8 bytes
    JsonArray tooMany = new JsonArray();
    for (int i = 0; i < 1001; i++) {
      tooMany.add(id("e" + i));
    }
    return Stream.of(
        bad("id missing", "check", new JsonObject(), 400, "id is required"),
        bad("id null", "check", new JsonObject().putNull("id"), 400, "id must be a string but was null"),
        bad("id empty", "check", id(""), 400, "id must be 1..1024 UTF-8 bytes but was empty"),
        bad("id a number", "check", new JsonObject().put("id", 42), 400, "id must be a string but was Integer 42"),
        bad("id a boolean", "check", new JsonObject().put("id", true), 400, "id must be a string"),
        bad("id an object", "check", new JsonObject().put("id", new JsonObject()), 400,
            "id must be a string but was JsonObject"),
        bad("id too many characters", "check", id(big), 400, "id must be at most maxIdBytes=1024", "1025"),
        bad("id too many UTF-8 bytes", "check", id(bigUtf8), 400, "id must be at most maxIdBytes=1024",
            "but was 1200"),
        bad("key a number", "check", id("a").put("key", 7), 400, "key must be a string"),
        bad("key empty", "check", id("a").put("key", ""), 400, "key must be 1..1024"),
        bad("key too long", "check", id("a").put("key", big), 400, "key must be at most maxIdBytes=1024"),
        bad("payloadHash a number", "check", id("a").put("payloadHash", 1), 400, "payloadHash must be a string"),
        bad("payloadHash empty", "check", id("a").put("payloadHash", ""), 400, "payloadHash must be 1..256"),
        bad("payloadHash too long", "check", id("a").put("payloadHash", "h".repeat(257)), 400,
            "payloadHash must be 1..256", "257"),
        bad("eventTimeMs a string", "check", id("a").put("eventTimeMs", "today"), 400,
            "eventTimeMs must be an integer"),
        bad("eventTimeMs fractional", "check", id("a").put("eventTimeMs", 1.5), 400,
            "eventTimeMs must be an integer"),
        bad("eventTimeMs beyond a long", "check",
            id("a").put("eventTimeMs", new BigInteger("100000000000000000000000")), 400,
            "eventTimeMs must be an integer"),
        bad("eventTimeMs negative", "check", id("a").put("eventTimeMs", -1), 400, "eventTimeMs must be at least 0",
            "but was -1"),
        bad("rememberUntilMs a string", "check", id("a").put("rememberUntilMs", "soon"), 400,
            "rememberUntilMs must be an integer"),
        bad("rememberUntilMs in the past", "check", id("a").put("rememberUntilMs", T0), 400,
            "rememberUntilMs must be in " + (T0 + 1) + ".." + (T0 + WINDOW_MS)),
        bad("rememberUntilMs beyond the window", "check", id("a").put("rememberUntilMs", T0 + WINDOW_MS + 1), 400,
            "rememberUntilMs must be in", "at most now + windowMs"),
        bad("leaseMs on check", "check", id("a").put("leaseMs", 1000), 400,
            "leaseMs is not allowed with action check"),
        bad("leaseMs a string", "claim", id("a").put("leaseMs", "5s"), 400, "leaseMs must be an integer"),
        bad("leaseMs zero", "claim", id("a").put("leaseMs", 0), 400, "leaseMs must be in 1..86400000 but was 0"),
        bad("leaseMs negative", "claim", id("a").put("leaseMs", -5), 400, "leaseMs must be in 1..86400000"),
        bad("leaseMs absurd", "claim", id("a").put("leaseMs", 1L << 50), 400, "leaseMs must be in 1..86400000"),
        bad("claimer on check", "check", id("a").put("claimer", "c"), 400,
            "claimer is not allowed with action check"),
        bad("claimer on commit", "commit", id("kept-1").put("claimToken", "t").put("claimer", "c"), 400,
            "claimer is not allowed with action commit"),
        bad("claimer empty", "claim", id("a").put("claimer", ""), 400, "claimer must be 1..255 UTF-8 bytes"),
        bad("claimer too long", "claim", id("a").put("claimer", "\u00e9".repeat(128)), 400,
            "claimer must be at most 255 UTF-8 bytes but was 256"),
        bad("claimer a number", "claim", id("a").put("claimer", 7), 400, "claimer must be a string"),
        bad("claimToken on check", "check", id("a").put("claimToken", "t"), 400,
            "claimToken is not allowed with action check"),
        bad("claimToken missing on commit", "commit", id("kept-1"), 400, "claimToken is required"),
        bad("claimToken a number", "release", id("kept-1").put("claimToken", 12), 400,
            "claimToken must be a string"),
        bad("payloadHash on commit", "commit", id("kept-1").put("claimToken", "t").put("payloadHash", "h"), 400,
            "payloadHash is not allowed with action commit"),
        bad("leaseMs on lookup", "lookup", id("a").put("leaseMs", 5), 400, "leaseMs is not allowed with action lookup"),
        bad("unknown field (typo)", "check", id("a").put("eventTime", T0), 400, "unknown field 'eventTime'"),
        bad("unknown action", "chek", id("a"), 400, "action must be one of", "'chek'"),
        bad("missing action", null, id("a"), 400, "action header is required"),
        bad("body a string", "check", "{\"id\":\"a\"}", 400, "body must be a JSON object but was String"),
        bad("body null", "check", null, 400, "body must be a JSON object but was null"),
        bad("body an array", "check", new JsonArray().add("a"), 400, "body must be a JSON object but was JsonArray"),
        bad("stats with a field", "stats", id("a"), 400, "unknown field 'id'"),
        bad("commit without claim", "commit", id("never").put("claimToken", "t"), 409, "id is not claimed"),
        bad("release without claim", "release", id("never").put("claimToken", "t"), 409, "id is not claimed"),
        bad("batch over maxBatch", "checkBatch", new JsonObject().put("events", tooMany), 400,
            "events must hold at most maxBatch=1000 events but held 1001"),
        bad("batch without events", "checkBatch", new JsonObject(), 400, "events is required"),
        bad("batch events not an array", "claimBatch", new JsonObject().put("events", id("a")), 400,
            "events must be an array"),
        bad("batch event not an object", "checkBatch", new JsonObject().put("events", new JsonArray().add(id("a"))
            .add(5)), 400, "events[1] must be a JSON object but was Integer"),
        bad("batch event with a bad field", "checkBatch", new JsonObject().put("events", new JsonArray()
            .add(id("a")).add(id("b").put("eventTimeMs", -3))), 400, "events[1].eventTimeMs must be at least 0"),
        bad("batch event with a misplaced field", "checkBatch", new JsonObject().put("events", new JsonArray()
            .add(id("a").put("claimToken", "t"))), 400, "events[0].claimToken is not allowed with action check"),
        bad("batch with an unknown field", "checkBatch", new JsonObject().put("event", new JsonArray()), 400,
            "unknown field 'event'"),
        bad("commitBatch empty", "commitBatch", new JsonObject().put("events", new JsonArray()), 400,
            "events must hold 1..1000 commits (maxBatch) but was empty"),
        bad("commitBatch over maxBatch", "commitBatch", new JsonObject().put("events", tooMany), 400,
            "events must hold at most maxBatch=1000 events but held 1001"),
        bad("commitBatch without events", "commitBatch", new JsonObject(), 400, "events is required"),
        bad("commitBatch events not an array", "commitBatch", new JsonObject().put("events", id("a")), 400,
            "events must be an array"),
        bad("commitBatch event not an object", "commitBatch", new JsonObject().put("events", new JsonArray()
            .add(id("kept-1").put("claimToken", "t")).add("a")), 400, "events[1] must be a JSON object but was String"),
        bad("commitBatch event without claimToken", "commitBatch", new JsonObject().put("events", new JsonArray()
            .add(id("kept-1").put("claimToken", "t")).add(id("a"))), 400, "events[1].claimToken is required"),
        bad("commitBatch event with a misplaced field", "commitBatch", new JsonObject().put("events",
            new JsonArray().add(id("a").put("claimToken", "t").put("payloadHash", "h"))), 400,
            "events[0].payloadHash is not allowed with action commit"));
  }

  private static Arguments bad(String kind, String action, Object body, int code, String... fragments) {
    return Arguments.of(kind, action, body, code, fragments);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badRequests")
  void shouldRefuseBadInputNamingTheFieldAndKeepAnswering(String kind, String action, Object body, int code,
      String[] fragments) {
    for (String id : KEPT) {
      assertThat(check(id)).isEqualTo("ACCEPTED");
    }
    ReplyException e = failure(action, body);
    assertFailure(e, code, fragments);

    for (String id : KEPT) {
      assertThat(check(id)).as("%s after '%s'", id, kind).isEqualTo("DUPLICATE");
    }
    assertThat(check("fresh")).isEqualTo("ACCEPTED");
    // The bad request recorded nothing: "a" (used by most bad requests) is still new.
    assertThat(ok("lookup", id("a")).getString("state")).isEqualTo("ABSENT");
    JsonObject s = stats();
    assertThat(s.getString("state")).isEqualTo("READY");
    assertThat(s.getLong("accepted")).isEqualTo(KEPT.size() + 1);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badRequests")
  void shouldRefuseBadInputThroughTheRouterToo(String kind, String action, Object body, int code,
      String[] fragments) {
    if (action != null && action.endsWith("Batch")) {
      assertFailure(failure("dedup", action, body), 400, "must be sent to a partition address");
      return;
    }
    assertFailure(failure("dedup", action, body), code, fragments);
    assertThat(check("fresh")).isEqualTo("ACCEPTED");
  }
}
