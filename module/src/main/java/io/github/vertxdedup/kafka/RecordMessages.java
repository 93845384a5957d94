package io.github.vertxdedup.kafka;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.json.pointer.JsonPointer;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.kafka.client.producer.KafkaHeader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/*
 * Why text or binary per header, and a failure for a value of another type: the request is JSON, and JSON holds text.
 * A record's key and value have the type their deserializer gives, which the application chose, so the rule is by
 * type and documented (docs/kafka.md, "Deploy from configuration"): text and JSON pass as they are, bytes as Vert.x's
 * JSON binary (base64), and a type with no faithful JSON form fails the request, naming the type, rather than being
 * carried as its toString(). Header values are bytes whatever the deserializers, almost always UTF-8 text (ids,
 * trace context); decoding them strictly and carrying the rare header that is not UTF-8 as binary keeps every header
 * readable as text without ever altering one.
 */

/**
 * The JSON messages of a {@link DedupKafkaVerticle}: a record as the request its address receives, a dead letter as
 * the request its dead-letter address receives, and a record's value read as JSON for an identity found by a JSON
 * pointer. Stateless; safe to call from any thread.
 */
final class RecordMessages {

  private RecordMessages() {}

  /**
   * The request of a record: {@code topic}, {@code partition}, {@code offset}, {@code timestamp} (milliseconds since
   * the epoch; absent if the record has none), {@code timestampType} (Kafka's {@code TimestampType} name),
   * {@code key}, {@code value} and {@code headers}, a JSON array of {@code {"key": name, "value": text}} in the
   * record's order ({@code "value": null} for a header without a value, and {@code {"key": name, "binary": base64}}
   * for one whose value is not UTF-8). The key and the value are carried by their type, see {@link #json}.
   *
   * @param record the record
   * @return a new JSON object
   * @throws IllegalArgumentException if the key or the value has a type that has no JSON form here (naming it)
   */
  static JsonObject record(KafkaConsumerRecord<?, ?> record) {
    return envelope(record, json("key", record.key()), json("value", record.value()));
  }

  /**
   * The request of a dead letter: the record's fields as {@link #record} writes them, and {@code reason} (the
   * {@link DeadLetter.Reason} name), {@code detail}, {@code attempts} and {@code cause} (the last failure's message,
   * absent if none). Never fails: a key or value with no JSON form is carried as its {@code toString()} text, since a
   * dead letter that could not be written would hold its partition forever.
   *
   * @param deadLetter the dead letter
   * @return a new JSON object
   */
  static JsonObject deadLetter(DeadLetter<?, ?> deadLetter) {
    KafkaConsumerRecord<?, ?> record = deadLetter.record();
    JsonObject json = envelope(record, jsonOrText(record.key()), jsonOrText(record.value()))
        .put("reason", deadLetter.reason().name())
        .put("detail", deadLetter.detail())
        .put("attempts", deadLetter.attempts());
    if (deadLetter.cause() != null) {
      json.put("cause", String.valueOf(deadLetter.cause().getMessage()));
    }
    return json;
  }

  /**
   * The identity at a JSON pointer into a record's value: the value read as JSON (a string or bytes are parsed, a
   * JSON object or array used as it is), then the pointer followed. A string found is the id; a number is its JSON
   * text ({@code 42} and {@code "42"} are one id).
   *
   * @param value the record's value
   * @param pointer the pointer
   * @return the id, or null if there is nothing, null, an empty string, a boolean, an object or an array there
   * @throws io.vertx.core.json.DecodeException if the value is not JSON
   * @throws IllegalArgumentException if the value has a type that cannot be read as JSON (naming it)
   */
  static String idAt(Object value, JsonPointer pointer) {
    Object tree;
    if (value instanceof JsonObject || value instanceof JsonArray) {
      tree = value;
    } else if (value instanceof String s) {
      tree = Json.decodeValue(s);
    } else if (value instanceof byte[] bytes) {
      tree = Json.decodeValue(Buffer.buffer(bytes));
    } else if (value instanceof Buffer buffer) {
      tree = Json.decodeValue(buffer);
    } else if (value == null) {
      return null;
    } else {
      throw new IllegalArgumentException("the record value is a " + value.getClass().getName()
          + ", which cannot be read as JSON: use a String, byte[], Buffer, JsonObject or JsonArray deserializer");
    }
    Object found = pointer.queryJson(tree);
    if (found instanceof String s) {
      return s.isEmpty() ? null : s;
    }
    if (found instanceof Number n) {
      return n.toString();
    }
    return null;
  }

  /**
   * A key or value as it is carried: {@code null}, a string, a number, a boolean, a JSON object or array as they
   * are; {@code byte[]} and {@link Buffer} as Vert.x's JSON binary (the base64 text
   * {@link JsonObject#put(String, Object)} writes for bytes, read back with {@link JsonObject#getBinary}).
   *
   * @throws IllegalArgumentException for any other type, naming the field and the type
   */
  private static Object json(String field, Object v) {
    Object json = jsonOrNull(v);
    if (json == null && v != null) {
      throw new IllegalArgumentException("the record " + field + " is a " + v.getClass().getName() + ", which has no"
          + " JSON form in a request: use a String (the default), byte[], Buffer, JsonObject, JsonArray, number or"
          + " boolean deserializer");
    }
    return json;
  }

  private static Object jsonOrText(Object v) {
    Object json = jsonOrNull(v);
    return json != null || v == null ? json : v.toString();
  }

  /** The JSON form of a supported type, or null for null and for a type without one. */
  private static Object jsonOrNull(Object v) {
    if (v instanceof String || v instanceof Number || v instanceof Boolean || v instanceof JsonObject
        || v instanceof JsonArray) {
      return v;
    }
    if (v instanceof byte[] bytes) {
      return bytes;
    }
    if (v instanceof Buffer buffer) {
      return buffer.getBytes();
    }
    return null;
  }

  private static JsonObject envelope(KafkaConsumerRecord<?, ?> record, Object key, Object value) {
    JsonObject json = new JsonObject()
        .put("topic", record.topic())
        .put("partition", record.partition())
        .put("offset", record.offset());
    if (record.timestamp() >= 0) {
      json.put("timestamp", record.timestamp());
    }
    json.put("timestampType", record.timestampType().name())
        .put("key", key)
        .put("value", value);
    // The wrapped Kafka record's headers when there is one: the Vert.x record's header list cannot be built for a
    // header without a value (Buffer.buffer(null) throws), and reading them this way makes no copies.
    JsonArray headers = new JsonArray();
    ConsumerRecord<?, ?> kafkaRecord = record.record();
    if (kafkaRecord != null) {
      for (Header header : kafkaRecord.headers()) {
        headers.add(header(header.key(), header.value()));
      }
    } else {
      for (KafkaHeader header : record.headers()) {
        headers.add(header(header.key(), header.value() == null ? null : header.value().getBytes()));
      }
    }
    return json.put("headers", headers);
  }

  private static JsonObject header(String key, byte[] bytes) {
    JsonObject json = new JsonObject().put("key", key);
    if (bytes == null) {
      return json.put("value", null);
    }
    try {
      return json.put("value", StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes)).toString());
    } catch (CharacterCodingException notUtf8) {
      return json.put("binary", bytes);
    }
  }
}
