package io.github.vertxdedup.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.DedupOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

class DedupKafkaOptionsTest {

  @Test
  void shouldRoundTripThroughJson() {
    DedupKafkaOptions o = new DedupKafkaOptions()
        .setDedup(new DedupOptions().setAddress("billing").setWindow(Duration.ofMinutes(5)).setLeaseMs(2000))
        .setMode(AtomicityMode.RECORD_FIRST)
        .setMaxAttempts(7)
        .setBackoffInitialMs(5)
        .setBackoffMaxMs(500)
        .setPollTimeoutMs(50)
        .setCommitIntervalMs(25)
        .setMaxBufferedPerPartition(64)
        .setMaxUnansweredCommits(3)
        .setRevocationTimeoutMs(3000)
        .setAssignmentTimeoutMs(4000)
        .setInstanceId("node-1")
        .setEventTimeSource(EventTimeSource.NONE)
        .setUncoveredRecords(UncoveredRecordPolicy.ACCEPT);
    DedupKafkaOptions back = new DedupKafkaOptions(new JsonObject(o.toJson().encode()));
    assertThat(back).isEqualTo(o);
    assertThat(back.getDedup().getLeaseMs()).isEqualTo(2000);
    assertThat(back.getMaxUnansweredCommits()).isEqualTo(3);
    assertThat(back.getEventTimeSource()).isEqualTo(EventTimeSource.NONE);
    assertThat(new DedupKafkaOptions(new DedupKafkaOptions(o).toJson())).isEqualTo(o);
    DedupKafkaOptions deadLetters = new DedupKafkaOptions(o).setEventTimeSource(EventTimeSource.RECORD_TIMESTAMP)
        .setUncoveredRecords(UncoveredRecordPolicy.DEAD_LETTER);
    DedupKafkaOptions back2 = new DedupKafkaOptions(new JsonObject(deadLetters.toJson().encode()));
    assertThat(back2).isEqualTo(deadLetters).isNotEqualTo(o);
    assertThat(back2.getUncoveredRecords()).isEqualTo(UncoveredRecordPolicy.DEAD_LETTER);
    assertThat(back2.getEventTimeSource()).isEqualTo(EventTimeSource.RECORD_TIMESTAMP);
  }

  @Test
  void shouldSendRecordTimestampsAndAcceptUncoveredRecordsByDefault() {
    DedupKafkaOptions o = new DedupKafkaOptions(new JsonObject());
    assertThat(o.getEventTimeSource()).isEqualTo(EventTimeSource.RECORD_TIMESTAMP)
        .isEqualTo(DedupKafkaOptions.DEFAULT_EVENT_TIME_SOURCE);
    assertThat(o.getUncoveredRecords()).isEqualTo(UncoveredRecordPolicy.ACCEPT)
        .isEqualTo(DedupKafkaOptions.DEFAULT_UNCOVERED_RECORDS);
  }

  @Test
  void shouldKeepTheDefaultAddressWhenTheJsonDedupHasNone() {
    DedupKafkaOptions o = new DedupKafkaOptions(new JsonObject().put("dedup", new JsonObject().put("windowMs", 60000)));
    assertThat(o.getDedup().getAddress()).isEqualTo(DedupKafkaOptions.DEFAULT_ADDRESS);
    assertThat(o.getMode()).isEqualTo(DedupKafkaOptions.DEFAULT_MODE);
  }

  @Test
  void shouldNameTheFieldAndLimitOfABadValue() {
    assertThatThrownBy(() -> new DedupKafkaOptions().setMaxAttempts(1001))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("maxAttempts must be in 1..1000 but was 1001");
    assertThatThrownBy(() -> new DedupKafkaOptions().setLookBackMs(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("lookBackMs must be in 0..604800000 ms but was -1");
    assertThatThrownBy(() -> new DedupKafkaOptions().setCommitIntervalMs(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("commitIntervalMs must be in 1..");
    assertThatThrownBy(() -> new DedupKafkaOptions().setPollTimeoutMs(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("pollTimeoutMs must be in 1..");
    assertThatThrownBy(() -> new DedupKafkaOptions(new JsonObject().put("maxAtempts", 3)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("unknown dedup kafka option 'maxAtempts' (known: dedup, mode, maxAttempts,");
    assertThatThrownBy(() -> new DedupKafkaOptions(new JsonObject().put("mode", "BOTH")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("dedup kafka option 'mode' must be one of the JSON strings RECORD_FIRST | EFFECT_FIRST | INBOX but"
            + " was the string \"BOTH\"");
    assertThatThrownBy(() -> new DedupKafkaOptions().setDedup(new DedupOptions().setWindowMs(60000))
        .setBackoffInitialMs(100).setBackoffMaxMs(10).validate())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("backoffInitialMs must be <= backoffMaxMs (10) but was 100");
    assertThatThrownBy(() -> new DedupKafkaOptions().setInstanceId("\u00e9".repeat(128)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("instanceId must be at most 255 bytes in UTF-8").hasMessageEndingWith("but was 256");
    new DedupKafkaOptions().setInstanceId("x".repeat(255)); // the limit itself is fine
    assertThatThrownBy(() -> new DedupKafkaOptions().setMaxUnansweredCommits(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxUnansweredCommits must be in 1..1000000 but was 0");
    assertThatThrownBy(() -> new DedupKafkaOptions().setMaxUnansweredOffsetCommits(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxUnansweredOffsetCommits must be in 1..1000000 but was 0");
    assertThatThrownBy(() -> new DedupKafkaOptions(new JsonObject().put("eventTimeSource", "HEADER")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("dedup kafka option 'eventTimeSource' must be one of the JSON strings RECORD_TIMESTAMP | NONE but"
            + " was the string \"HEADER\"");
    assertThatThrownBy(() -> new DedupKafkaOptions(new JsonObject().put("uncoveredRecords", "DROP")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("dedup kafka option 'uncoveredRecords' must be one of the JSON strings ACCEPT | DEAD_LETTER but"
            + " was the string \"DROP\"");
    assertThatThrownBy(() -> new DedupKafkaOptions().setEventTimeSource(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("eventTimeSource must be RECORD_TIMESTAMP or NONE but was null");
    assertThatThrownBy(() -> new DedupKafkaOptions().setUncoveredRecords(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("uncoveredRecords must be ACCEPT or DEAD_LETTER but was null");
    assertThatThrownBy(() -> new DedupKafkaOptions().setDedup(new DedupOptions().setWindowMs(60000))
        .setEventTimeSource(EventTimeSource.NONE).setUncoveredRecords(UncoveredRecordPolicy.DEAD_LETTER).validate())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("uncoveredRecords DEAD_LETTER needs an event time, but eventTimeSource was NONE");
  }

  @Test
  void shouldRefuseTheChangelogInInboxModeNamingBothFields() {
    DedupKafkaOptions inbox = new DedupKafkaOptions().setDedup(new DedupOptions().setWindowMs(60000))
        .setMode(AtomicityMode.INBOX);
    assertThatThrownBy(() -> new DedupKafkaOptions(inbox).setChangelog(true).validate())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("changelog must be false in mode INBOX: the inbox table is the durable memory");
    assertThatThrownBy(() -> new DedupKafkaOptions(new JsonObject().put("dedup", new JsonObject().put("windowMs",
        60000)).put("mode", "INBOX").put("changelog", true)).validate())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("changelog must be false in mode INBOX");
    // Each alone is fine: the changelog in the other modes, INBOX without it.
    new DedupKafkaOptions(inbox).validate();
    new DedupKafkaOptions(inbox).setMode(AtomicityMode.EFFECT_FIRST).setChangelog(true).validate();
    assertThatThrownBy(() -> new DedupKafkaOptions().setMode(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("mode must be RECORD_FIRST, EFFECT_FIRST or INBOX but was null");
  }

  @Test
  void shouldRejectWrongJsonTypesNamingTheKeyAndTheExpectedType() {
    assertWrongType("maxAttempts", "5", "dedup kafka option 'maxAttempts' must be a JSON integer but was the string"
        + " \"5\"");
    assertWrongType("maxAttempts", 2.5, "dedup kafka option 'maxAttempts' must be a JSON integer but was the number"
        + " 2.5");
    assertWrongType("maxBufferedPerPartition", 4_294_967_297L, "dedup kafka option 'maxBufferedPerPartition' must be a"
        + " JSON integer in -2147483648..2147483647 but was the number 4294967297");
    assertWrongType("pollTimeoutMs", true, "dedup kafka option 'pollTimeoutMs' must be a JSON integer but was the"
        + " boolean true");
    assertWrongType("instanceId", 5, "dedup kafka option 'instanceId' must be a JSON string but was the number 5");
    assertWrongType("mode", new JsonObject(), "dedup kafka option 'mode' must be one of the JSON strings RECORD_FIRST"
        + " | EFFECT_FIRST | INBOX but was a JSON object");
    assertWrongType("dedup", "windowMs=60000", "dedup kafka option 'dedup' must be a JSON object but was the string"
        + " \"windowMs=60000\"");
    // Inside "dedup", the dedup options' own names and types.
    assertWrongType("dedup", new JsonObject().put("windowMs", "1m"), "in 'dedup': dedup option 'windowMs' must be a"
        + " JSON integer but was the string \"1m\"");
    assertThatThrownBy(() -> new DedupKafkaOptions(new JsonObject().put("dedup", new JsonObject().put("windowMS", 1))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("in 'dedup': unknown dedup option 'windowMS'");
  }

  private static void assertWrongType(String key, Object value, String message) {
    assertThatThrownBy(() -> new DedupKafkaOptions(new JsonObject().put(key, value)))
        .as("%s = %s", key, value)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }

  @Test
  void shouldReadAJsonNullAsTheDefault() {
    DedupKafkaOptions o = new DedupKafkaOptions(new JsonObject().put("dedup", null).put("maxAttempts", null)
        .put("instanceId", null).put("mode", null));
    assertThat(o).isEqualTo(new DedupKafkaOptions());
    DedupKafkaOptions d = new DedupKafkaOptions(new JsonObject()
        .put("dedup", new JsonObject().put("windowMs", 60_000).put("address", null)));
    assertThat(d.getDedup().getAddress()).isEqualTo(DedupKafkaOptions.DEFAULT_ADDRESS);
  }

  @Test
  void shouldCopyEveryValueIntoAnIndependentObject() {
    DedupKafkaOptions o = new DedupKafkaOptions(fullJson());
    DedupKafkaOptions copy = new DedupKafkaOptions(o);
    assertThat(copy).isEqualTo(o).isNotSameAs(o);
    assertThat(copy.toJson()).isEqualTo(fullJson());
    copy.setMaxAttempts(1).setInstanceId(null).setDedup(new DedupOptions().setWindowMs(120_000));
    assertThat(o.toJson()).isEqualTo(fullJson());
    o.getDedup().setLeaseMs(1); // a copy as well
    assertThat(o.toJson()).isEqualTo(fullJson());
  }

  @Test
  void shouldWriteEveryKeyItReads() {
    // Every key of the JSON form, each with a value other than its default: toJson writes them all back.
    JsonObject full = fullJson();
    assertThat(new DedupKafkaOptions(full).toJson()).isEqualTo(full);
    assertThat(full.fieldNames()).hasSize(17);
    for (String key : full.fieldNames()) {
      assertThat(new DedupKafkaOptions().toJson().getValue(key)).as(key).isNotEqualTo(full.getValue(key));
    }
  }

  /** Every key with a value other than its default (DEAD_LETTER without an event time is refused only by validate). */
  private static JsonObject fullJson() {
    return new JsonObject()
        .put("dedup", new DedupOptions().setAddress("billing").setWindowMs(300_000).setLeaseMs(2_000).toJson())
        .put("mode", "RECORD_FIRST").put("maxAttempts", 7).put("backoffInitialMs", 5L).put("backoffMaxMs", 500L)
        .put("pollTimeoutMs", 50L).put("commitIntervalMs", 25L).put("maxBufferedPerPartition", 64)
        .put("maxUnansweredCommits", 3).put("maxUnansweredOffsetCommits", 2).put("revocationTimeoutMs", 3_000L)
        .put("assignmentTimeoutMs", 4_000L).put("lookBackMs", 60_000L).put("changelog", true).put("instanceId", "node-1").put("eventTimeSource", "NONE").put("uncoveredRecords", "DEAD_LETTER");
  }

  @Test
  void shouldRefuseAConfigWithoutGroupOrWithAutoCommit() {
    Vertx vertx = Vertx.vertx();
    try {
      DedupKafkaOptions o = new DedupKafkaOptions().setDedup(new DedupOptions().setWindowMs(60000));
      assertThatThrownBy(() -> DedupKafkaConsumer.create(vertx, Map.of("bootstrap.servers", "x:1"), o))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("group.id is required");
      assertThatThrownBy(() -> DedupKafkaConsumer.create(vertx,
          Map.of("group.id", "g", "enable.auto.commit", "true"), o))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("enable.auto.commit must be false or absent but was true");
      assertThatThrownBy(() -> DedupKafkaConsumer.create(vertx, Map.of("group.id", "g"),
          new DedupKafkaOptions()))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("windowMs is required");
    } finally {
      vertx.close();
    }
  }

  /** A consumer closed before it subscribed stays closed: subscribe fails and starts no poll thread. */
  @Test
  void shouldRefuseToSubscribeAConsumerThatWasClosed() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>create(vertx, Map.of(
              "bootstrap.servers", "localhost:1", "group.id", "g",
              "key.deserializer", StringDeserializer.class.getName(),
              "value.deserializer", StringDeserializer.class.getName()),
              new DedupKafkaOptions().setDedup(new DedupOptions().setWindowMs(60000)))
          .identity(IdentityExtractor.recordKey()).handler(r -> Future.succeededFuture());
      c.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      Throwable refused = c.subscribe("orders").toCompletionStage().toCompletableFuture()
          .handle((v, e) -> e).get(10, TimeUnit.SECONDS);
      assertThat(refused).isInstanceOf(IllegalStateException.class).hasMessageContaining("the consumer is closed");
      assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().startsWith("dedup-kafka-poll-g-"));
    } finally {
      vertx.close();
    }
  }
}
