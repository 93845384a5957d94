package io.github.vertxdedup.impl.service;

import java.security.SecureRandom;
import java.util.SplittableRandom;

/**
 * Issues and reads the tokens of one partition's claims.
 *
 * <p>A token is 64 bits written as 16 hex digits (the journal keeps it as a number), the top bit always set (so the
 * text always has 16 digits). A claim with the partition's default lease (every claim of the Kafka consumer) gets the
 * claim's lease end in epoch milliseconds ({@value #TOKEN_LEASE_BITS} bits, up to the year 2109), then a sequence
 * number ({@value #TOKEN_SEQUENCE_BITS} bits) that starts at a random value. Two such claims share a lease end only if
 * they were made in the same millisecond, so within a run their tokens differ, and across a restart too unless the
 * default lease changed meanwhile (then one chance in 2^21 per pair). Any other claim (a per-request lease, or a clock
 * outside 0..2^42 ms) gets 63 random bits. Tokens are not secret: they tell a claim's holder from a stale one, and the
 * event bus is trusted. Because such a token names its lease end, {@link Claims} finds a committed claim by it.
 *
 * <p>Confined to the partition's event loop (not thread-safe).
 */
final class ClaimTokens {

  /** Bits of a claim token holding the lease end (epoch milliseconds). */
  static final int TOKEN_LEASE_BITS = 42;
  /** Bits of a claim token holding its sequence number. */
  static final int TOKEN_SEQUENCE_BITS = 63 - TOKEN_LEASE_BITS;
  private static final long TOKEN_SEQUENCE_MASK = (1L << TOKEN_SEQUENCE_BITS) - 1;

  private final SplittableRandom random = new SplittableRandom(new SecureRandom().nextLong());
  /** The next token's sequence number (its low bits); starts at a random value. */
  private long sequence = random.nextLong();

  /**
   * A new token of a claim with the default lease: its lease end and the next sequence number, or, if the lease end
   * does not fit in {@value #TOKEN_LEASE_BITS} bits, a {@link #random}.
   *
   * @param leaseEndMs the claim's lease end, epoch ms
   * @return the token's value
   */
  long withLeaseEnd(long leaseEndMs) {
    if (leaseEndMs < 0 || leaseEndMs >= 1L << TOKEN_LEASE_BITS) {
      return random();
    }
    return Long.MIN_VALUE | leaseEndMs << TOKEN_SEQUENCE_BITS | (sequence++ & TOKEN_SEQUENCE_MASK);
  }

  /** @return a token of 63 random bits (and the top bit), which names no lease end */
  long random() {
    return Long.MIN_VALUE | random.nextLong();
  }

  /** @return the lease end a token names, epoch ms (meaningless for a random token) */
  static long leaseEndMs(long token) {
    return (token & Long.MAX_VALUE) >>> TOKEN_SEQUENCE_BITS;
  }

  /** @return the token's value, or 0 if it is not 1..16 hex digits (no token this partition issued) */
  static long parse(String token) {
    if (token == null || token.isEmpty() || token.length() > 16) {
      return 0;
    }
    try {
      return Long.parseUnsignedLong(token, 16);
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
