package io.github.vertxdedup.impl.journal;

import io.vertx.core.Future;

/**
 * No journal, for a memory-only partition: records nothing, recovers nothing, and answers every write with one
 * already-succeeded future, so a partition replies at once. A partition that uses it forgets everything on restart (committed
 * offsets included), and its memory begins at its start. Stateless and thread-safe.
 */
public final class NoJournal implements PartitionJournal {

  /** The shared instance. */
  public static final NoJournal INSTANCE = new NoJournal();

  private static final Future<Void> DONE = Future.succeededFuture();

  private NoJournal() {}

  @Override
  public Future<Void> open() {
    return DONE;
  }

  @Override
  public Future<Void> recover(RecoveryTarget target) {
    return DONE;
  }

  @Override
  public Future<Void> accepted(long idFingerprint, long keyFingerprint, long payloadHash, long firstSeenMs,
      long expiresAtMs) {
    return DONE;
  }

  @Override
  public Future<Void> claimed(long idFingerprint, long keyFingerprint, long payloadHash, String claimToken,
      long claimedAtMs, long leaseEndMs, long rememberUntilMs, String claimer) {
    return DONE;
  }

  @Override
  public Future<Void> committed(long idFingerprint, long keyFingerprint, long payloadHash, long committedAtMs,
      long expiresAtMs) {
    return DONE;
  }

  @Override
  public Future<Void> released(long idFingerprint, long keyFingerprint) {
    return DONE;
  }

  @Override
  public Future<Void> offsetsCommitted(String topic, int partition, long offset) {
    return DONE;
  }

  @Override
  public Future<Void> close() {
    return DONE;
  }
}
