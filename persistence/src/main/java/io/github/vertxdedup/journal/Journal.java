package io.github.vertxdedup.journal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * The journal of one partition: a Chronicle Queue in one directory, holding accepted ids, claims, commits, releases
 * and committed consumer offsets as versioned, checksummed binary records, so that a restart rebuilds the window.
 *
 * <h2>Life cycle and threads</h2>
 * <ol>
 *   <li>{@link #open} (blocking; off the event loop) takes the directory's exclusive lock, clears the locks a
 *       killed writer left in Chronicle's files and opens the queue.</li>
 *   <li>{@link #replay} (blocking; off the event loop) delivers every record from the oldest cycle that may still
 *       hold a live entry. It must complete before the first append: each new cycle starts with the owner's
 *       current claims and offsets (see {@link RollSnapshotSource}), so the owner must have recovered them.</li>
 *   <li>{@code append*} methods are called by one owner thread (the partition's event loop), one at a time. Each
 *       returns once the record is in the memory-mapped queue file, which survives a crash of the process; none
 *       waits for the disk. They return the record's index (increasing) or throw {@link JournalWriteException},
 *       in which case the record is not in the journal.</li>
 *   <li>{@link #sync} (blocking; any thread, typically a worker) forces everything appended before it to disk:
 *       under {@link SyncPolicy#SYNC} the owner answers only once a sync covering the record's index returned.</li>
 *   <li>{@link #writeSnapshot} (blocking; any thread, typically a worker) writes a window snapshot beside the
 *       appends, and {@link #replayFromSnapshot} replays from the newest usable one instead of {@link #replay}: the
 *       records after its position only (see {@code docs/journal.md}, "Window snapshots").</li>
 *   <li>{@link #deleteExpiredCycles} (blocking; any thread) deletes cycle files that hold no live entry.</li>
 *   <li>{@link #close} (blocking; any thread, after the last append) syncs unless the policy is
 *       {@link SyncPolicy#NONE}, closes the queue and releases the lock.</li>
 * </ol>
 *
 * <h2>Records</h2>
 * One record is one queue excerpt: format version, type, entries, CRC32C (see {@code docs/journal.md}). A record
 * that a crash or an I/O error cut short is detected by its length and checksum; replay skips it with a warning and
 * keeps everything else. A record of an unknown format version stops the replay with
 * {@link UnknownFormatVersionException}.
 *
 * <h2>Retention</h2>
 * Files roll every {@link JournalOptions#getRollCycle()}. When an append is the first of a new cycle, the journal
 * first writes a {@code ROLL} record (carrying the previous cycle's latest expiry), the owner's open claims and
 * committed offsets, and an end-of-snapshot record; so a file is no longer needed once every accept and commit in
 * it has expired, and {@link #deleteExpiredCycles} removes it.
 *
 * <h2>Parts</h2>
 * This class is the facade: it opens the journal (the directory lock, the repair of what a killed writer left, the
 * queue), keeps its life-cycle state and delegates to the package-private parts, as Chronicle splits its appender
 * from its tailers: {@link JournalWriter} (appends), {@link JournalSync} (durability), {@link JournalReader} (tail
 * repair and replay) and {@link JournalRetention}; the package documentation says what each does.
 */
public final class Journal implements AutoCloseable {

  /** Largest claimer id, in UTF-8 bytes. */
  public static final int MAX_CLAIMER_BYTES = 255;

  /** Returned by {@link #sync()} and {@link #lastAppendedIndex()} before anything was appended. */
  public static final long NO_INDEX = Syncer.NOTHING;

  private final JournalQueue q;
  private final DirectoryLock directoryLock;
  /** Whether {@link #close} releases {@link #directoryLock}: not when the caller holds it ({@link #openLocked}). */
  private final boolean ownsLock;
  private final JournalReader reader;
  private final JournalWriter writer;
  private final JournalSync sync;
  private final JournalRetention retention;
  private final JournalSnapshots snapshots;
  /** Serialises snapshots with each other and with {@link #close}. */
  private final Object snapshotLock = new Object();
  /**
   * Entries (accepts, claims, commits, releases) appended since the newest snapshot, or read after it by the replay:
   * written by the owner's thread and by {@link #writeSnapshot}, read by the owner ({@link #entriesSinceSnapshot}).
   */
  private final java.util.concurrent.atomic.AtomicLong sinceSnapshot = new java.util.concurrent.atomic.AtomicLong();
  private volatile long snapshotEntries;

  private Journal(Path dir, JournalOptions options, DirectoryLock directoryLock, boolean ownsLock) {
    this.directoryLock = directoryLock;
    this.ownsLock = ownsLock;
    ChronicleLocks.clearLeftovers(dir);
    JournalReader.removeUnfinishedCycleFiles(dir);
    this.q = JournalQueue.open(dir, options);
    JournalWriter w = null;
    try {
      this.reader = new JournalReader(q);
      reader.scanCycles();
      int newest = q.catalog.newest();
      int rolled = CycleCatalog.NONE;
      if (newest != CycleCatalog.NONE) {
        q.time.floor(q.epochMs + newest * q.cycleMs);
        if (q.catalog.isSnapshotComplete(newest)) {
          rolled = newest;
        }
        reader.repairTail(newest);
      }
      this.sync = new JournalSync(q);
      w = new JournalWriter(q, sync, rolled);
      this.writer = w;
      this.retention = new JournalRetention(q);
      this.snapshots = new JournalSnapshots(q);
      snapshots.removeTemporaryFiles();
      sync.start();
    } catch (RuntimeException | Error e) {
      if (w != null) {
        w.close();
      }
      q.queue.close();
      throw e;
    }
  }

  /**
   * Opens the journal in {@code dir}, creating the directory if needed, and takes its exclusive lock. Blocking:
   * call it off the event loop. O(number of cycle files): it reads the first records of each.
   *
   * @param dir the journal directory, one per partition ({@code <journalDir>/<address>/<partition>})
   * @param options the options; copied
   * @return the open journal; call {@link #replay} before the first append
   * @throws JournalLockedException if another journal (in this or another process) holds the directory
   * @throws UncheckedIOException if the directory or its lock file cannot be created
   * @throws NullPointerException if an argument is null
   */
  public static Journal open(Path dir, JournalOptions options) {
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(options, "options");
    JournalOptions copy = new JournalOptions(options);
    Path abs = dir.toAbsolutePath().normalize();
    try {
      Files.createDirectories(abs);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the journal directory " + abs, e);
    }
    DirectoryLock lock = DirectoryLock.acquire(abs);
    try {
      return new Journal(abs, copy, lock, true);
    } catch (RuntimeException | Error e) {
      lock.close();
      throw e;
    }
  }

  /**
   * Opens the journal in {@code dir} under a lock the caller took and keeps: {@link #close} leaves it held, so the
   * caller may still act on the directory (delete it) before anyone else can open it. Blocking.
   *
   * @param dir the journal directory, absolute and normalized, existing
   * @param options the options; copied
   * @param lock the directory's lock, held by the caller
   * @return the open journal
   */
  static Journal openLocked(Path dir, JournalOptions options, DirectoryLock lock) {
    return new Journal(dir, new JournalOptions(options), lock, false);
  }

  // ---------------------------------------------------------------------------------------------------- replay

  /**
   * Delivers the journal's records to {@code visitor} in append order, from the oldest cycle that may still hold a
   * live entry (see {@link #deleteExpiredCycles}); older cycles are skipped unread. Torn or damaged records are
   * skipped with a warning. Reports progress to the options' listener about once per progress interval. Blocking:
   * call it off the event loop. May be called again before the first append (it reads the same records).
   *
   * @param visitor receives the records; see {@link JournalVisitor}
   * @return counts and timing
   * @throws UnknownFormatVersionException if a record has a format version this reader does not know; the replay
   *     stops there
   * @throws JournalException if a record with a valid checksum has a type this version does not define
   * @throws IllegalStateException if the journal is closed or something was appended already
   * @throws RuntimeException whatever the visitor throws, unchanged
   */
  public ReplayResult replay(JournalVisitor visitor) {
    Objects.requireNonNull(visitor, "visitor");
    requireReplayable();
    return reader.replay(visitor, this::replayed);
  }

  /** @throws IllegalStateException if the journal is closed or something was appended already */
  private synchronized void requireReplayable() {
    if (q.state == JournalQueue.State.CLOSED) {
      throw new IllegalStateException("journal " + q.dir + " is closed");
    }
    if (writer.appendedAny()) {
      throw new IllegalStateException("journal " + q.dir + ": replay must run before the first append");
    }
  }

  /**
   * Like {@link #replay}, but starts from the newest usable window snapshot ({@link #writeSnapshot}) when there is
   * one: the visitor gets {@link JournalVisitor#onSnapshot}, the snapshot's live entries (as accepts without key, or
   * in place if it takes them: {@link JournalVisitor#onSnapshotEntriesInPlace}), open claims and offsets, then the
   * records after the snapshot's position only. A snapshot is usable when every
   * checksum of it holds, it was written under this roll cycle and {@code ownerKey}, and it is no older than the
   * oldest cycle a full replay would read; otherwise (damaged, missing, stale: each logged) the one before it is
   * tried, then a full replay. The journal is never trimmed to a snapshot, so a full replay always remains possible.
   *
   * <p>The content a snapshot delivers is what the owner's {@link SnapshotCompaction} made of the records: a
   * visitor that means by them what that compaction does (the owner's recovery) rebuilds the same state either way.
   * Blocking; same preconditions and errors as {@link #replay}.
   *
   * @param ownerKey the owner's key the snapshots were written under (the service passes its window, ms)
   * @param visitor receives the snapshot and the records after it
   * @return counts and timing; {@link ReplayResult#snapshotIndex()} says which snapshot was used
   */
  public ReplayResult replayFromSnapshot(long ownerKey, JournalVisitor visitor) {
    Objects.requireNonNull(visitor, "visitor");
    requireReplayable();
    SnapshotFile.Loaded snapshot = snapshots.newestUsable(ownerKey, q.time.now());
    ReplayResult r = reader.replayFrom(snapshot, visitor, this::replayed);
    snapshotEntries = r.snapshotEntries();
    sinceSnapshot.set(r.entries());
    return r;
  }

  /**
   * Writes a window snapshot: reads the newest usable snapshot (or, without one, the journal from the oldest cycle
   * a replay reads) and the records after it up to the end the queue has now, through the owner's compaction, into
   * a new file ({@code snapshot-<position>.snap}, written under a temporary name, forced to disk, renamed), then
   * deletes all but the newest {@value JournalSnapshots#KEEP} snapshots. Runs beside the owner's appends: it reads
   * with its own tailer and neither stops nor slows the writer beyond sharing the disk and a core. Thread-safe:
   * snapshots are serialised with each other, with {@link #deleteExpiredCycles} and with {@link #close} (which
   * waits for one in progress and makes it stop early). Blocking: O(live entries + records since the base); run it
   * on a worker.
   *
   * @param ownerKey the owner's key (the service's window, ms): a restart under another key does not use it
   * @param compaction makes the owner's compaction, writing into the output it is given
   * @return what was written, or null if nothing was appended since the newest snapshot (nothing is written)
   * @throws IllegalStateException before {@link #replay} completed, or once the journal is closed or closing
   * @throws java.io.UncheckedIOException if the file cannot be written; no snapshot is left under its final name
   */
  public SnapshotResult writeSnapshot(long ownerKey,
      java.util.function.Function<SnapshotOutput, SnapshotCompaction> compaction) {
    Objects.requireNonNull(compaction, "compaction");
    synchronized (snapshotLock) {
      synchronized (retention) {
        JournalQueue.State s = q.state;
        if (s != JournalQueue.State.READY) {
          throw new IllegalStateException("journal " + q.dir + (s == JournalQueue.State.CLOSED ? " is closed"
              : ": replay() must complete before a snapshot is written"));
        }
        long since = sinceSnapshot.get();
        SnapshotResult r = snapshots.write(reader, ownerKey, compaction,
            () -> q.state == JournalQueue.State.CLOSED);
        if (r != null) {
          snapshotEntries = r.entries();
          // What was appended while the snapshot read stays counted: part of it is after the position.
          sinceSnapshot.addAndGet(-since);
        }
        return r;
      }
    }
  }

  /**
   * Returns the entries appended (or replayed) after the newest snapshot, to decide when the next one is due.
   * Thread-safe.
   *
   * @return accepts, claims, commits and releases since the newest snapshot, about
   */
  public long entriesSinceSnapshot() {
    return sinceSnapshot.get();
  }

  /**
   * Returns the live entries the newest snapshot holds (written or loaded by this journal), 0 if none. Thread-safe.
   *
   * @return the count
   */
  public long snapshotEntries() {
    return snapshotEntries;
  }

  private synchronized void replayed() {
    if (q.state == JournalQueue.State.OPENED) {
      q.state = JournalQueue.State.READY;
    }
  }

  // --------------------------------------------------------------------------------------------------- appends

  /**
   * Appends one accepted id. Owner's thread; O(1); allocates nothing.
   *
   * @param fingerprint the id's fingerprint, not 0
   * @param keyFingerprint the business key's fingerprint, or 0
   * @param payloadHash the payload's hash, or 0
   * @param acceptedAtMs when it was accepted, epoch milliseconds
   * @param expiresAtMs when it may be forgotten (remember-until), {@code > acceptedAtMs}
   * @return the record's index
   * @throws IllegalArgumentException if {@code fingerprint} is 0 or {@code expiresAtMs <= acceptedAtMs}
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or when called from a roll
   *     snapshot source
   * @throws JournalWriteException if the record could not be written; it is not in the journal
   */
  public long appendAccept(long fingerprint, long keyFingerprint, long payloadHash, long acceptedAtMs,
      long expiresAtMs) {
    long index = writer.appendAccept(fingerprint, keyFingerprint, payloadHash, acceptedAtMs, expiresAtMs);
    sinceSnapshot.incrementAndGet();
    return index;
  }

  /**
   * Appends a batch of accepted ids as one record, all or nothing: the group-commit form. Owner's thread;
   * O(batch size). The batch is left as it was (clear it to reuse it).
   *
   * @param batch the ids; not empty
   * @return the record's index
   * @throws IllegalArgumentException if the batch is empty
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or from a roll snapshot source
   * @throws JournalWriteException if the record could not be written; none of the batch is in the journal
   */
  public long appendAccepts(AcceptBatch batch) {
    long index = writer.appendAccepts(batch);
    sinceSnapshot.addAndGet(batch.size());
    return index;
  }

  /**
   * Appends a claim: the id is in flight, held by {@link ClaimEntry#claimerId()}, until
   * {@link ClaimEntry#leaseEndMs()}. Written in the current format (version {@value RecordFormat#VERSION}).
   * Owner's thread.
   *
   * @param claim the claim
   * @return the record's index
   * @throws NullPointerException if {@code claim} is null
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or from a roll snapshot source
   * @throws JournalWriteException if the record could not be written; it is not in the journal
   */
  public long appendClaim(ClaimEntry claim) {
    long index = writer.appendClaim(claim);
    sinceSnapshot.incrementAndGet();
    return index;
  }

  /**
   * Appends a commit: the claim with {@code token} succeeded; remember the id until {@code expiresAtMs}.
   * Owner's thread.
   *
   * @param fingerprint the id's fingerprint, not 0
   * @param token the token of the committed claim
   * @param expiresAtMs when the id may be forgotten, epoch milliseconds
   * @return the record's index
   * @throws IllegalArgumentException if {@code fingerprint} is 0
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or from a roll snapshot source
   * @throws JournalWriteException if the record could not be written; it is not in the journal
   */
  public long appendCommit(long fingerprint, long token, long expiresAtMs) {
    long index = writer.appendCommit(fingerprint, token, expiresAtMs);
    sinceSnapshot.incrementAndGet();
    return index;
  }

  /**
   * Appends a release: the claim with {@code token} gave up; the id is free again. Owner's thread.
   *
   * @param fingerprint the id's fingerprint, not 0
   * @param token the token of the released claim
   * @return the record's index
   * @throws IllegalArgumentException if {@code fingerprint} is 0
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or from a roll snapshot source
   * @throws JournalWriteException if the record could not be written; it is not in the journal
   */
  public long appendRelease(long fingerprint, long token) {
    long index = writer.appendRelease(fingerprint, token);
    sinceSnapshot.incrementAndGet();
    return index;
  }

  /**
   * Appends one committed consumer offset. Owner's thread.
   *
   * @param topic the topic; see {@link OffsetCommit}
   * @param partition the partition, {@code >= 0}
   * @param offset the committed offset, {@code >= 0}
   * @return the record's index
   * @throws IllegalArgumentException if a component is invalid
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or from a roll snapshot source
   * @throws JournalWriteException if the record could not be written; it is not in the journal
   */
  public long appendOffsetCommit(String topic, int partition, long offset) {
    return appendOffsetCommits(List.of(new OffsetCommit(topic, partition, offset)));
  }

  /**
   * Appends committed consumer offsets as one record, all or nothing. Owner's thread.
   *
   * @param commits the offsets; not empty, at most {@link AcceptBatch#MAX_SIZE}
   * @return the record's index
   * @throws IllegalArgumentException if {@code commits} is empty or too large
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or from a roll snapshot source
   * @throws JournalWriteException if the record could not be written; none of it is in the journal
   */
  public long appendOffsetCommits(Collection<OffsetCommit> commits) {
    return writer.appendOffsetCommits(commits);
  }

  // ------------------------------------------------------------------------------------------------------- sync

  /**
   * Forces to disk every record appended before this call, and returns the index up to which every record is
   * durable. Thread-safe; blocking (one {@code fsync}, about 0.1 ms to a few ms): call it off the event loop.
   * Concurrent calls are serialised, and a call whose records an earlier one already covered returns at once, so
   * one sync serves every append made before it (group commit). A record with index {@code i} is durable once a
   * call returned a value {@code >= i}.
   *
   * <p>A failed sync leaves the journal failed: what reached the disk is unknown (Linux may drop the dirty pages
   * after reporting the error), so every later append and sync throws until the journal is closed and reopened.
   *
   * @return the index of the last durable record, or {@link #NO_INDEX} if nothing was appended
   * @throws JournalWriteException if the sync fails now or failed before
   * @throws IllegalStateException if the journal is closed
   */
  public long sync() {
    return sync.sync();
  }

  // -------------------------------------------------------------------------------------------------- retention

  /**
   * Deletes the cycle files a replay at {@code nowMs} would not read: those before the oldest cycle that may still
   * hold a live entry (every accept and commit in them has expired, and their claims and offsets were carried into
   * a later cycle), and the window snapshots older than that start (no replay could use them). Never deletes the
   * newest cycle. Thread-safe with appends; blocking (file deletion): run it off
   * the event loop, for example once per roll cycle from a timer (a journal nobody appends to still has files to
   * delete). O(number of cycle files).
   *
   * @param nowMs the owner's current time, epoch milliseconds
   * @return what was deleted and what is kept
   * @throws IllegalStateException before {@link #replay} completed, or after {@link #close}
   */
  public RetentionResult deleteExpiredCycles(long nowMs) {
    synchronized (retention) {
      RetentionResult r = retention.deleteExpiredCycles(nowMs);
      snapshots.deleteStale(nowMs);
      return r;
    }
  }

  // ------------------------------------------------------------------------------------------------ accessors

  /**
   * Returns the journal directory.
   *
   * @return the absolute path
   */
  public Path directory() {
    return q.dir;
  }

  /**
   * Returns a copy of the options the journal was opened with.
   *
   * @return the options
   */
  public JournalOptions options() {
    return new JournalOptions(q.options);
  }

  /**
   * Returns the index of the last record appended since the journal was opened. Thread-safe.
   *
   * @return the index, or {@link #NO_INDEX}
   */
  public long lastAppendedIndex() {
    return sync.lastAppendedIndex();
  }

  /**
   * Returns the index up to which records are known to be on disk. Thread-safe.
   *
   * @return the index, or {@link #NO_INDEX}
   */
  public long syncedIndex() {
    return sync.syncedIndex();
  }

  /**
   * Returns the number of cycle files on disk, as the journal knows them. Thread-safe.
   *
   * @return the count
   */
  public int cycleCount() {
    return q.catalog.size();
  }

  /**
   * Returns the roll cycles on disk, oldest first (Chronicle's cycle numbers: time since the epoch divided by the
   * roll cycle length). Thread-safe.
   *
   * @return a new list
   */
  public List<Integer> cycles() {
    return q.catalog.list();
  }

  /**
   * Returns the number of cycle files Chronicle holds open (mapped) right now. Thread-safe.
   *
   * @return the count
   */
  public int openCycleFiles() {
    return q.openCycleFiles.get();
  }

  /**
   * Returns how many appends failed since the journal was opened. Thread-safe.
   *
   * @return the count
   */
  public long appendFailures() {
    return writer.appendFailures();
  }

  /**
   * Returns how many syncs failed since the journal was opened (at most one: a failure is final). Thread-safe.
   *
   * @return the count
   */
  public long syncFailures() {
    return sync.failures();
  }

  /** Tests only: runs {@code fault} in the middle of writing each record; null removes it. */
  void writeFault(Runnable fault) {
    writer.writeFault(fault);
  }

  /**
   * Closes the journal: stops the background sync, syncs unless the policy is {@link SyncPolicy#NONE} (and no
   * sync failed), closes the queue and releases the directory lock. Blocking; call it from any thread once the
   * owner has stopped appending. Idempotent.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (q.state == JournalQueue.State.CLOSED) {
        return;
      }
      q.state = JournalQueue.State.CLOSED;
    }
    synchronized (snapshotLock) {
      // A snapshot in progress sees CLOSED and stops at its next check; the queue stays open until it has.
    }
    try {
      sync.finalSync();
    } finally {
      writer.close();
      q.queue.close();
      sync.close();
      if (ownsLock) {
        directoryLock.close();
      }
    }
  }

  @Override
  public String toString() {
    return "Journal{" + q.dir + ", " + q.state + ", cycles=" + q.catalog.size() + "}";
  }
}
