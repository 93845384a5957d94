package io.github.vertxdedup;

import io.vertx.core.json.JsonObject;
import java.util.Objects;

/**
 * A partition's answer to {@code check}, {@code claim}, {@code commit} or {@code release}, and the result of a
 * decided element of a batch reply ({@link DedupBatchResult}, {@link DedupCommitResult}): the Java form of the reply
 * body. Immutable and thread-safe.
 *
 * <p>Wire form: {@code verdict} and {@code partition} always; {@code claimToken} on an accepted claim;
 * {@code uncovered: true} on an accept of an event older than the partition's memory; {@code firstSeenMs},
 * {@code ageMs} and {@code expiresAtMs} on {@link DedupVerdict#DUPLICATE}, {@link DedupVerdict#CONFLICT} (times of the
 * remembered entry, bucket precision) and {@link DedupVerdict#IN_FLIGHT} (claim time and lease end). An
 * {@link DedupVerdict#UNKNOWN} carries no times: there is no entry to report. {@code unvouched: true} on an accept (or
 * accepted claim) of a new id by a partition that took over from another owner without that owner's journal, within
 * the window {@code W} after the takeover: the id may have been accepted by the previous owner, which this partition
 * cannot know (see {@link UnvouchedPolicy}). {@code uncovered} and {@code unvouched} are written only when true.
 *
 * @param verdict the verdict
 * @param partition the partition that answered
 * @param claimToken the token of an accepted claim, else null
 * @param firstSeenMs when the entry was first seen (epoch ms, bucket precision), or {@link #NO_TIME}
 * @param ageMs now minus {@code firstSeenMs}, or {@link #NO_TIME}
 * @param expiresAtMs when the entry is forgotten, or the lease ends (epoch ms), or {@link #NO_TIME}
 * @param uncovered true on an accept of an event older than what the partition covers
 * @param unvouched true on an accept of a new id within {@code W} after a takeover without the previous owner's
 *     journal
 */
public record DedupResult(DedupVerdict verdict, int partition, String claimToken, long firstSeenMs, long ageMs,
    long expiresAtMs, boolean uncovered, boolean unvouched) {

  /** The value of an absent time field. */
  public static final long NO_TIME = Long.MIN_VALUE;

  /**
   * Validates the components.
   *
   * @param verdict the verdict
   * @param partition the partition that answered
   * @param claimToken the token of an accepted claim, else null
   * @param firstSeenMs when the entry was first seen (epoch ms, bucket precision), or {@link #NO_TIME}
   * @param ageMs now minus {@code firstSeenMs}, or {@link #NO_TIME}
   * @param expiresAtMs when the entry is forgotten, or the lease ends (epoch ms), or {@link #NO_TIME}
   * @param uncovered true on an accept of an event older than what the partition covers
   * @param unvouched true on an accept of a new id within {@code W} after a takeover without the previous owner's
   *     journal
   * @throws NullPointerException if {@code verdict} is null
   */
  public DedupResult {
    Objects.requireNonNull(verdict, "verdict");
  }

  /**
   * A result that is not unvouched ({@code unvouched} false): what every partition answers outside the window after
   * a takeover.
   *
   * @param verdict the verdict
   * @param partition the partition that answered
   * @param claimToken the token of an accepted claim, else null
   * @param firstSeenMs when the entry was first seen (epoch ms, bucket precision), or {@link #NO_TIME}
   * @param ageMs now minus {@code firstSeenMs}, or {@link #NO_TIME}
   * @param expiresAtMs when the entry is forgotten, or the lease ends (epoch ms), or {@link #NO_TIME}
   * @param uncovered true on an accept of an event older than what the partition covers
   * @throws NullPointerException if {@code verdict} is null
   */
  public DedupResult(DedupVerdict verdict, int partition, String claimToken, long firstSeenMs, long ageMs,
      long expiresAtMs, boolean uncovered) {
    this(verdict, partition, claimToken, firstSeenMs, ageMs, expiresAtMs, uncovered, false);
  }

  /**
   * A reply with a verdict and nothing else.
   *
   * @param verdict the verdict
   * @param partition the partition
   * @return a new result
   */
  public static DedupResult of(DedupVerdict verdict, int partition) {
    return new DedupResult(verdict, partition, null, NO_TIME, NO_TIME, NO_TIME, false);
  }

  /** @return true if the times ({@code firstSeenMs}, {@code ageMs}, {@code expiresAtMs}) are present */
  public boolean hasTimes() {
    return firstSeenMs != NO_TIME;
  }

  /**
   * Writes the wire form.
   *
   * @return a new JSON object
   */
  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("verdict", verdict.name()).put("partition", partition);
    if (claimToken != null) {
      json.put("claimToken", claimToken);
    }
    if (hasTimes()) {
      json.put("firstSeenMs", firstSeenMs).put("ageMs", ageMs).put("expiresAtMs", expiresAtMs);
    }
    if (uncovered) {
      json.put("uncovered", true);
    }
    if (unvouched) {
      json.put("unvouched", true);
    }
    return json;
  }

  /**
   * Reads the wire form.
   *
   * @param json a reply body (or batch element) of the service
   * @return the result
   * @throws IllegalArgumentException if {@code verdict} is missing or unknown
   */
  public static DedupResult fromJson(JsonObject json) {
    String v = json.getString("verdict");
    DedupVerdict verdict;
    try {
      verdict = DedupVerdict.valueOf(v);
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new IllegalArgumentException("verdict must be a DedupVerdict name but was " + v);
    }
    Long first = json.getLong("firstSeenMs");
    return new DedupResult(verdict, json.getInteger("partition", -1), json.getString("claimToken"),
        first == null ? NO_TIME : first, json.getLong("ageMs", NO_TIME), json.getLong("expiresAtMs", NO_TIME),
        json.getBoolean("uncovered", false), json.getBoolean("unvouched", false));
  }
}
