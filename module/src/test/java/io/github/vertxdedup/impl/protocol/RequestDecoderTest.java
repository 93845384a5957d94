package io.github.vertxdedup.impl.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.window.Fingerprinter;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An event given as a {@link DedupEvent} (the local codec) and the same event as a JSON body are decoded alike: the
 * same fingerprints, hash, instants, lease, token and claimer, or the same 400 naming the same field, alone and inside
 * a batch.
 */
class RequestDecoderTest {

  private static final long NOW = 1_700_000_000_000L;
  private static final long WINDOW_MS = 60_000;
  private static final RequestDecoder DECODER = new RequestDecoder(new DedupOptions().setWindowMs(WINDOW_MS), 0);

  static Stream<Arguments> events() {
    String big = "x".repeat(1025);
    List<Arguments> cases = new ArrayList<>();
    for (DedupAction action : List.of(DedupAction.CHECK, DedupAction.CLAIM, DedupAction.COMMIT, DedupAction.RELEASE,
        DedupAction.LOOKUP)) {
      cases.add(Arguments.of(action, new DedupEvent("a")));
      cases.add(Arguments.of(action, new DedupEvent("a").setKey("k")));
      cases.add(Arguments.of(action, new DedupEvent("a").setClaimToken("t")));
      cases.add(Arguments.of(action, new DedupEvent("a").setPayloadHash("h").setEventTimeMs(NOW - 5)));
      cases.add(Arguments.of(action, new DedupEvent("a").setEventTimeMs(NOW + 1_000)
          .setRememberUntilMs(NOW + WINDOW_MS)));
      cases.add(Arguments.of(action, new DedupEvent("a").setLeaseMs(5_000L).setClaimer("consumer-1")));
      cases.add(Arguments.of(action, new DedupEvent()));
      cases.add(Arguments.of(action, new DedupEvent("")));
      cases.add(Arguments.of(action, new DedupEvent(big)));
      cases.add(Arguments.of(action, new DedupEvent("a").setKey("")));
      cases.add(Arguments.of(action, new DedupEvent("a").setPayloadHash("h".repeat(257))));
      cases.add(Arguments.of(action, new DedupEvent("a").setEventTimeMs(-1L)));
      cases.add(Arguments.of(action, new DedupEvent("a").setRememberUntilMs(NOW)));
      cases.add(Arguments.of(action, new DedupEvent("a").setRememberUntilMs(NOW + WINDOW_MS + 1)));
      cases.add(Arguments.of(action, new DedupEvent("a").setLeaseMs(0L)));
      cases.add(Arguments.of(action, new DedupEvent("a").setLeaseMs(1L << 50)));
      cases.add(Arguments.of(action, new DedupEvent("a").setClaimToken("")));
      cases.add(Arguments.of(action, new DedupEvent("a").setClaimToken("t".repeat(65))));
      cases.add(Arguments.of(action, new DedupEvent("a").setClaimer("")));
      cases.add(Arguments.of(action, new DedupEvent("a").setClaimer("\u00e9".repeat(128))));
      // Two bad fields: both forms name the first in field order.
      cases.add(Arguments.of(action, new DedupEvent("").setLeaseMs(0L)));
      cases.add(Arguments.of(action, new DedupEvent("a").setPayloadHash("").setClaimToken("")));
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("events")
  void shouldDecodeATypedEventLikeItsJson(DedupAction action, DedupEvent event) {
    JsonObject json = event.toJson();
    assertThat(outcome(() -> DECODER.decode(event, action, NOW, -1)))
        .isEqualTo(outcome(() -> DECODER.decode(json, action, NOW, -1)));
    assertThat(outcome(() -> DECODER.decode(event, action, NOW, 3)))
        .isEqualTo(outcome(() -> DECODER.decode(json, action, NOW, 3)));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("events")
  void shouldDecodeATypedBatchLikeItsJson(DedupAction action, DedupEvent event) {
    if (action == DedupAction.RELEASE || action == DedupAction.LOOKUP) {
      return; // no batch of these
    }
    List<DedupEvent> typed = List.of(new DedupEvent("first").setClaimToken(action == DedupAction.COMMIT ? "t" : null),
        event);
    JsonObject json = new JsonObject().put("events", new JsonArray()
        .add(typed.get(0).toJson()).add(event.toJson()));
    assertThat(batchOutcome(() -> DECODER.decodeBatch(typed, action, NOW)))
        .isEqualTo(batchOutcome(() -> DECODER.decodeBatch(json, action, NOW)));
  }

  @Test
  void shouldReadTheTypedEventsOwnValues() {
    ParsedEvent check = DECODER.decode(new DedupEvent("a").setPayloadHash("h").setEventTimeMs(NOW - 5)
        .setRememberUntilMs(NOW + 10), DedupAction.CHECK, NOW, -1);
    assertThat(check.payloadHash).isEqualTo(Fingerprinter.payloadHash("h"));
    assertThat(check.eventTimeMs).isEqualTo(NOW - 5);
    assertThat(check.rememberUntilMs).isEqualTo(NOW + 10);
    ParsedEvent claim = DECODER.decode(new DedupEvent("a").setLeaseMs(5_000L).setClaimer("c"), DedupAction.CLAIM,
        NOW, -1);
    assertThat(claim.leaseMs).isEqualTo(5_000);
    assertThat(claim.claimer).isEqualTo("c");
    assertThat(outcome(() -> DECODER.decode(new DedupEvent("a").setLeaseMs(5_000L), DedupAction.CHECK, NOW, 2)))
        .startsWith("failure 400: events[2].leaseMs is not allowed with action check");
  }

  /** What a decode gave: the decoded fields, or the failure's code and message. */
  private static String outcome(Supplier<ParsedEvent> decode) {
    try {
      return describe(decode.get());
    } catch (RequestFailure f) {
      return "failure " + f.code() + ": " + f.getMessage();
    }
  }

  private static String batchOutcome(Supplier<ParsedEvent[]> decode) {
    try {
      StringBuilder b = new StringBuilder();
      for (ParsedEvent e : decode.get()) {
        b.append(describe(e)).append('\n');
      }
      return b.toString();
    } catch (RequestFailure f) {
      return "failure " + f.code() + ": " + f.getMessage();
    }
  }

  private static String describe(ParsedEvent e) {
    return "idFp=" + e.idFp + " keyFp=" + e.keyFp + " payloadHash=" + e.payloadHash + " eventTimeMs=" + e.eventTimeMs
        + " rememberUntilMs=" + e.rememberUntilMs + " leaseMs=" + e.leaseMs + " claimToken=" + e.claimToken
        + " claimer=" + e.claimer;
  }
}
