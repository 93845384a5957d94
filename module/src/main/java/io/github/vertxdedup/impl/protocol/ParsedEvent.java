package io.github.vertxdedup.impl.protocol;

import io.github.vertxdedup.window.DedupWindow;

/**
 * One validated request event, reduced to what a partition needs: fingerprints, payload hash, instants. Built by
 * {@link RequestDecoder}, read by {@code PartitionCore}; confined to the partition's event loop.
 */
public final class ParsedEvent {

  /** Value of {@link #eventTimeMs} when the event carries none. */
  public static final long NO_EVENT_TIME = Long.MIN_VALUE;

  /** Fingerprint of the id (scope {@code <address>/id}); never 0. */
  public long idFp;
  /** Fingerprint of the business key (scope {@code <address>/key}), or 0 when there is none. */
  public long keyFp;
  /** {@link io.github.vertxdedup.window.Fingerprinter#payloadHash(String)} of the payload hash text, or 0. */
  public long payloadHash;
  /** Epoch milliseconds, never after the decoder's now (a later time counts as now), or {@link #NO_EVENT_TIME}. */
  public long eventTimeMs = NO_EVENT_TIME;
  /** Epoch milliseconds, or {@link DedupWindow#DEFAULT_REMEMBER_UNTIL}. */
  public long rememberUntilMs = DedupWindow.DEFAULT_REMEMBER_UNTIL;
  /** Claim lease in milliseconds, or 0 for the partition's default. */
  public long leaseMs;
  /** Claim token of a commit or release, else null. */
  public String claimToken;
  /** Who claims (a consumer's instance id), or null; claim only. */
  public String claimer;
}
