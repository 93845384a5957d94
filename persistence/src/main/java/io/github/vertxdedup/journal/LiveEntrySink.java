package io.github.vertxdedup.journal;

/**
 * Receives the live entries a journal's recovery finds, the entries a restart at one instant would remember, as
 * {@link JournalContents#read} (and an owner's own recovery) reads them: on the replaying thread, in journal order. An
 * id and its key arrive as two entries; an entry may arrive more than once (an id accepted again, a carried-over
 * record).
 */
@FunctionalInterface
public interface LiveEntrySink {

  /**
   * An entry to remember.
   *
   * @param fingerprint an id's or a key's fingerprint, never 0
   * @param payloadHash the payload hash, or 0
   * @param firstSeenMs when it was first seen, epoch milliseconds of the owner's clock
   * @param expiresAtMs when it may be forgotten, epoch milliseconds, after the instant the replay was read at
   */
  void live(long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs);
}
