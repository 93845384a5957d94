package io.github.vertxdedup.journal;

/**
 * The owner's state that each new cycle starts with, so that old cycles can be deleted once their accepts have
 * expired (see {@link Journal#deleteExpiredCycles}).
 *
 * <p>When an append is the first one in a new roll cycle, the journal first writes a {@code ROLL} record, then calls
 * this source, which writes every claim that is still open and every committed offset through the given
 * {@link RollSnapshotWriter}, then an end-of-snapshot record; then the append itself. The call happens inside that
 * append, on the owner's thread, so the source reads the owner's state without locks. It must not append to the
 * journal itself ({@link IllegalStateException}). If it throws, the append fails with a
 * {@link JournalWriteException} and the next append writes the snapshot again.
 *
 * <p>Recovery adds carried-over claims and offsets to what it already saw (it never replaces), so writing an entry
 * twice is harmless and an entry the owner has not yet applied to its state is still in the journal.
 */
@FunctionalInterface
public interface RollSnapshotSource {

  /** A source that carries nothing over: for owners without claims or offsets. */
  RollSnapshotSource NONE = writer -> {
  };

  /**
   * Writes the open claims and committed offsets into a new cycle.
   *
   * @param writer where to write them; valid only during this call
   */
  void writeSnapshot(RollSnapshotWriter writer);
}
