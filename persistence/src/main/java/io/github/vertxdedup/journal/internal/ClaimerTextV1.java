package io.github.vertxdedup.journal.internal;

import io.github.vertxdedup.journal.ClaimEntry;

/**
 * The claimer text of a format-version-1 {@code CLAIM} record. Version 1 had no columns for a claim's time, payload
 * hash and explicit remember-until, so the service stored them as text in the record's only free column:
 * {@code c1;<claimedAtMs>;<payloadHash hex>;<rememberUntilMs or ->}. Nothing writes it any more; {@link Recovery}
 * and the journal inspector read it in old journals. Stateless, so thread-safe.
 */
public final class ClaimerTextV1 {

  private static final String PREFIX = "c1;";

  private ClaimerTextV1() {
  }

  /**
   * Encodes what a claim needs on commit as the claimer text of a format-version-1 {@code CLAIM} record. It documents
   * (and lets tests build) what {@link #decode} reads.
   *
   * @param claimedAtMs when the id was claimed, epoch milliseconds
   * @param payloadHash its payload hash, or 0
   * @param rememberUntilMs the explicit expiry to apply on commit, epoch milliseconds, or
   *     {@link ClaimEntry#NOT_RECORDED} for the owner's default
   * @return at most 60 ASCII characters
   */
  public static String encode(long claimedAtMs, long payloadHash, long rememberUntilMs) {
    return PREFIX + claimedAtMs + ';' + Long.toHexString(payloadHash) + ';'
        + (rememberUntilMs == ClaimEntry.NOT_RECORDED ? "-" : Long.toString(rememberUntilMs));
  }

  /**
   * Decodes {@link #encode}.
   *
   * @param claimer the claimer text of a version-1 {@code CLAIM} record ({@link ClaimEntry#claimerId()})
   * @return {@code [claimedAtMs, payloadHash, rememberUntilMs]} ({@link ClaimEntry#NOT_RECORDED} for the default),
   *     or null if the text is not of this form
   */
  public static long[] decode(String claimer) {
    if (claimer == null || !claimer.startsWith(PREFIX)) {
      return null;
    }
    String[] parts = claimer.substring(PREFIX.length()).split(";", -1);
    if (parts.length != 3) {
      return null;
    }
    try {
      return new long[] {Long.parseLong(parts[0]), Long.parseUnsignedLong(parts[1], 16),
          parts[2].equals("-") ? ClaimEntry.NOT_RECORDED : Long.parseLong(parts[2])};
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
