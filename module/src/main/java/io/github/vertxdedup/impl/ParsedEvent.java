package io.github.vertxdedup.impl;

import io.github.vertxdedup.window.DedupWindow;

/**
 * One validated request event, reduced to what a partition needs: fingerprints, payload hash, instants. Built by
 * {@link RequestDecoder}, read by {@link PartitionCore}; confined to the partition's event loop.
 */
final class ParsedEvent {

  /** Value of {@link #eventTimeMs} when the event carries none. */
  static final long NO_EVENT_TIME = Long.MIN_VALUE;

  /** Fingerprint of the id (scope {@code <address>/id}); never 0. */
  long idFp;
  /** Fingerprint of the business key (scope {@code <address>/key}), or 0 when there is none. */
  long keyFp;
  /** {@link io.github.vertxdedup.window.Fingerprinter#payloadHash(String)} of the payload hash text, or 0. */
  long payloadHash;
  /** Epoch milliseconds, never after the decoder's now (a later time counts as now), or {@link #NO_EVENT_TIME}. */
  long eventTimeMs = NO_EVENT_TIME;
  /** Epoch milliseconds, or {@link DedupWindow#DEFAULT_REMEMBER_UNTIL}. */
  long rememberUntilMs = DedupWindow.DEFAULT_REMEMBER_UNTIL;
  /** Claim lease in milliseconds, or 0 for the partition's default. */
  long leaseMs;
  /** Claim token of a commit or release, else null. */
  String claimToken;
  /** Who claims (a consumer's instance id), or null; claim only. */
  String claimer;
}
