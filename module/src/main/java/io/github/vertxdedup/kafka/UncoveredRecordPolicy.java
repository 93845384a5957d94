package io.github.vertxdedup.kafka;

/**
 * What the consumer does with a record whose id its window does not remember and whose event time (see
 * {@link EventTimeSource}) is older than the window covers: older than now minus the window {@code W}, or
 * older than the moment the window's memory began (a new group, a first start over a topic's backlog, a window
 * without a journal started after the record was produced). The window cannot tell whether it saw that id and
 * forgot it, so what to do is a policy the application picks, not a default the window can. Either way the
 * window records the id, so a later copy of the record is a duplicate.
 */
public enum UncoveredRecordPolicy {

  /**
   * Run the handler, as for any first sighting, and count the record in {@code dedup.kafka.uncovered.accepts} (the
   * default). A first start over a topic's backlog, or a new group reading a topic's history, is handled, not
   * dead-lettered: all of it is older than a new window's memory.
   */
  ACCEPT,

  /**
   * Send the record to the dead-letter handler with {@link DeadLetter.Reason#UNCOVERED} (the detail names the
   * record's age and the window) instead of running the handler. For effects where a repeat must be looked at by a
   * person. On a new window (a first start, a new group, a window without a journal after a restart) every record
   * produced before the window started goes there too.
   */
  DEAD_LETTER
}
