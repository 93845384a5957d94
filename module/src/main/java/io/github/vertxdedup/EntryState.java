package io.github.vertxdedup;

/** What a partition knows of an id, as answered by the {@code lookup} action (field {@code state}). */
public enum EntryState {
  /** Neither remembered nor claimed: a {@code check} now would be accepted (or {@code UNKNOWN} if too old). */
  ABSENT,
  /** Held by a live claim: a {@code check} now would answer {@link DedupVerdict#IN_FLIGHT}. */
  IN_FLIGHT,
  /** Remembered in the dedup window: a {@code check} now would answer duplicate (or conflict). */
  REMEMBERED
}
