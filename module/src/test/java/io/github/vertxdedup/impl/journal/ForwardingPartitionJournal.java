package io.github.vertxdedup.impl.journal;

import io.vertx.core.Future;

/**
 * A test journal that forwards every call to another, the interface's default methods included ({@link NoJournal#INSTANCE} for one without entries): a test
 * overrides only the calls whose behaviour it changes.
 */
public abstract class ForwardingPartitionJournal implements PartitionJournal {

  private final PartitionJournal delegate;

  /** @param delegate the journal every call not overridden goes to */
  protected ForwardingPartitionJournal(PartitionJournal delegate) {
    this.delegate = delegate;
  }

  @Override
  public Future<Void> open() {
    return delegate.open();
  }

  @Override
  public Future<Void> recover(RecoveryTarget target) {
    return delegate.recover(target);
  }

  @Override
  public Future<Void> accepted(long idFingerprint, long keyFingerprint, long payloadHash, long firstSeenMs,
      long expiresAtMs) {
    return delegate.accepted(idFingerprint, keyFingerprint, payloadHash, firstSeenMs, expiresAtMs);
  }

  @Override
  public Future<Void> claimed(long idFingerprint, long keyFingerprint, long payloadHash, String claimToken,
      long claimedAtMs, long leaseEndMs, long rememberUntilMs, String claimer) {
    return delegate.claimed(idFingerprint, keyFingerprint, payloadHash, claimToken, claimedAtMs, leaseEndMs,
        rememberUntilMs, claimer);
  }

  @Override
  public Future<Void> committed(long idFingerprint, long keyFingerprint, long payloadHash, long committedAtMs,
      long expiresAtMs) {
    return delegate.committed(idFingerprint, keyFingerprint, payloadHash, committedAtMs, expiresAtMs);
  }

  @Override
  public Future<Void> released(long idFingerprint, long keyFingerprint) {
    return delegate.released(idFingerprint, keyFingerprint);
  }

  @Override
  public Future<Void> offsetsCommitted(String topic, int partition, long offset) {
    return delegate.offsetsCommitted(topic, partition, offset);
  }

  @Override
  public Future<Void> memoryBegins(long fromMs) {
    return delegate.memoryBegins(fromMs);
  }

  @Override
  public void beginBatch() {
    delegate.beginBatch();
  }

  @Override
  public void endBatch() {
    delegate.endBatch();
  }

  @Override
  public void retain() {
    delegate.retain();
  }

  @Override
  public Future<Void> close() {
    return delegate.close();
  }
}
