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

  /**
   * About {@code entries} entries follow from a window snapshot, in ascending order of their home slots in a
   * Fibonacci-hashed table ({@link JournalVisitor#onSnapshotEntries}): a sink that inserts them into a hash table sizes
   * it for them first. Called at most once per replay, on the replaying thread, before those entries; the default does
   * nothing.
   *
   * @param entries the number of entries the snapshot holds (an id and its key count as two only if journaled so)
   */
  default void expect(long entries) {
  }
}
