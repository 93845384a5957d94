package io.github.vertxdedup.journal;

/**
 * What an owner's records mean, for {@link Journal#writeSnapshot}: a visitor that reads the newest snapshot (as
 * {@link Journal#replayFromSnapshot} delivers it) and the records after it, and writes what they amount to into the
 * {@link SnapshotOutput} it was made with, live entries as it reads them and the rest at {@link #finish}. The owner's
 * recovery ({@code io.github.vertxdedup.journal.internal.Recovery#compaction}) is the one implementation: a restart
 * that loads the snapshot and replays the records after it must rebuild what a replay of every record would.
 *
 * <p>Called on the thread that writes the snapshot. Not thread-safe; one instance per snapshot.
 */
public interface SnapshotCompaction {

  /** @return the visitor that receives the base snapshot and the records after it */
  JournalVisitor visitor();

  /** After the last record: writes the open claims, the offsets and the start of coverage. */
  void finish();
}
