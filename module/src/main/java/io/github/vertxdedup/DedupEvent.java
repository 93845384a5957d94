package io.github.vertxdedup;

import io.vertx.core.json.JsonObject;

/**
 * One event as a {@link DedupClient} sends it: the Java form of a request body of the dedup service. Fields left
 * null are absent. The setters check nothing: the partition validates every field against its own limits and answers
 * a 400 that names the bad field, exactly as for a JSON request.
 *
 * <p>Not thread-safe. The client hands the object itself to a partition in the same JVM (no copy, no JSON), so do
 * not change an event until the future of the request that carries it has completed.
 */
public class DedupEvent {

  private String id;
  private String key;
  private String payloadHash;
  private Long eventTimeMs;
  private Long rememberUntilMs;
  private Long leaseMs;
  private String claimToken;
  private String claimer;

  /** Creates an event with no field set; {@link #setId(String)} is required before it is sent. */
  public DedupEvent() {}

  /**
   * Creates an event with an id.
   *
   * @param id the event id, 1..maxIdBytes UTF-8 bytes
   */
  public DedupEvent(String id) {
    this.id = id;
  }

  /** @return the event id */
  public String getId() {
    return id;
  }

  /**
   * @param id the event id (required), 1..maxIdBytes UTF-8 bytes; stable across redeliveries
   * @return this
   */
  public DedupEvent setId(String id) {
    this.id = id;
    return this;
  }

  /** @return the business key, or null */
  public String getKey() {
    return key;
  }

  /**
   * Sets a business key: the event is a duplicate if either its id or its key was seen. A service that routes by key
   * ({@link DedupOptions#setRouteByKey}) requires one on every event and routes by it; a service that routes by id
   * refuses one when it has more than one partition.
   *
   * @param key 1..maxIdBytes UTF-8 bytes, or null
   * @return this
   */
  public DedupEvent setKey(String key) {
    this.key = key;
    return this;
  }

  /** @return the payload hash, or null */
  public String getPayloadHash() {
    return payloadHash;
  }

  /**
   * Sets a hash (any stable text, e.g. hex SHA-256) of the canonical payload: the same id with another hash is a
   * {@link DedupVerdict#CONFLICT}. Check and claim only.
   *
   * @param payloadHash 1..256 characters, or null
   * @return this
   */
  public DedupEvent setPayloadHash(String payloadHash) {
    this.payloadHash = payloadHash;
    return this;
  }

  /** @return the event time in epoch milliseconds, or null */
  public Long getEventTimeMs() {
    return eventTimeMs;
  }

  /**
   * Sets when the event was produced. An event older than the partition covers gets
   * {@link DedupVerdict#UNKNOWN} (or an uncovered accept) unless its id is remembered. A time after the partition's
   * now counts as now (a producer's clock may run ahead). Check and claim only.
   *
   * @param eventTimeMs epoch milliseconds, at least 0 (a negative time is refused with 400), or null
   * @return this
   */
  public DedupEvent setEventTimeMs(Long eventTimeMs) {
    this.eventTimeMs = eventTimeMs;
    return this;
  }

  /** @return the explicit remember-until instant, or null */
  public Long getRememberUntilMs() {
    return rememberUntilMs;
  }

  /**
   * Sets an explicit expiry: the id is forgotten from this instant on (bucket precision) instead of after the
   * window. Check and claim only (a claim's expiry applies when it is committed).
   *
   * @param rememberUntilMs epoch milliseconds, after now and at most {@code now + windowMs}, or null
   * @return this
   */
  public DedupEvent setRememberUntilMs(Long rememberUntilMs) {
    this.rememberUntilMs = rememberUntilMs;
    return this;
  }

  /** @return the claim lease, or null for the partition's default */
  public Long getLeaseMs() {
    return leaseMs;
  }

  /**
   * Sets the lease of a claim. Claim only.
   *
   * @param leaseMs milliseconds, {@code 1 ..} {@link DedupOptions#MAX_LEASE_MS}, or null for the default
   * @return this
   */
  public DedupEvent setLeaseMs(Long leaseMs) {
    this.leaseMs = leaseMs;
    return this;
  }

  /** @return the claim token, or null */
  public String getClaimToken() {
    return claimToken;
  }

  /**
   * Sets the token a claim was answered with. Commit and release only (required there).
   *
   * @param claimToken the token, or null
   * @return this
   */
  public DedupEvent setClaimToken(String claimToken) {
    this.claimToken = claimToken;
    return this;
  }

  /** @return who claims, or null */
  public String getClaimer() {
    return claimer;
  }

  /**
   * Names who claims: a stable id of the claiming process, such as a Kafka consumer's {@code group.instance.id}. It
   * is journaled with the claim, so that after a crash the same claimer can have the claims its previous run left
   * open released at once instead of waiting out their leases (the Kafka consumer does this when it takes a
   * partition over). Two live processes must never share one. Claim only.
   *
   * @param claimer 1..255 UTF-8 bytes, or null for nobody (such a claim is only ever freed by its lease, commit or
   *     release)
   * @return this
   */
  public DedupEvent setClaimer(String claimer) {
    this.claimer = claimer;
    return this;
  }

  /**
   * Writes this event as a JSON request body: the fields that are set.
   *
   * @return a new JSON object
   */
  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    if (id != null) {
      json.put("id", id);
    }
    if (key != null) {
      json.put("key", key);
    }
    if (payloadHash != null) {
      json.put("payloadHash", payloadHash);
    }
    if (eventTimeMs != null) {
      json.put("eventTimeMs", eventTimeMs);
    }
    if (rememberUntilMs != null) {
      json.put("rememberUntilMs", rememberUntilMs);
    }
    if (leaseMs != null) {
      json.put("leaseMs", leaseMs);
    }
    if (claimToken != null) {
      json.put("claimToken", claimToken);
    }
    if (claimer != null) {
      json.put("claimer", claimer);
    }
    return json;
  }

  @Override
  public String toString() {
    return "DedupEvent" + toJson().encode();
  }
}
