package io.github.vertxdedup.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.json.pointer.JsonPointer;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.kafka.client.consumer.impl.KafkaConsumerRecordImpl;
import io.vertx.kafka.client.producer.KafkaHeader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** A record as the JSON request the verticle sends, a dead letter as its request, and the id at a JSON pointer. */
class RecordMessagesTest {

  private static <K, V> KafkaConsumerRecord<K, V> record(K key, V value, RecordHeaders headers, long timestamp,
      TimestampType type) {
    return new KafkaConsumerRecordImpl<>(new ConsumerRecord<>("payments", 2, 41L, timestamp, type, -1, -1, key, value,
        headers, Optional.empty()));
  }

  private static <K, V> KafkaConsumerRecord<K, V> record(K key, V value) {
    return record(key, value, new RecordHeaders(), 1_700_000_000_000L, TimestampType.CREATE_TIME);
  }

  @Test
  void shouldCarryTheRecordsFieldsAndItsHeadersInOrderAsText() {
    RecordHeaders headers = new RecordHeaders();
    headers.add("message-id", "p-1".getBytes(StandardCharsets.UTF_8));
    headers.add("trace", "Zürich".getBytes(StandardCharsets.UTF_8));
    headers.add("message-id", "p-1b".getBytes(StandardCharsets.UTF_8));
    headers.add("empty", null);
    JsonObject body = RecordMessages.record(record("p-1", "{\"amount\":5}", headers, 1_700_000_000_000L,
        TimestampType.LOG_APPEND_TIME));
    assertThat(body).isEqualTo(new JsonObject()
        .put("topic", "payments").put("partition", 2).put("offset", 41L).put("timestamp", 1_700_000_000_000L)
        .put("timestampType", "LOG_APPEND_TIME").put("key", "p-1").put("value", "{\"amount\":5}")
        .put("headers", new JsonArray()
            .add(new JsonObject().put("key", "message-id").put("value", "p-1"))
            .add(new JsonObject().put("key", "trace").put("value", "Zürich"))
            .add(new JsonObject().put("key", "message-id").put("value", "p-1b"))
            .add(new JsonObject().put("key", "empty").putNull("value"))));
    // What a handler at the address receives went through the event bus's JSON: encode and decode it.
    assertThat(new JsonObject(body.encode())).isEqualTo(body);
  }

  @Test
  void shouldCarryAHeaderThatIsNotUtf8AsBinary() {
    RecordHeaders headers = new RecordHeaders();
    byte[] bytes = {(byte) 0xff, 0x00, (byte) 0xc3};
    headers.add("span", bytes);
    JsonObject header = RecordMessages.record(record("k", "v", headers, 1, TimestampType.CREATE_TIME))
        .getJsonArray("headers").getJsonObject(0);
    assertThat(header.fieldNames()).containsExactlyInAnyOrder("key", "binary");
    assertThat(new JsonObject(header.encode()).getBinary("binary")).isEqualTo(bytes);
  }

  @Test
  void shouldReadTheHeadersOfARecordThatWrapsNoKafkaRecordFromItsKafkaHeaders() {
    KafkaConsumerRecord<String, String> unwrapped = new UnwrappedRecord<>(record("k", "v"),
        List.of(KafkaHeader.header("message-id", "p-1"),
            KafkaHeader.header("span", Buffer.buffer(new byte[] {(byte) 0xff}))));
    JsonObject body = RecordMessages.record(unwrapped);
    assertThat(body.getJsonArray("headers").getJsonObject(0))
        .isEqualTo(new JsonObject().put("key", "message-id").put("value", "p-1"));
    assertThat(body.getJsonArray("headers").getJsonObject(1).getBinary("binary")).isEqualTo(new byte[] {(byte) 0xff});
    assertThat(body.getString("value")).isEqualTo("v");
  }

  @Test
  void shouldLeaveOutTheTimestampOfARecordWithoutOne() {
    JsonObject body = RecordMessages.record(record(null, null, new RecordHeaders(), ConsumerRecord.NO_TIMESTAMP,
        TimestampType.NO_TIMESTAMP_TYPE));
    assertThat(body.containsKey("timestamp")).isFalse();
    assertThat(body.getString("timestampType")).isEqualTo("NO_TIMESTAMP_TYPE");
    assertThat(body.containsKey("key")).isTrue();
    assertThat(body.getValue("key")).isNull();
    assertThat(body.getValue("value")).isNull();
  }

  @Test
  void shouldCarryValuesByTheirDeserializersType() {
    byte[] bytes = {1, 2, (byte) 0xfe};
    JsonObject fromBytes = new JsonObject(RecordMessages.record(record(bytes, Buffer.buffer(bytes))).encode());
    assertThat(fromBytes.getBinary("key")).isEqualTo(bytes);
    assertThat(fromBytes.getBinary("value")).isEqualTo(bytes);

    JsonObject json = new JsonObject().put("amount", 5);
    JsonObject fromJson = RecordMessages.record(record(7L, json));
    assertThat(fromJson.getLong("key")).isEqualTo(7L);
    assertThat(fromJson.getJsonObject("value")).isEqualTo(json);
    assertThat(RecordMessages.record(record(true, new JsonArray().add(1))).getJsonArray("value"))
        .isEqualTo(new JsonArray().add(1));
  }

  @Test
  void shouldRefuseAValueWithoutAJsonFormNamingItsTypeButCarryItInADeadLetter() {
    KafkaConsumerRecord<String, Instant> r = record("k", Instant.EPOCH);
    assertThatThrownBy(() -> RecordMessages.record(r))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the record value is a java.time.Instant, which has no JSON form in a request: use a String (the"
            + " default), byte[], Buffer, JsonObject, JsonArray, number or boolean deserializer");

    DeadLetter<String, Instant> dead = new DeadLetter<>(r, DeadLetter.Reason.HANDLER_FAILED,
        "the handler failed 3 times", 3, new IllegalStateException("boom"));
    JsonObject body = RecordMessages.deadLetter(dead);
    assertThat(body.getString("value")).isEqualTo("1970-01-01T00:00:00Z");
    assertThat(body.getString("reason")).isEqualTo("HANDLER_FAILED");
    assertThat(body.getString("detail")).isEqualTo("the handler failed 3 times");
    assertThat(body.getInteger("attempts")).isEqualTo(3);
    assertThat(body.getString("cause")).isEqualTo("boom");
    assertThat(body.getString("topic")).isEqualTo("payments");
    assertThat(body.getLong("offset")).isEqualTo(41L);

    JsonObject noCause = RecordMessages.deadLetter(new DeadLetter<>(record("k", "v"),
        DeadLetter.Reason.NO_IDENTITY, "no id", 0, null));
    assertThat(noCause.containsKey("cause")).isFalse();
    assertThat(noCause.getString("value")).isEqualTo("v");
  }

  @Test
  void shouldFindTheIdAtAJsonPointerInTheValue() {
    JsonPointer pointer = JsonPointer.from("/payment/id");
    assertThat(RecordMessages.idAt("{\"payment\":{\"id\":\"p-7\"}}", pointer)).isEqualTo("p-7");
    assertThat(RecordMessages.idAt("{\"payment\":{\"id\":42}}", pointer)).isEqualTo("42");
    assertThat(RecordMessages.idAt(new JsonObject().put("payment", new JsonObject().put("id", "p-8")), pointer))
        .isEqualTo("p-8");
    assertThat(RecordMessages.idAt("{\"payment\":{\"id\":\"p-9\"}}".getBytes(StandardCharsets.UTF_8), pointer))
        .isEqualTo("p-9");
    assertThat(RecordMessages.idAt(Buffer.buffer("{\"payment\":{\"id\":\"p-10\"}}"), pointer)).isEqualTo("p-10");
    assertThat(RecordMessages.idAt(new JsonArray().add("a"), JsonPointer.from("/0"))).isEqualTo("a");
    // Nothing usable there: no identity.
    assertThat(RecordMessages.idAt("{\"payment\":{}}", pointer)).isNull();
    assertThat(RecordMessages.idAt("{\"payment\":{\"id\":\"\"}}", pointer)).isNull();
    assertThat(RecordMessages.idAt("{\"payment\":{\"id\":{\"v\":1}}}", pointer)).isNull();
    assertThat(RecordMessages.idAt("{\"payment\":{\"id\":true}}", pointer)).isNull();
    assertThat(RecordMessages.idAt("{\"payment\":{\"id\":null}}", pointer)).isNull();
    assertThat(RecordMessages.idAt(null, pointer)).isNull();
    // A value that is not JSON, or of a type that cannot be read as JSON: the extractor fails (no identity, with why).
    assertThatThrownBy(() -> RecordMessages.idAt("payment p-7", pointer)).isInstanceOf(DecodeException.class);
    assertThatThrownBy(() -> RecordMessages.idAt(Instant.EPOCH, pointer))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the record value is a java.time.Instant, which cannot be read as JSON: use a String, byte[],"
            + " Buffer, JsonObject or JsonArray deserializer");
  }
}
