package io.github.vertxdedup.impl.protocol;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.window.Fingerprinter;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * Validates request bodies (JSON from the wire, or {@link DedupEvent}s from the local codec) and reduces them to
 * {@link ParsedEvent}s. Strict: a missing, null, mistyped, out-of-range, unknown or misplaced field is a
 * {@link RequestFailure} 400 whose message names the field (prefixed {@code events[i].} inside a batch) and the
 * limit. An unknown field is an error so that a typo ({@code eventTime}) is not silently ignored. Optional fields
 * other than {@code id} may be null, which means absent (JSON writers often emit nulls for unset fields).
 *
 * <p>Limits: {@code id} and {@code key} 1..maxIdBytes UTF-8 bytes; {@code payloadHash} 1..{@value
 * #MAX_PAYLOAD_HASH_CHARS} characters; {@code eventTimeMs} at least 0 (a time after now counts as now, see
 * {@link #eventTime}); {@code rememberUntilMs} after now and at most {@code now + windowMs}; {@code leaseMs} in
 * {@code 1 ..} {@link DedupOptions#MAX_LEASE_MS};
 * {@code claimToken} 1..{@value #MAX_CLAIM_TOKEN_CHARS} characters; {@code claimer} 1..{@value #MAX_CLAIMER_BYTES}
 * UTF-8 bytes (the journal's column); a batch holds at most {@code maxBatch} events.
 * An event must also fit the service's routing mode ({@link PartitionRouting#refusal}: with {@code routeByKey} a
 * {@code key} is required; without it a {@code key} is refused when there is more than one partition), and a
 * partition refuses an event that another partition owns (see {@link PartitionRouting}).
 *
 * <p>Immutable; used on one event loop (the partition's or the router's).
 */
public final class RequestDecoder {

  /** Longest {@code payloadHash} text (a hex SHA-512 is 128). */
  static final int MAX_PAYLOAD_HASH_CHARS = 256;
  /** Longest {@code claimToken} text accepted for comparison. */
  static final int MAX_CLAIM_TOKEN_CHARS = 64;
  /** Longest {@code claimer} in UTF-8 bytes: the journal's claimer column ({@code Journal.MAX_CLAIMER_BYTES}). */
  static final int MAX_CLAIMER_BYTES = io.github.vertxdedup.journal.Journal.MAX_CLAIMER_BYTES;

  private final String address;
  private final int maxIdBytes;
  private final int maxBatch;
  private final long windowMs;
  private final PartitionRouting routing;
  /** The partition this decoder serves, or -1 for none (it then accepts an event that fits the mode anywhere). */
  private final int partition;
  private final Fingerprinter ids;
  private final Fingerprinter keys;

  public RequestDecoder(DedupOptions options, int partition) {
    this.address = options.getAddress();
    this.maxIdBytes = options.getMaxIdBytes();
    this.maxBatch = options.getMaxBatch();
    this.windowMs = options.getWindowMs();
    this.routing = new PartitionRouting(options);
    this.partition = partition;
    this.ids = Fingerprinter.forScope(PartitionRouting.idScope(address));
    this.keys = Fingerprinter.forScope(PartitionRouting.keyScope(address));
  }

  /**
   * Reads the action header.
   *
   * @param header the header value, may be null
   * @return the action
   * @throws RequestFailure 400 if missing or unknown
   */
  public static DedupAction action(String header) {
    DedupAction a = DedupAction.fromWireName(header);
    if (a == null) {
      String names = "check, claim, commit, release, lookup, stats, checkBatch, claimBatch, commitBatch";
      throw RequestFailure.badRequest(header == null
          ? "action header is required (one of " + names + ")"
          : "action must be one of " + names + " but was '" + abbreviate(header) + "'");
    }
    return a;
  }

  /**
   * Requires a JSON object body.
   *
   * @param body the message body
   * @return it, as a JSON object
   * @throws RequestFailure 400 otherwise
   */
  public static JsonObject requireObject(Object body) {
    if (body instanceof JsonObject json) {
      return json;
    }
    throw RequestFailure.badRequest("body must be a JSON object but was " + describe(body));
  }

  /**
   * Checks a {@code stats} body: absent or an empty object.
   *
   * @param body the message body
   * @throws RequestFailure 400 if it is not a JSON object or has any field
   */
  public static void requireStatsBody(Object body) {
    if (body == null) {
      return;
    }
    JsonObject json = requireObject(body);
    for (String f : json.fieldNames()) {
      throw RequestFailure.badRequest("unknown field '" + abbreviate(f) + "' (stats takes no field)");
    }
  }

  /**
   * Decodes one event of a single request: each field in the body's order, as {@link #read} checks it.
   *
   * @param body the JSON body
   * @param action a single action (not stats, not a batch)
   * @param nowMs the partition's current time, for the limits of instants
   * @param index the event's index in a batch, or -1
   * @return the event
   * @throws RequestFailure 400 naming the first bad field
   */
  public ParsedEvent decode(JsonObject body, DedupAction action, long nowMs, int index) {
    ParsedEvent e = new ParsedEvent();
    boolean hasId = false;
    for (Map.Entry<String, Object> f : body.getMap().entrySet()) {
      EventField field = EventField.named(f.getKey());
      if (field == null) {
        throw RequestFailure.badRequest("unknown field '" + field(index, abbreviate(f.getKey()))
            + "' (fields of " + action.wireName() + ": " + EventField.namesFor(action) + ")");
      }
      hasId |= field == EventField.ID;
      read(e, field, f.getValue(), action, nowMs, index);
    }
    return finish(e, hasId, action, index);
  }

  /**
   * Decodes one event given as a {@link DedupEvent} (local codec): its set fields in {@link EventField} order, as
   * {@link #read} checks them, so the rules and messages are those of JSON. Allocates nothing beyond what JSON's
   * decode does for the same fields: the event's own values are read, not copied.
   *
   * @param event the event
   * @param action a single action (not stats, not a batch)
   * @param nowMs the partition's current time
   * @param index the event's index in a batch, or -1
   * @return the event
   * @throws RequestFailure 400 naming the first bad field
   */
  public ParsedEvent decode(DedupEvent event, DedupAction action, long nowMs, int index) {
    if (event == null) {
      throw RequestFailure.badRequest((index < 0 ? "body" : "events[" + index + "]") + " must be an event but was null");
    }
    ParsedEvent e = new ParsedEvent();
    for (EventField field : EventField.ALL) {
      Object v = field.of(event);
      if (v != null) {
        read(e, field, v, action, nowMs, index);
      }
    }
    return finish(e, event.getId() != null, action, index);
  }

  /**
   * Decodes a batch body {@code {"events":[...]}}. Every event is validated before any is decided, so one bad
   * event fails the whole batch.
   *
   * @param body the JSON body
   * @param single the action applied to each event ({@link DedupAction#CHECK}, {@link DedupAction#CLAIM} or
   *     {@link DedupAction#COMMIT}, whose batch must not be empty)
   * @param nowMs the partition's current time
   * @return the events, in order
   * @throws RequestFailure 400 naming {@code events} or {@code events[i].field}
   */
  public ParsedEvent[] decodeBatch(JsonObject body, DedupAction single, long nowMs) {
    Object events = null;
    boolean hasEvents = false;
    for (Map.Entry<String, Object> f : body.getMap().entrySet()) {
      if (!f.getKey().equals("events")) {
        throw RequestFailure.badRequest("unknown field '" + abbreviate(f.getKey()) + "' (a batch body has only"
            + " the field events)");
      }
      hasEvents = true;
      events = f.getValue();
    }
    if (!hasEvents) {
      throw RequestFailure.badRequest("events is required (an array of at most " + maxBatch + " events)");
    }
    List<?> list;
    if (events instanceof JsonArray array) {
      list = array.getList();
    } else if (events instanceof List<?> l) {
      list = l;
    } else {
      throw RequestFailure.badRequest("events must be an array but was " + describe(events));
    }
    requireBatchSize(list.size(), single);
    ParsedEvent[] out = new ParsedEvent[list.size()];
    for (int i = 0; i < out.length; i++) {
      Object item = list.get(i);
      JsonObject json;
      if (item instanceof JsonObject o) {
        json = o;
      } else if (item instanceof Map<?, ?> m) {
        @SuppressWarnings("unchecked")
        Map<String, Object> map = (Map<String, Object>) m;
        json = new JsonObject(map);
      } else {
        throw RequestFailure.badRequest("events[" + i + "] must be a JSON object but was " + describe(item));
      }
      out[i] = decode(json, single, nowMs, i);
    }
    return out;
  }

  /**
   * Decodes a batch of {@link DedupEvent}s (local codec); see {@link #decodeBatch(JsonObject, DedupAction, long)}.
   *
   * @param events the events
   * @param single the action applied to each event
   * @param nowMs the partition's current time
   * @return the events, in order
   * @throws RequestFailure 400 naming {@code events} or {@code events[i].field}
   */
  public ParsedEvent[] decodeBatch(List<DedupEvent> events, DedupAction single, long nowMs) {
    if (events == null) {
      throw RequestFailure.badRequest("events is required (an array of at most " + maxBatch + " events)");
    }
    requireBatchSize(events.size(), single);
    ParsedEvent[] out = new ParsedEvent[events.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = decode(events.get(i), single, nowMs, i);
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------------------------

  /**
   * Checks one field of an event and stores it in {@code e}: first whether {@code action} takes the field, then its
   * value. A null value means absent, except for {@code id}, which must be a string.
   */
  private void read(ParsedEvent e, EventField field, Object v, DedupAction action, long nowMs, int index) {
    String name = field.wireName;
    if (!field.allowedWith(action)) {
      throw RequestFailure.badRequest(field(index, name) + " is not allowed with action " + action.wireName()
          + " (fields of " + action.wireName() + ": " + EventField.namesFor(action) + ")");
    }
    if (v == null && field != EventField.ID) {
      return;
    }
    switch (field) {
      case ID -> e.idFp = ids.fingerprint(idBytes(string(v, index, name), index, name));
      case KEY -> e.keyFp = keys.fingerprint(idBytes(string(v, index, name), index, name));
      case PAYLOAD_HASH -> e.payloadHash = payloadHash(string(v, index, name), index);
      case EVENT_TIME_MS -> e.eventTimeMs = eventTime(integer(v, index, name), nowMs, index);
      case REMEMBER_UNTIL_MS -> e.rememberUntilMs = rememberUntil(integer(v, index, name), nowMs, index);
      case LEASE_MS -> e.leaseMs = lease(integer(v, index, name), index);
      case CLAIM_TOKEN -> e.claimToken = claimToken(string(v, index, name), index);
      case CLAIMER -> e.claimer = claimer(string(v, index, name), index);
    }
  }

  private void requireBatchSize(int size, DedupAction single) {
    if (size == 0 && single == DedupAction.COMMIT) {
      throw RequestFailure.badRequest("events must hold 1.." + maxBatch + " commits (maxBatch) but was empty");
    }
    if (size > maxBatch) {
      throw RequestFailure.badRequest("events must hold at most maxBatch=" + maxBatch + " events but held " + size);
    }
  }

  private ParsedEvent finish(ParsedEvent e, boolean hasId, DedupAction action, int index) {
    if (!hasId) {
      throw RequestFailure.badRequest(field(index, "id") + " is required (a string of 1.." + maxIdBytes
          + " UTF-8 bytes)");
    }
    if ((action == DedupAction.COMMIT || action == DedupAction.RELEASE) && e.claimToken == null) {
      throw RequestFailure.badRequest(field(index, "claimToken") + " is required with action "
          + action.wireName() + " (the token the claim was answered with)");
    }
    String refused = routing.refusal(e.keyFp != 0, field(index, "key"));
    if (refused != null) {
      throw RequestFailure.badRequest(refused);
    }
    if (partition >= 0 && routing.partitions() > 1) {
      int owner = routing.partitionOf(e.idFp, e.keyFp);
      if (owner != partition) {
        String by = routing.byKey() ? "key" : "id";
        throw RequestFailure.badRequest(field(index, by) + " belongs to partition " + owner + ", not to partition "
            + partition + ": send it to " + address + "." + owner + " or to " + address);
      }
    }
    return e;
  }

  private byte[] idBytes(String s, int index, String name) {
    if (s.isEmpty()) {
      throw RequestFailure.badRequest(field(index, name) + " must be 1.." + maxIdBytes
          + " UTF-8 bytes but was empty");
    }
    // Every char encodes to at least one byte, so a long string is refused before it is encoded.
    if (s.length() > maxIdBytes) {
      throw RequestFailure.badRequest(field(index, name) + " must be at most maxIdBytes=" + maxIdBytes
          + " UTF-8 bytes but had " + s.length() + " characters");
    }
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (b.length > maxIdBytes) {
      throw RequestFailure.badRequest(field(index, name) + " must be at most maxIdBytes=" + maxIdBytes
          + " UTF-8 bytes but was " + b.length);
    }
    return b;
  }

  private static long payloadHash(String s, int index) {
    if (s.isEmpty() || s.length() > MAX_PAYLOAD_HASH_CHARS) {
      throw RequestFailure.badRequest(field(index, "payloadHash") + " must be 1.." + MAX_PAYLOAD_HASH_CHARS
          + " characters but had " + s.length());
    }
    return Fingerprinter.payloadHash(s);
  }

  /**
   * An event time after now counts as now: the partition covers it like for an event produced at this instant.
   * A producer's clock ahead of the owner's (or a Kafka record stamped by such a producer) is no reason to refuse the
   * event, and the time is only used to ask whether the event is older than the partition covers, which a
   * time in the future never is.
   *
   * @return {@code min(t, nowMs)}
   * @throws RequestFailure 400 if {@code t} is negative
   */
  private static long eventTime(long t, long nowMs, int index) {
    if (t < 0) {
      throw RequestFailure.badRequest(field(index, "eventTimeMs") + " must be at least 0 (epoch ms; a time after now"
          + " counts as now) but was " + t);
    }
    return Math.min(t, nowMs);
  }

  private long rememberUntil(long t, long nowMs, int index) {
    long max = nowMs + windowMs;
    if (t <= nowMs || t > max) {
      throw RequestFailure.badRequest(field(index, "rememberUntilMs") + " must be in " + (nowMs + 1) + ".." + max
          + " (epoch ms, after now and at most now + windowMs) but was " + t);
    }
    return t;
  }

  private static long lease(long ms, int index) {
    if (ms < 1 || ms > DedupOptions.MAX_LEASE_MS) {
      throw RequestFailure.badRequest(field(index, "leaseMs") + " must be in 1.." + DedupOptions.MAX_LEASE_MS
          + " but was " + ms);
    }
    return ms;
  }

  private static String claimToken(String s, int index) {
    if (s.isEmpty() || s.length() > MAX_CLAIM_TOKEN_CHARS) {
      throw RequestFailure.badRequest(field(index, "claimToken") + " must be 1.." + MAX_CLAIM_TOKEN_CHARS
          + " characters but had " + s.length());
    }
    return s;
  }

  private static String claimer(String s, int index) {
    if (s.isEmpty()) {
      throw RequestFailure.badRequest(field(index, "claimer") + " must be 1.." + MAX_CLAIMER_BYTES
          + " UTF-8 bytes but was empty");
    }
    int bytes = s.length() <= MAX_CLAIMER_BYTES / 3 ? s.length() : s.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_CLAIMER_BYTES) {
      throw RequestFailure.badRequest(field(index, "claimer") + " must be at most " + MAX_CLAIMER_BYTES
          + " UTF-8 bytes but was " + bytes);
    }
    return s;
  }

  private static String string(Object v, int index, String name) {
    if (v instanceof String s) {
      return s;
    }
    throw RequestFailure.badRequest(field(index, name) + " must be a string but was " + describe(v));
  }

  private static long integer(Object v, int index, String name) {
    if (v instanceof Long l) {
      return l; // the typed event's own value: unboxed, not boxed again by exactLong
    }
    Long l = JsonNumbers.exactLong(v);
    if (l == null) {
      throw RequestFailure.badRequest(field(index, name) + " must be an integer (epoch ms or ms) but was "
          + describe(v));
    }
    return l;
  }

  private static String field(int index, String name) {
    return index < 0 ? name : "events[" + index + "]." + name;
  }

  static String describe(Object v) {
    if (v == null) {
      return "null";
    }
    String type = v instanceof Map ? "JsonObject" : v instanceof List ? "JsonArray" : v.getClass().getSimpleName();
    return type + " " + abbreviate(String.valueOf(v));
  }

  private static String abbreviate(String s) {
    return s.length() <= 64 ? s : s.substring(0, 61) + "...";
  }
}
