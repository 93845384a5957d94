package io.github.vertxdedup.inbox;

/** What the inbox decided for one event ({@link DedupInbox#execute}). */
public enum InboxVerdict {

  /** The event was new (or its row had expired): its row and the work's writes committed in one transaction. */
  APPLIED,

  /**
   * A live row holds the id (or the business key) with the same payload hash, or one of the two has none: the event
   * was applied before; the transaction rolled back, the work did not run. Acknowledge the event.
   */
  DUPLICATE,

  /**
   * A live row holds the id (or the business key) with another payload hash: the same id was used for another
   * payload; the transaction rolled back, the work did not run. Dead-letter the event.
   */
  CONFLICT
}
