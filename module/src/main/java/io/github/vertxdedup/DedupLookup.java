package io.github.vertxdedup;

import io.vertx.core.json.JsonObject;
import java.util.Objects;

/**
 * A partition's answer to {@code lookup}: what it knows of an id, recorded nothing. Immutable and thread-safe.
 *
 * <p>Wire form: {@code known}, {@code state}, {@code partition}, and when known {@code firstSeenMs} and
 * {@code expiresAtMs} (for a remembered entry at bucket precision; for a claim its claim time and lease end).
 *
 * @param state what is known
 * @param partition the partition that answered
 * @param firstSeenMs when first seen (epoch ms), or {@link DedupResult#NO_TIME} when {@link EntryState#ABSENT}
 * @param expiresAtMs when forgotten, or when the lease ends (epoch ms), or {@link DedupResult#NO_TIME}
 */
public record DedupLookup(EntryState state, int partition, long firstSeenMs, long expiresAtMs) {

  /**
   * Validates the components.
   *
   * @param state what is known
   * @param partition the partition that answered
   * @param firstSeenMs when first seen (epoch ms), or {@link DedupResult#NO_TIME} when {@link EntryState#ABSENT}
   * @param expiresAtMs when forgotten, or when the lease ends (epoch ms), or {@link DedupResult#NO_TIME}
   * @throws NullPointerException if {@code state} is null
   */
  public DedupLookup {
    Objects.requireNonNull(state, "state");
  }

  /** @return true unless {@link EntryState#ABSENT} */
  public boolean known() {
    return state != EntryState.ABSENT;
  }

  /**
   * Writes the wire form.
   *
   * @return a new JSON object
   */
  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("known", known()).put("state", state.name()).put("partition", partition);
    if (known()) {
      json.put("firstSeenMs", firstSeenMs).put("expiresAtMs", expiresAtMs);
    }
    return json;
  }

  /**
   * Reads the wire form.
   *
   * @param json a lookup reply body
   * @return the lookup
   * @throws IllegalArgumentException if {@code state} is missing or unknown
   */
  public static DedupLookup fromJson(JsonObject json) {
    String s = json.getString("state");
    EntryState state;
    try {
      state = EntryState.valueOf(s);
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new IllegalArgumentException("state must be an EntryState name but was " + s);
    }
    return new DedupLookup(state, json.getInteger("partition", -1),
        json.getLong("firstSeenMs", DedupResult.NO_TIME), json.getLong("expiresAtMs", DedupResult.NO_TIME));
  }
}
