package io.github.vertxdedup.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.DedupOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The verticle's options: the JSON round trip, and every bad value refused with its key named. */
class DedupKafkaVerticleOptionsTest {

  private static DedupKafkaVerticleOptions valid() {
    return new DedupKafkaVerticleOptions()
        .setAddress("billing.payments")
        .setTopics(List.of("payments", "refunds"))
        .setKafkaConfig(Map.of("bootstrap.servers", "localhost:9092", "group.id", "billing"))
        .setIdentityHeader("message-id")
        .setOptions(new DedupKafkaOptions().setDedup(new DedupOptions().setWindow(Duration.ofMinutes(10))));
  }

  @Test
  void shouldRoundTripThroughJsonWithEachWayOfFindingTheIdentity() {
    DedupKafkaVerticleOptions o = valid().setRequestTimeoutMs(5_000).setDeadLetterAddress("billing.dead");
    DedupKafkaVerticleOptions back = new DedupKafkaVerticleOptions(new JsonObject(o.toJson().encode()));
    assertThat(back).isEqualTo(o);
    assertThat(back.getTopics()).containsExactly("payments", "refunds");
    assertThat(back.getKafkaConfig()).containsEntry("group.id", "billing");
    assertThat(back.getRequestTimeoutMs()).isEqualTo(5_000);
    assertThat(back.getDeadLetterAddress()).isEqualTo("billing.dead");
    assertThat(back.getOptions().getDedup().getWindowMs()).isEqualTo(600_000);

    DedupKafkaVerticleOptions byKey = valid().setIdentityRecordKey(true);
    assertThat(byKey.getIdentityHeader()).isNull();
    assertThat(new DedupKafkaVerticleOptions(byKey.toJson())).isEqualTo(byKey).isNotEqualTo(o);
    assertThat(byKey.toJson().getJsonObject("identity")).isEqualTo(new JsonObject().put("recordKey", true));

    DedupKafkaVerticleOptions byPointer = valid().setIdentityValuePointer("/payment/id");
    assertThat(byPointer.isIdentityRecordKey()).isFalse();
    assertThat(new DedupKafkaVerticleOptions(byPointer.toJson()).getIdentityValuePointer()).isEqualTo("/payment/id");

    DedupKafkaVerticleOptions defaults = new DedupKafkaVerticleOptions();
    assertThat(new DedupKafkaVerticleOptions(defaults.toJson())).isEqualTo(defaults);
    assertThat(defaults.getRequestTimeoutMs()).isEqualTo(DedupKafkaVerticleOptions.DEFAULT_REQUEST_TIMEOUT_MS);
    assertThat(new DedupKafkaVerticleOptions(o)).isEqualTo(o);
  }

  @Test
  void shouldReadKafkaSettingsOfAnyScalarTypeAsText() {
    JsonObject json = valid().toJson().put("kafka", new JsonObject().put("group.id", "g")
        .put("max.poll.records", 500).put("check.crcs", false));
    assertThat(new DedupKafkaVerticleOptions(json).getKafkaConfig())
        .containsExactly(Map.entry("group.id", "g"), Map.entry("max.poll.records", "500"),
            Map.entry("check.crcs", "false"));
  }

  @Test
  void shouldRefuseAnUnknownKeyOrAWrongTypeNamingTheKey() {
    assertThatThrownBy(() -> new DedupKafkaVerticleOptions(valid().toJson().put("adress", "x")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown dedup kafka verticle option 'adress' (known: address, topics, kafka, identity, options,"
            + " requestTimeoutMs, deadLetterAddress)");
    assertThatThrownBy(() -> new DedupKafkaVerticleOptions(valid().toJson().put("topics", "payments")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("dedup kafka verticle option 'topics' must be a JSON array of strings but was the string"
            + " \"payments\"");
    assertThatThrownBy(() -> new DedupKafkaVerticleOptions(valid().toJson().put("requestTimeoutMs", "10s")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("dedup kafka verticle option 'requestTimeoutMs' must be a JSON integer but was the string"
            + " \"10s\"");
    assertThatThrownBy(() -> new DedupKafkaVerticleOptions(valid().toJson().put("kafka",
        new JsonObject().put("bootstrap.servers", new JsonArray().add("a:9092")))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("dedup kafka verticle option 'kafka' must be a JSON object whose values are strings, numbers or"
            + " booleans but its member 'bootstrap.servers' was a JSON array");
    assertThatThrownBy(() -> new DedupKafkaVerticleOptions(valid().toJson().put("identity", "message-id")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("dedup kafka verticle option 'identity' must be a JSON object but was the string"
            + " \"message-id\"");
    // Inside "options", the consumer's options name their own keys, after the path of the object they sit in.
    JsonObject badMode = valid().toJson();
    badMode.getJsonObject("options").put("mode", "ONCE");
    assertThatThrownBy(() -> new DedupKafkaVerticleOptions(badMode))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("in 'options': dedup kafka option 'mode' must be one of the JSON strings RECORD_FIRST |"
            + " EFFECT_FIRST | INBOX but was the string \"ONCE\"");
  }

  @Test
  void shouldRequireExactlyOneWayOfFindingTheIdentity() {
    assertThatThrownBy(() -> new DedupKafkaVerticleOptions(valid().toJson().put("identity",
        new JsonObject().put("header", "message-id").put("valuePointer", "/id"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("dedup kafka verticle option 'identity' must name exactly one of header, recordKey (true),"
            + " valuePointer but named header and valuePointer");
    assertThatThrownBy(() -> new DedupKafkaVerticleOptions(valid().toJson().put("identity",
        new JsonObject().put("recordKey", false))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageEndingWith("but named none");
    assertThatThrownBy(() -> new DedupKafkaVerticleOptions(valid().toJson().put("identity",
        new JsonObject().put("heder", "message-id"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown dedup kafka identity option 'heder' (known: header, recordKey, valuePointer)");
    assertThatThrownBy(() -> new DedupKafkaVerticleOptions(valid().toJson().put("identity",
        new JsonObject().put("valuePointer", "payment/id"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("identity valuePointer must be a JSON pointer (RFC 6901, e.g. /payment/id) but was"
            + " \"payment/id\"");
    assertThatThrownBy(() -> new DedupKafkaVerticleOptions(valid().toJson().put("identity",
        new JsonObject().put("header", ""))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("identity header must be a non-empty string but was empty");
  }

  @Test
  void shouldRequireAnAddressTopicsAnIdentityAndAWindow() {
    assertThat(valid().validate()).isEqualTo(valid());
    assertThatThrownBy(() -> new DedupKafkaVerticleOptions(valid().toJson().put("address", null)).validate())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("address is required: the event-bus address each record is sent to");
    assertThatThrownBy(() -> valid().setTopics(List.of()).validate())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("topics is required: a JSON array of at least one topic name");
    JsonObject noIdentity = valid().toJson();
    noIdentity.remove("identity");
    assertThatThrownBy(() -> new DedupKafkaVerticleOptions(noIdentity).validate())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("identity is required:");
    assertThatThrownBy(() -> valid().setOptions(new DedupKafkaOptions()).validate())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("windowMs is required");
    assertThatThrownBy(() -> valid().setTopics(List.of("payments", "")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("topics must hold non-empty topic names but element 1 was empty");
  }

  @Test
  void shouldRefuseTheInboxModeWhoseTransactionCannotTravelOverTheEventBus() {
    DedupKafkaVerticleOptions o = valid().setOptions(new DedupKafkaOptions().setMode(AtomicityMode.INBOX)
        .setDedup(new DedupOptions().setWindow(Duration.ofMinutes(10))));
    assertThatThrownBy(o::validate).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("options.mode INBOX is not available to the verticle");
  }

  @Test
  void shouldRequireAnEffectFirstLeaseOfMoreThanTwiceTheRequestTimeout() {
    DedupKafkaVerticleOptions o = valid().setOptions(new DedupKafkaOptions().setMode(AtomicityMode.EFFECT_FIRST)
        .setDedup(new DedupOptions().setWindow(Duration.ofMinutes(10)).setLeaseMs(20_000)));
    assertThat(o.setRequestTimeoutMs(9_999).validate().getRequestTimeoutMs()).isEqualTo(9_999);
    assertThatThrownBy(() -> o.setRequestTimeoutMs(10_000).validate())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("requestTimeoutMs must be less than half of the claim lease (options.dedup.leaseMs 20000) in"
            + " EFFECT_FIRST mode but was 10000: a claim could run out while its record's request is still"
            + " unanswered");
    // Record-first holds no claim while the request runs.
    assertThat(o.setOptions(o.getOptions().setMode(AtomicityMode.RECORD_FIRST)).validate().getRequestTimeoutMs())
        .isEqualTo(10_000);
    assertThatThrownBy(() -> o.setRequestTimeoutMs(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("requestTimeoutMs must be in 1..3600000 ms but was 0");
  }
}
