package io.github.vertxdedup.kafka;

/**
 * When a record's id is recorded relative to its effect. The effect and the record of the id are one unit only
 * with a shared transaction; without one, a crash between the two either loses the effect (the id recorded first)
 * or repeats it (the effect applied first, the id claimed meanwhile, then committed or released).
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
  EFFECT_FIRST
}
