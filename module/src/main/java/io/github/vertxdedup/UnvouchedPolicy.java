package io.github.vertxdedup;

/**
 * What a partition of the event-bus service does with a new id during the first window {@code W} after a takeover
 * in which it could not rebuild what its previous owner remembered (no journal, or a journal that was not the
 * previous owner's: see {@code docs/partitioning.md}, "Failover"). Its window then holds only what it accepted since
 * the takeover, so a new id may be a copy of one the previous owner accepted: the partition cannot vouch for it.
 * An id it remembers is answered duplicate as usual, and the first owner ever of a partition, or one that opened
 * its previous owner's journal, is not concerned.
 */
public enum UnvouchedPolicy {
  /**
   * Accept the id, marked {@code "unvouched": true} on the wire ({@link DedupResult#unvouched()}) and counted
   * ({@code dedup.unvouched.accepts}, {@code unvouched} in {@code stats}): the default, which keeps the service
   * available and says what it cannot promise.
   */
  ACCEPT,
  /**
   * Refuse the id with a 503 ({@link DedupFailure#UNAVAILABLE}) and record nothing, until {@code W} has passed since
   * the takeover: fail closed, for callers that would rather retry later than risk processing an event twice.
   */
  REFUSE
}
