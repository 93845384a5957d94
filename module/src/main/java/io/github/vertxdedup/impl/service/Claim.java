package io.github.vertxdedup.impl.service;

/**
 * A live claim: an id (and its key) held for a lease, not yet in the window. Confined to the partition's event loop.
 */
final class Claim {

  final long idFp;
  final long keyFp;
  final long payloadHash;
  /** Explicit expiry to apply on commit, or {@code DedupWindow.DEFAULT_REMEMBER_UNTIL}. */
  final long rememberUntilMs;
  final String token;
  /** The token as a number (its 16 hex digits); see {@link ClaimTokens}. */
  final long tokenValue;
  /** True if the token encodes this claim's lease end (see {@link ClaimTokens}). */
  final boolean tokenHasLeaseEnd;
  final long claimedAtMs;
  final long leaseEndMs;
  /** Who holds it (a consumer's instance id), or null if the request named nobody. */
  final String claimer;
  /**
   * True once the claim is in the lease-ordered queue and its token encodes its lease end: a repeated commit then
   * finds it there by its token, with no map of committed claims.
   */
  boolean indexed;
  /** True once committed. */
  boolean committed;
  /** Its entry's sequence number in the partition's lease-ordered queue, or -1 if it is not in that queue. */
  long queueSeq = -1;

  Claim(long idFp, long keyFp, long payloadHash, long rememberUntilMs, String token, long tokenValue,
      boolean tokenHasLeaseEnd, long claimedAtMs, long leaseEndMs, String claimer) {
    this.idFp = idFp;
    this.keyFp = keyFp;
    this.payloadHash = payloadHash;
    this.rememberUntilMs = rememberUntilMs;
    this.token = token;
    this.tokenValue = tokenValue;
    this.tokenHasLeaseEnd = tokenHasLeaseEnd;
    this.claimedAtMs = claimedAtMs;
    this.leaseEndMs = leaseEndMs;
    this.claimer = claimer;
  }

  /** @return window entries the claim needs on commit: 1 for the id, 2 with a key */
  int entries() {
    return keyFp != 0 ? 2 : 1;
  }

  boolean expiredAt(long nowMs) {
    return leaseEndMs <= nowMs;
  }
}
