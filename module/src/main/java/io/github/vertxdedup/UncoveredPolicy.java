package io.github.vertxdedup;

/**
 * What a partition answers for an event whose {@code eventTimeMs} is older than it covers (older than
 * {@code now - windowMs}, or older than the moment its memory begins, e.g. its start when it runs memory only) and
 * whose id it does not remember. Such an event may have been accepted before and forgotten since; the partition
 * cannot tell: the event arrived later than the window promises to remember. A remembered id is
 * answered duplicate whatever its age.
 */
public enum UncoveredPolicy {
  /** Answer {@link DedupVerdict#UNKNOWN} and record nothing (the default): the caller decides. */
  UNKNOWN,
  /** Answer {@link DedupVerdict#ACCEPTED} with {@code "uncovered": true} and record the id as usual. */
  ACCEPT
}
