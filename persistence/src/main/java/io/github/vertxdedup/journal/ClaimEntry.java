package io.github.vertxdedup.journal;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One claim as a {@code CLAIM} record holds it: an id in flight, held by {@code claimerId}, until
 * {@code leaseEndMs} unless committed or released first. Immutable, so thread-safe.
 *
 * <p>Format version 2 stores every component in a column of its own. A claim read from a record of format version 1
 * (written by 0.1.0-SNAPSHOT before version 2) has only the fingerprints, the token, the lease end and a free text
 * that the writer filled as it liked: it comes back with {@link #formatVersion()} 1, {@code payloadHash} 0,
 * {@code claimedAtMs} and {@code rememberUntilMs} {@link #NOT_RECORDED}, and the text as {@code claimerId}. The
 * journal does not interpret that text; its writer's reader does.
 *
 * @param fingerprint the id's fingerprint, never 0
 * @param keyFingerprint the business key's fingerprint, or 0 if none
 * @param payloadHash the payload's hash, or 0 if none
 * @param token the claim token that a commit or release must present
 * @param claimedAtMs when the id was claimed, epoch milliseconds of the owner's clock, or {@link #NOT_RECORDED}
 *     (format version 1)
 * @param leaseEndMs when the lease ends, epoch milliseconds
 * @param rememberUntilMs an explicit remember-until to apply on commit, epoch milliseconds, or {@link #NOT_RECORDED}
 *     for the owner's default (and in format version 1)
 * @param claimerId who holds the claim (for instance a consumer's instance id), {@link #NO_CLAIMER} if nobody said;
 *     at most {@value Journal#MAX_CLAIMER_BYTES} bytes in UTF-8
 * @param formatVersion the format version of the record it was read from; {@link #CURRENT_FORMAT} for a claim to
 *     append
 */
public record ClaimEntry(long fingerprint, long keyFingerprint, long payloadHash, long token, long claimedAtMs,
    long leaseEndMs, long rememberUntilMs, String claimerId, int formatVersion) {

  /** A time column the record does not hold (format version 1), or "no explicit remember-until". */
  public static final long NOT_RECORDED = Long.MIN_VALUE;
  /** The claimer of a claim whose requester gave none. */
  public static final String NO_CLAIMER = "";
  /** The format version a claim is appended with. */
  public static final int CURRENT_FORMAT = RecordFormat.VERSION;

  /**
   * Validates the components.
   *
   * @param fingerprint the id's fingerprint, never 0
   * @param keyFingerprint the business key's fingerprint, or 0 if none
   * @param payloadHash the payload's hash, or 0 if none
   * @param token the claim token that a commit or release must present
   * @param claimedAtMs when the id was claimed, epoch milliseconds of the owner's clock, or {@link #NOT_RECORDED}
   * @param leaseEndMs when the lease ends, epoch milliseconds
   * @param rememberUntilMs an explicit remember-until to apply on commit, epoch milliseconds, or {@link #NOT_RECORDED}
   * @param claimerId who holds the claim, {@link #NO_CLAIMER} if nobody said
   * @param formatVersion the format version of the record it was read from
   * @throws NullPointerException if {@code claimerId} is null
   * @throws IllegalArgumentException if {@code fingerprint} is 0, {@code claimerId} is longer than
   *     {@value Journal#MAX_CLAIMER_BYTES} bytes in UTF-8, or {@code formatVersion} is not a version this reader
   *     knows (1 or 2)
   */
  public ClaimEntry {
    JournalWriter.checkFingerprint(fingerprint);
    Objects.requireNonNull(claimerId, "claimerId");
    if (claimerId.length() > Journal.MAX_CLAIMER_BYTES / 3) {
      JournalWriter.claimerBytes(claimerId);
    }
    if (formatVersion < RecordFormat.OLDEST_READABLE_VERSION || formatVersion > RecordFormat.VERSION) {
      throw new IllegalArgumentException("formatVersion must be in " + RecordFormat.OLDEST_READABLE_VERSION + ".."
          + RecordFormat.VERSION + " but was " + formatVersion);
    }
  }

  /**
   * A claim to append (current format).
   *
   * @param fingerprint the id's fingerprint, not 0
   * @param keyFingerprint the business key's fingerprint, or 0
   * @param payloadHash the payload's hash, or 0
   * @param token the claim token
   * @param claimedAtMs when it was claimed, epoch milliseconds
   * @param leaseEndMs when the lease ends, epoch milliseconds
   * @param rememberUntilMs explicit remember-until to apply on commit, or {@link #NOT_RECORDED}
   * @param claimerId who holds it, or {@link #NO_CLAIMER}; at most {@value Journal#MAX_CLAIMER_BYTES} UTF-8 bytes
   * @return the entry
   * @throws NullPointerException if {@code claimerId} is null
   * @throws IllegalArgumentException if {@code fingerprint} is 0 or {@code claimerId} is too long
   */
  public static ClaimEntry of(long fingerprint, long keyFingerprint, long payloadHash, long token, long claimedAtMs,
      long leaseEndMs, long rememberUntilMs, String claimerId) {
    return new ClaimEntry(fingerprint, keyFingerprint, payloadHash, token, claimedAtMs, leaseEndMs, rememberUntilMs,
        claimerId, CURRENT_FORMAT);
  }

  /** @return true if a claimer was recorded (not {@link #NO_CLAIMER}) */
  public boolean hasClaimer() {
    return !claimerId.isEmpty();
  }

  byte[] claimerUtf8() {
    return claimerId.getBytes(StandardCharsets.UTF_8);
  }
}
