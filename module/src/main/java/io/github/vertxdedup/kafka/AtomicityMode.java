package io.github.vertxdedup.kafka;

/**
 * When a record's id is recorded relative to its effect. The effect and the record of the id are one unit only
 * with a shared transaction; without one, a crash between the two either loses the effect (the id recorded first)
 * or repeats it (the effect applied first, the id claimed meanwhile, then committed or released).
 * {@link #INBOX} is that shared transaction, for effects that are writes to the application's own PostgreSQL database.
 */
public enum AtomicityMode {

  /**
   * {@code check} first, then the handler: the id is remembered before the effect runs. A crash after the check and
   * before the effect completes loses that effect (its redelivery is a duplicate); an effect is never applied twice
   * within the window. For effects where a repeat is worse than a loss (e.g. sending money).
   */
  RECORD_FIRST,

  /**
   * {@code claim}, the handler, then {@code commit}: the id is held by a lease while the effect runs and remembered
   * only after it succeeded; a failure releases it. A crash after the effect and before the commit repeats that
   * effect once the lease ends (at most the records in flight at the crash); no effect is ever lost. For effects
   * that must happen and tolerate a rare repeat (or are themselves idempotent downstream).
   */
  EFFECT_FIRST,

  /**
   * The transactional inbox: the window claims the id as in {@link #EFFECT_FIRST} (an id it remembers is a duplicate
   * without a database round trip); a new id goes to one database transaction in which the consumer inserts the
   * record's identity into the inbox table ({@link io.github.vertxdedup.inbox.DedupInbox}), the
   * {@link InboxRecordHandler} does its writes, and the transaction commits; only then is the claim committed (the
   * window remembers the id) and the offset made committable. The inbox's unique keys decide what the window does not
   * know (a copy after a crash, a copy older than the window): a live row with the same payload hash is a duplicate
   * (acknowledged, the handler not called), with another hash a conflict (dead-lettered). The effect is applied
   * exactly once for every copy that arrives while its inbox row lives, whatever crashes. A failed transaction rolls
   * back, gives the claim back and is retried with backoff, then dead-lettered, as a failed handler. Set with
   * {@link DedupKafkaConsumer#inbox}; not available to {@link DedupKafkaVerticle}.
   */
  INBOX
}
