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

  /**
   * Offers a window snapshot's entries in place ({@link JournalVisitor#onSnapshotEntriesInPlace}): a read-only,
   * memory-mapped view of them in table order. Called at most once per replay, on the replaying thread, and only when
   * the snapshot has the layout its writer gives it; before any {@link #live} call of the records after the snapshot.
   *
   * <p>Return true to take them: then neither {@link #expect} nor a {@link #live} call is made for any of them. The
   * view holds every entry as written, each a fingerprint (an id's or a key's) with its payload hash, first-seen time
   * and remember-until ({@link SnapshotEntries#expiresAtMs}). {@link #live} is given only entries whose remember-until
   * is after the instant the replay was read at (the recovery's {@code nowMs}); an entry of the view whose
   * remember-until is at or before that instant is one {@link #live} would not have received, and the taker must
   * skip it itself. The view's entries precede, in journal order, every {@link #live} call that follows (an entry
   * arriving again later is a later accept of the same fingerprint). Return false (the default) to receive them
   * through {@link #expect} and {@link #live} as ever.
   *
   * @param entries the snapshot's entries, in place; valid for as long as the sink keeps a reference to it
   * @return true if the sink takes the entries in place
   */
  default boolean takeSnapshotEntries(SnapshotEntries entries) {
    return false;
  }
}
