package io.github.vertxdedup.kafka;

import io.github.vertxdedup.impl.options.OptionSchema;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.json.pointer.JsonPointer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Configuration of a {@link DedupKafkaVerticle}: the Java form of the JSON object its deployment config holds under
 * {@value DedupKafkaVerticle#CONFIG_KEY}. A Vert.x data object: the default, copy and {@link JsonObject}
 * constructors, {@link #toJson()}, fluent setters that validate their own value and throw
 * {@link IllegalArgumentException} naming it; {@link #toJson()} and {@link #DedupKafkaVerticleOptions(JsonObject)}
 * round-trip. Rules that relate two values, and the required ones, are checked by {@link #validate()}, which the
 * verticle calls before it connects to Kafka.
 *
 * <p>JSON form:
 * <pre>{@code
 * {"address": "billing.payments",                     // required: where each record is sent as a request
 *  "topics": ["payments"],                            // required, not empty
 *  "kafka": {"bootstrap.servers": "localhost:9092",   // the Kafka consumer config; group.id is required
 *            "group.id": "billing", "max.poll.records": 500},
 *  "identity": {"header": "message-id"},              // required: exactly one of header, recordKey, valuePointer
 *  "options": {"dedup": {"windowMs": 600000}, "mode": "EFFECT_FIRST"},  // DedupKafkaOptions' JSON form
 *  "requestTimeoutMs": 10000,
 *  "deadLetterAddress": "billing.payments.dead"}      // optional
 * }</pre>
 * It is read strictly, with the same rules as {@link DedupKafkaOptions}' (one reader checks both): an unknown key, a
 * value of the wrong JSON type and a value out of range are errors that name the key and what it must be; a key whose
 * value is JSON {@code null} keeps its default. The members of {@code "kafka"} are Kafka's to check (an unknown one
 * is logged by the Kafka client); their values must be JSON strings, numbers or booleans and are handed to Kafka as
 * text, and a member whose value is {@code null} is left out. {@code key.deserializer} and {@code value.deserializer} default to Kafka's {@code StringDeserializer}.
 *
 * <p>Not thread-safe: build it on one thread, then hand it over (deployment copies it into JSON).
 */
@DataObject
public class DedupKafkaVerticleOptions {

  /**
   * Default time a record's request may wait for its reply: 10 s. With the default lease (30 s) it leaves an
   * effect-first claim more than twice the longest handler call, as {@link #validate()} requires.
   */
  public static final long DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
  /** Largest {@code requestTimeoutMs}: 1 hour, as the consumer's other delays. */
  public static final long MAX_REQUEST_TIMEOUT_MS = DedupKafkaOptions.MAX_DELAY_MS;

  /** The JSON form: every key, its JSON type and its setter, in the order {@link #toJson()} writes them. */
  private static final OptionSchema<DedupKafkaVerticleOptions> JSON =
      new OptionSchema<DedupKafkaVerticleOptions>("dedup kafka verticle option")
          .string("address", DedupKafkaVerticleOptions::setAddress)
          .strings("topics", DedupKafkaVerticleOptions::setTopics)
          .textMap("kafka", DedupKafkaVerticleOptions::setKafkaConfig)
          .object("identity", DedupKafkaVerticleOptions::readIdentity)
          .nested("options", (o, json) -> o.setOptions(new DedupKafkaOptions(json)))
          .longValue("requestTimeoutMs", DedupKafkaVerticleOptions::setRequestTimeoutMs)
          .string("deadLetterAddress", DedupKafkaVerticleOptions::setDeadLetterAddress);

  /** The JSON form of {@code "identity"}: its three ways, of which exactly one must be given. */
  private static final OptionSchema<IdentityJson> IDENTITY_JSON =
      new OptionSchema<IdentityJson>("dedup kafka identity option")
          .string("header", (i, header) -> i.header = header)
          .bool("recordKey", (i, recordKey) -> i.recordKey = recordKey)
          .string("valuePointer", (i, pointer) -> i.valuePointer = pointer);

  private String address;
  private List<String> topics = new ArrayList<>();
  private Map<String, String> kafkaConfig = new LinkedHashMap<>();
  private String identityHeader;
  private boolean identityRecordKey;
  private String identityValuePointer;
  private DedupKafkaOptions options = new DedupKafkaOptions();
  private long requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS;
  private String deadLetterAddress;

  /** Creates options with the defaults; the address, topics, identity and a window are still required. */
  public DedupKafkaVerticleOptions() {
  }

  /**
   * Copies options.
   *
   * @param other the options to copy
   */
  public DedupKafkaVerticleOptions(DedupKafkaVerticleOptions other) {
    this.address = other.address;
    this.topics = new ArrayList<>(other.topics);
    this.kafkaConfig = new LinkedHashMap<>(other.kafkaConfig);
    this.identityHeader = other.identityHeader;
    this.identityRecordKey = other.identityRecordKey;
    this.identityValuePointer = other.identityValuePointer;
    this.options = new DedupKafkaOptions(other.options);
    this.requestTimeoutMs = other.requestTimeoutMs;
    this.deadLetterAddress = other.deadLetterAddress;
  }

  /**
   * Reads the JSON form (what {@link #toJson()} writes); absent keys, and keys whose value is JSON {@code null}, keep
   * their defaults.
   *
   * @param json the options
   * @throws IllegalArgumentException on an unknown key (the message lists the known ones), on a value of the wrong
   *     JSON type (naming the key and the type it must have, e.g. {@code dedup kafka verticle option 'topics' must be
   *     a JSON array of strings but was the string "payments"}), on a value out of range (naming the key and its
   *     limit), on an {@code "identity"} that does not name exactly one way; inside {@code "options"}, as
   *     {@link DedupKafkaOptions#DedupKafkaOptions(JsonObject)}, the message prefixed with the path of the object
   *     ({@code in 'options.dedup': dedup option 'leaseMs' ...})
   * @throws NullPointerException if {@code json} is null
   */
  public DedupKafkaVerticleOptions(JsonObject json) {
    JSON.read(json, this);
  }

  /**
   * Writes the JSON form; a key whose value is not set (the address, the identity, the dead-letter address) is left
   * out.
   *
   * @return a new JSON object
   */
  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    if (address != null) {
      json.put("address", address);
    }
    json.put("topics", new JsonArray(new ArrayList<>(topics)));
    json.put("kafka", new JsonObject(new LinkedHashMap<>(kafkaConfig)));
    if (identityHeader != null) {
      json.put("identity", new JsonObject().put("header", identityHeader));
    } else if (identityRecordKey) {
      json.put("identity", new JsonObject().put("recordKey", true));
    } else if (identityValuePointer != null) {
      json.put("identity", new JsonObject().put("valuePointer", identityValuePointer));
    }
    json.put("options", options.toJson());
    json.put("requestTimeoutMs", requestTimeoutMs);
    if (deadLetterAddress != null) {
      json.put("deadLetterAddress", deadLetterAddress);
    }
    return json;
  }

  /**
   * Checks the options as a whole: the address, at least one topic and an identity are set; the consumer's options
   * are valid ({@link DedupKafkaOptions#validate()}), and their mode is not {@link AtomicityMode#INBOX} (a database
   * transaction cannot travel over the event bus); and in {@link AtomicityMode#EFFECT_FIRST} the claim lease
   * ({@code options.dedup.leaseMs}) is more than twice {@code requestTimeoutMs}. A request is the handler call, and
   * a handler starts with at least half a lease left on its claim: so no claim runs out while its request may still
   * be answered, and no other copy of the record can be claimed and handled meanwhile.
   *
   * @return this
   * @throws IllegalArgumentException naming the missing or mismatched option and its limit
   */
  public DedupKafkaVerticleOptions validate() {
    if (address == null) {
      throw new IllegalArgumentException("address is required: the event-bus address each record is sent to");
    }
    if (topics.isEmpty()) {
      throw new IllegalArgumentException("topics is required: a JSON array of at least one topic name");
    }
    if (identityHeader == null && !identityRecordKey && identityValuePointer == null) {
      throw new IllegalArgumentException("identity is required: {\"header\": name}, {\"recordKey\": true} or"
          + " {\"valuePointer\": JSON pointer}");
    }
    options.validate();
    if (options.getMode() == AtomicityMode.INBOX) {
      throw new IllegalArgumentException("options.mode INBOX is not available to the verticle: the inbox's handler"
          + " writes in a database transaction on the consumer's connection (DedupKafkaConsumer.inbox); use"
          + " EFFECT_FIRST or RECORD_FIRST");
    }
    long leaseMs = options.getDedup().getLeaseMs();
    if (options.getMode() == AtomicityMode.EFFECT_FIRST && leaseMs <= 2 * requestTimeoutMs) {
      throw new IllegalArgumentException("requestTimeoutMs must be less than half of the claim lease (options.dedup"
          + ".leaseMs " + leaseMs + ") in EFFECT_FIRST mode but was " + requestTimeoutMs
          + ": a claim could run out while its record's request is still unanswered");
    }
    return this;
  }

  /** @return the event-bus address each accepted record is sent to as a request; null if not set */
  public String getAddress() {
    return address;
  }

  /**
   * Sets the event-bus address each accepted record is sent to as a request (required). The reply decides: any reply
   * is the handler's success, a failure reply or no reply within {@code requestTimeoutMs} its failure.
   *
   * @param address the address, not empty
   * @return this
   * @throws IllegalArgumentException if null or empty
   */
  public DedupKafkaVerticleOptions setAddress(String address) {
    this.address = nonEmpty("address", address);
    return this;
  }

  /** @return a copy of the topics consumed */
  public List<String> getTopics() {
    return new ArrayList<>(topics);
  }

  /**
   * Sets the topics consumed (required: at least one, checked by {@link #validate()}).
   *
   * @param topics the topic names, each not empty; copied
   * @return this
   * @throws IllegalArgumentException if the list or one of its names is null or empty
   */
  public DedupKafkaVerticleOptions setTopics(List<String> topics) {
    if (topics == null) {
      throw new IllegalArgumentException("topics must be a list of topic names but was null");
    }
    for (int i = 0; i < topics.size(); i++) {
      String topic = topics.get(i);
      if (topic == null || topic.isEmpty()) {
        throw new IllegalArgumentException("topics must hold non-empty topic names but element " + i + " was "
            + (topic == null ? "null" : "empty"));
      }
    }
    this.topics = new ArrayList<>(topics);
    return this;
  }

  /** @return a copy of the Kafka consumer config */
  public Map<String, String> getKafkaConfig() {
    return new LinkedHashMap<>(kafkaConfig);
  }

  /**
   * Sets the Kafka consumer config (JSON key {@code "kafka"}), as {@link DedupKafkaConsumer#create} takes it:
   * {@code bootstrap.servers} and {@code group.id} are required, {@code enable.auto.commit} must be absent or false;
   * the deserializers default to Kafka's {@code StringDeserializer}. The consumer checks it when the verticle starts.
   *
   * @param kafkaConfig the settings; copied
   * @return this
   * @throws IllegalArgumentException if null, or if a name or value is null
   */
  public DedupKafkaVerticleOptions setKafkaConfig(Map<String, String> kafkaConfig) {
    if (kafkaConfig == null) {
      throw new IllegalArgumentException("kafka must be a map of Kafka consumer settings but was null");
    }
    kafkaConfig.forEach((k, v) -> {
      if (k == null || v == null) {
        throw new IllegalArgumentException("kafka must not hold a null setting name or value but held " + k + "="
            + v);
      }
    });
    this.kafkaConfig = new LinkedHashMap<>(kafkaConfig);
    return this;
  }

  /** @return the header whose last value is a record's id, or null if the identity is another */
  public String getIdentityHeader() {
    return identityHeader;
  }

  /**
   * The id of a record is the last value of a header, as UTF-8 ({@link IdentityExtractor#header}); JSON
   * {@code "identity": {"header": name}}. Replaces any other identity set before.
   *
   * @param header the header name, not empty
   * @return this
   * @throws IllegalArgumentException if null or empty
   */
  public DedupKafkaVerticleOptions setIdentityHeader(String header) {
    this.identityHeader = nonEmpty("identity header", header);
    this.identityRecordKey = false;
    this.identityValuePointer = null;
    return this;
  }

  /** @return true if the id of a record is its key */
  public boolean isIdentityRecordKey() {
    return identityRecordKey;
  }

  /**
   * With {@code true}, the id of a record is its key ({@link IdentityExtractor#recordKey}: the key's
   * {@code String.valueOf}, so the key deserializer should give a {@code String}, as the default does); JSON
   * {@code "identity": {"recordKey": true}}. Replaces any other identity set before; {@code false} only unsets this
   * one.
   *
   * @param recordKey whether the record key is the id
   * @return this
   */
  public DedupKafkaVerticleOptions setIdentityRecordKey(boolean recordKey) {
    this.identityRecordKey = recordKey;
    if (recordKey) {
      this.identityHeader = null;
      this.identityValuePointer = null;
    }
    return this;
  }

  /** @return the JSON pointer (RFC 6901) into a record's value that finds its id, or null if the identity is another */
  public String getIdentityValuePointer() {
    return identityValuePointer;
  }

  /**
   * The id of a record is the value at a JSON pointer (RFC 6901, e.g. {@code /payment/id}) in its value read as JSON
   * (a string value is parsed; a value that is a JSON object or array already is used as it is). A string found
   * there is the id, a number its JSON text; nothing there, or anything else, means the record has no identity, as
   * does a value that is not JSON. JSON {@code "identity": {"valuePointer": pointer}}. Replaces any other identity
   * set before.
   *
   * @param pointer the JSON pointer
   * @return this
   * @throws IllegalArgumentException if null, or not a valid JSON pointer
   */
  public DedupKafkaVerticleOptions setIdentityValuePointer(String pointer) {
    if (pointer == null) {
      throw new IllegalArgumentException("identity valuePointer must be a JSON pointer but was null");
    }
    try {
      JsonPointer.from(pointer);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("identity valuePointer must be a JSON pointer (RFC 6901, e.g. /payment/id)"
          + " but was \"" + pointer + "\": " + e.getMessage(), e);
    }
    this.identityValuePointer = pointer;
    this.identityHeader = null;
    this.identityRecordKey = false;
    return this;
  }

  /** @return a copy of the consumer's options: its windows, atomicity mode, retries and poll loop */
  public DedupKafkaOptions getOptions() {
    return new DedupKafkaOptions(options);
  }

  /**
   * Sets the consumer's options: the windows' dedup settings ({@code windowMs} required), the atomicity mode, the
   * retry policy and the poll loop (JSON key {@code "options"}, in {@link DedupKafkaOptions}' JSON form).
   *
   * @param options the options; copied
   * @return this
   * @throws NullPointerException if null
   */
  public DedupKafkaVerticleOptions setOptions(DedupKafkaOptions options) {
    this.options = new DedupKafkaOptions(Objects.requireNonNull(options, "options"));
    return this;
  }

  /** @return how long a record's request waits for its reply, in milliseconds */
  public long getRequestTimeoutMs() {
    return requestTimeoutMs;
  }

  /**
   * Sets how long a record's request waits for its reply (the event bus's send timeout). No reply within it is a
   * failure of the handler: the record is retried, then dead-lettered. The handler at the address may still be
   * running when the timeout fires, and the retry may then apply the record a second time: keep it above the
   * slowest handler call. In {@link AtomicityMode#EFFECT_FIRST} it must be less than half the claim lease
   * ({@link #validate()}).
   *
   * @param requestTimeoutMs 1..{@value #MAX_REQUEST_TIMEOUT_MS} milliseconds
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupKafkaVerticleOptions setRequestTimeoutMs(long requestTimeoutMs) {
    if (requestTimeoutMs < 1 || requestTimeoutMs > MAX_REQUEST_TIMEOUT_MS) {
      throw new IllegalArgumentException("requestTimeoutMs must be in 1.." + MAX_REQUEST_TIMEOUT_MS + " ms but was "
          + requestTimeoutMs);
    }
    this.requestTimeoutMs = requestTimeoutMs;
    return this;
  }

  /**
   * @param timeout see {@link #setRequestTimeoutMs}
   * @return this
   */
  public DedupKafkaVerticleOptions setRequestTimeout(Duration timeout) {
    return setRequestTimeoutMs(timeout.toMillis());
  }

  /** @return the event-bus address dead letters are sent to as requests; null if they are only logged */
  public String getDeadLetterAddress() {
    return deadLetterAddress;
  }

  /**
   * Sets the event-bus address each dead letter is sent to as a request (optional). A dead letter is done with once
   * a reply comes back; a failure reply or no reply within {@code requestTimeoutMs} is retried with backoff until one
   * does, the partition waiting meanwhile (a dead letter is never dropped silently). Without it, dead letters are
   * logged at WARN and counted, then skipped.
   *
   * @param deadLetterAddress the address, not empty
   * @return this
   * @throws IllegalArgumentException if null or empty
   */
  public DedupKafkaVerticleOptions setDeadLetterAddress(String deadLetterAddress) {
    this.deadLetterAddress = nonEmpty("deadLetterAddress", deadLetterAddress);
    return this;
  }

  /** Reads {@code "identity"}: exactly one of its ways ({@code recordKey: false} names none). */
  private static void readIdentity(DedupKafkaVerticleOptions o, JsonObject json) {
    IdentityJson identity = IDENTITY_JSON.read(json, new IdentityJson());
    List<String> named = new ArrayList<>();
    if (identity.header != null) {
      named.add("header");
    }
    if (Boolean.TRUE.equals(identity.recordKey)) {
      named.add("recordKey");
    }
    if (identity.valuePointer != null) {
      named.add("valuePointer");
    }
    if (named.size() != 1) {
      throw new IllegalArgumentException("dedup kafka verticle option 'identity' must name exactly one of header,"
          + " recordKey (true), valuePointer but named " + (named.isEmpty() ? "none" : String.join(" and ", named)));
    }
    if (identity.header != null) {
      o.setIdentityHeader(identity.header);
    } else if (identity.valuePointer != null) {
      o.setIdentityValuePointer(identity.valuePointer);
    } else {
      o.setIdentityRecordKey(true);
    }
  }

  private static String nonEmpty(String name, String value) {
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException(name + " must be a non-empty string but was "
          + (value == null ? "null" : "empty"));
    }
    return value;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof DedupKafkaVerticleOptions other && toJson().equals(other.toJson());
  }

  @Override
  public int hashCode() {
    return toJson().hashCode();
  }

  @Override
  public String toString() {
    return "DedupKafkaVerticleOptions" + toJson().encode();
  }

  /** What {@code "identity"} named, before the one-way rule is checked. */
  private static final class IdentityJson {
    String header;
    Boolean recordKey;
    String valuePointer;
  }
}
