package io.github.vertxdedup.impl.journal;

import io.github.vertxdedup.window.PreparedRestore;
import io.github.vertxdedup.window.TableOrderedEntries;

import io.vertx.core.Future;

/**
 * The seam between a partition and its journal: the partition reports every state change here and replies to the
 * caller only after the returned future has succeeded, so that nothing is answered {@code ACCEPTED},
 * {@code COMMITTED} or {@code RELEASED} before it is durable. The default, {@link NoJournal}, records nothing
 * and returns completed futures, so a memory-only partition replies at once.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>Calls come from the partition's event loop, one at a time, in decision order. An implementation must not
 *   block it: append to a memory-mapped queue, or hand the write to a worker and complete the future later.</li>
 *   <li>Write futures must complete in the order the writes were issued; the partition holds each reply until the
 *   latest write issued before it has completed. A future that has already completed when it is returned costs
 *   nothing.</li>
 *   <li>A failed write (a future that fails) means the record is not in the journal. The partition stops deciding,
 *   fails that reply and every later waiting one with a 503, {@link #close() closes} the journal, and
 *   {@link #open() reopens} and {@link #recover recovers} it into a new, empty window, with a backoff between
 *   failed attempts; it answers 503 ("recovering") meanwhile. So the window never keeps a decision the journal
 *   lacks, and a redelivery of the refused id is accepted once the journal works again.</li>
 *   <li>Instants are the partition clock's milliseconds ({@link io.github.vertxdedup.time.DedupClock}): close to
 *   epoch milliseconds, monotonic within a process. An implementation that must survive a restart records wall time
 *   too and maps one onto the other on recovery.</li>
 *   <li>Fingerprints are the partition's (scopes {@code <address>/id} and {@code <address>/key}); a key fingerprint
 *   of 0 means the event had no key. A payload hash of 0 means none.</li>
 * </ul>
 *
 * <p>Lifecycle: {@link #open()}, then {@link #recover(RecoveryTarget)} (the partition answers 503 "recovering" until
 * it completes), then writes, then {@link #close()} (which flushes; the partition answers its waiting requests once
 * it completes). After a close the partition may {@link #open()} the journal again (after a failed write, or when
 * an open failed because another owner held the journal); an implementation must allow that cycle any number of
 * times.
 *
 * <p>Batches: {@link #beginBatch()} and {@link #endBatch()} bracket the decisions of one batch request, so that an
 * implementation may journal its accepts as one record (all or nothing). Between them, {@link #accepted} may return
 * a future that completes only once {@link #endBatch()} has written the batch.
 */
public interface PartitionJournal {

  /**
   * Opens the journal (files, appender). Called first, and again after {@link #close()} when the partition reopens
   * its journal.
   *
   * @return completes when {@link #recover} may be called; fails with
   *     {@link io.github.vertxdedup.journal.JournalLockedException} (possibly as the cause) when another owner holds
   *     the journal: the partition answers 503 and tries again later
   */
  Future<Void> open();

  /**
   * Replays what the journal holds into the partition. The target must be called on the partition's context (read off
   * the event loop, hand batches back with {@code context.runOnContext}); the future completes on that context after
   * the last call.
   *
   * @param target receives the remembered entries and live claims
   * @return completes when recovery is over; a failure fails the partition's start
   */
  Future<Void> recover(RecoveryTarget target);

  /**
   * An id (and its key) was accepted by {@code check} and is remembered until {@code expiresAtMs}.
   *
   * @param idFingerprint the id's fingerprint
   * @param keyFingerprint the key's fingerprint, or 0
   * @param payloadHash the payload hash, or 0
   * @param firstSeenMs the decision time
   * @param expiresAtMs the remember-until instant {@code T}
   * @return completes when the record is durable
   */
  Future<Void> accepted(long idFingerprint, long keyFingerprint, long payloadHash, long firstSeenMs,
      long expiresAtMs);

  /**
   * An id (and its key) was claimed.
   *
   * @param idFingerprint the id's fingerprint
   * @param keyFingerprint the key's fingerprint, or 0
   * @param payloadHash the payload hash, or 0
   * @param claimToken the token handed to the claimer
   * @param claimedAtMs the decision time
   * @param leaseEndMs when the claim lapses unless committed or released
   * @param rememberUntilMs the explicit expiry to apply on commit, or {@code Long.MIN_VALUE} for the default
   * @param claimer who claims (a consumer's instance id, at most 255 UTF-8 bytes), or null if the request named
   *     nobody; recovery hands it back so that a restarted claimer can release its own orphaned claims
   * @return completes when the record is durable
   */
  Future<Void> claimed(long idFingerprint, long keyFingerprint, long payloadHash, String claimToken,
      long claimedAtMs, long leaseEndMs, long rememberUntilMs, String claimer);

  /**
   * A claim was committed: the id (and its key) is remembered until {@code expiresAtMs}.
   *
   * @param idFingerprint the id's fingerprint
   * @param keyFingerprint the key's fingerprint, or 0
   * @param payloadHash the payload hash, or 0
   * @param committedAtMs the decision time
   * @param expiresAtMs the remember-until instant; not after {@code committedAtMs} when nothing is remembered
   * @return completes when the record is durable
   */
  Future<Void> committed(long idFingerprint, long keyFingerprint, long payloadHash, long committedAtMs,
      long expiresAtMs);

  /**
   * A claim was released: the id (and its key) is forgotten.
   *
   * @param idFingerprint the id's fingerprint
   * @param keyFingerprint the key's fingerprint, or 0
   * @return completes when the record is durable
   */
  Future<Void> released(long idFingerprint, long keyFingerprint);

  /**
   * A consumer offset was committed for {@code topic}/{@code partition}: the Kafka integration journals the offsets
   * it commits beside the ids, so that a restart resumes from the highest one recorded. Recovery hands the highest
   * offset per topic-partition back through {@link RecoveryTarget#restoreOffset}; a lower offset journaled later never
   * wins ({@link io.github.vertxdedup.journal.internal.CommittedOffsets}).
   *
   * @param topic the topic; not empty, at most 255 bytes in UTF-8
   * @param partition the topic's partition, {@code >= 0}
   * @param offset the committed offset (the next offset to consume), {@code >= 0}
   * @return completes when the record is durable (at once for the memory-only journal, which keeps nothing)
   */
  Future<Void> offsetsCommitted(String topic, int partition, long offset);

  /**
   * Records that the partition covers event times from {@code fromMs} on: its window holds every id it must remember
   * from that instant (a rebuild from another source put them in, journaled like any accept), although the journal
   * was first opened later, or holds less than that first open suggests. The next {@link #recover} hands it back
   * through {@link RecoveryTarget#memoryBegins} (the earlier of it and the journal's earliest record). Default:
   * nothing (a journal that keeps nothing recovers nothing).
   *
   * @param fromMs the instant, epoch milliseconds, {@code >= 0}
   * @return completes once the instant is durable; fails with the I/O error
   */
  default Future<Void> memoryBegins(long fromMs) {
    return Future.succeededFuture();
  }

  /**
   * The decisions of one batch request follow, up to {@link #endBatch()}. Default: nothing (every write stands
   * alone).
   */
  default void beginBatch() {
  }

  /**
   * The batch begun by {@link #beginBatch()} is decided: write what it buffered. Called even when the batch failed
   * part way. Default: nothing.
   */
  default void endBatch() {
  }

  /**
   * Runs the journal's retention if it is due: deletes, off the event loop, what no replay needs any more. The
   * partition calls it from its periodic timer (every second) while it is ready, so that a journal nobody writes to
   * is trimmed too; an implementation decides how often a pass is due and must return at once. Default: nothing (a
   * journal that keeps nothing).
   */
  default void retain() {
  }

  /**
   * Flushes and closes. Called when the partition stops or reopens its journal; no write follows until the next
   * {@link #open()}.
   *
   * @return completes when every issued write has completed (or failed) and the files are closed
   */
  Future<Void> close();

  /**
   * Receives the journal's content during {@link #recover}. Implemented by the partition; every method must be
   * called on the partition's context.
   */
  interface RecoveryTarget {

    /**
     * About {@code entries} entries follow from a window snapshot, in the order of their home slots in the window's
     * table: the partition grows its new window's table for them first ({@link
     * io.github.vertxdedup.window.DedupWindow#reserve}), as inserted in that order into a table too small for them
     * they would cost time quadratic in their number. Called on the replaying worker, at most once, before any other
     * method of this target: the new window is used by no other thread yet, so the table is allocated there, not on
     * the event loop, and the restore that follows on the partition's context sees it (the hand-off of the first
     * entries orders them). The default does nothing.
     *
     * @param entries the number of entries the snapshot holds
     */
    default void reserve(long entries) {
    }

    /**
     * Brings the window's table to its presized size if it was left to presize ({@link
     * io.github.vertxdedup.window.DedupWindow#presize()}): called on the recovery's worker before the first entries
     * are handed to the partition's context, unless the snapshot's entries were restored in place. The default does
     * nothing.
     */
    default void presize() {
    }

    /**
     * Prepares a restore in place of a snapshot's entries ({@link io.github.vertxdedup.window.DedupWindow
     * #prepareRestore}): called on the recovery's worker, one pass over them. The default returns null: the entries
     * are then delivered one by one.
     *
     * @param entries the snapshot's entries, in table order, read in place
     * @return the prepared restore, or null to have them delivered one by one
     */
    default PreparedRestore prepareRestore(TableOrderedEntries entries) {
      return null;
    }

    /**
     * Restores a snapshot's entries in place, on the partition's context ({@link
     * io.github.vertxdedup.window.DedupWindow#restoreInPlace}).
     *
     * @param prepared what {@link #prepareRestore} returned
     * @return true if restored; false to have them delivered one by one
     */
    default boolean restoreInPlace(PreparedRestore prepared) {
      return false;
    }

    /**
     * Puts back a remembered entry (an id or a key) with its original times; an entry already expired is skipped.
     *
     * @param fingerprint the fingerprint
     * @param payloadHash the payload hash, or 0
     * @param firstSeenMs when it was accepted
     * @param expiresAtMs its remember-until instant
     */
    void restore(long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs);

    /**
     * Puts back a batch of remembered entries, as {@link #restore} does for each (the default calls it for each). The
     * partition overrides it to overlap the cache misses of a large table
     * ({@link io.github.vertxdedup.window.DedupWindow#restoreBatch}). The arrays are the caller's: read them during
     * the call only.
     *
     * @param fingerprints the fingerprints
     * @param payloadHashes their payload hashes, or 0
     * @param firstSeenMs when each was accepted
     * @param expiresAtMs the remember-until instant of each
     * @param length the number of entries, from index 0
     */
    default void restoreBatch(long[] fingerprints, long[] payloadHashes, long[] firstSeenMs, long[] expiresAtMs,
        int length) {
      for (int i = 0; i < length; i++) {
        restore(fingerprints[i], payloadHashes[i], firstSeenMs[i], expiresAtMs[i]);
      }
    }

    /**
     * Puts back a claim that was neither committed nor released; ignored if its lease has ended.
     *
     * @param idFingerprint the id's fingerprint
     * @param keyFingerprint the key's fingerprint, or 0
     * @param payloadHash the payload hash, or 0
     * @param claimToken its token
     * @param claimedAtMs when it was claimed
     * @param leaseEndMs when its lease ends
     * @param rememberUntilMs its explicit expiry, or {@code Long.MIN_VALUE}
     * @param claimer who claimed it, or null if nobody was named (or the journal's record predates claimers)
     */
    void restoreClaim(long idFingerprint, long keyFingerprint, long payloadHash, String claimToken,
        long claimedAtMs, long leaseEndMs, long rememberUntilMs, String claimer);

    /**
     * Says from when the partition's memory is complete: the earliest instant from which every accepted id is in
     * the journal. Events older than it are answered {@code UNKNOWN} (or accepted uncovered) unless remembered.
     * Without this call the partition's memory begins at its start.
     *
     * @param memoryBeginsMs clock milliseconds
     */
    void memoryBegins(long memoryBeginsMs);

    /**
     * Puts back a committed consumer offset. Called once per topic-partition, with the highest offset recorded.
     *
     * @param topic the topic
     * @param partition the topic's partition
     * @param offset the committed offset
     */
    void restoreOffset(String topic, int partition, long offset);
  }
}
