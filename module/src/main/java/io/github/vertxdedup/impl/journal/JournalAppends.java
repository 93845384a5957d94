package io.github.vertxdedup.impl.journal;

import io.github.vertxdedup.journal.AcceptBatch;
import io.github.vertxdedup.journal.ClaimEntry;
import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.OffsetCommit;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.journal.internal.CarriedState;
import io.github.vertxdedup.journal.internal.Recovery;
import io.github.vertxdedup.window.DedupWindow;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.nio.file.Path;
import java.util.function.Supplier;

/**
 * The writes of a {@link ChroniclePartitionJournal}: each state change of the partition appended as its journal
 * record, on the partition's event loop, and the future the partition's reply waits for.
 *
 * <h2>Appends</h2>
 * An append writes into the memory-mapped queue file and returns without waiting for the disk (its cost is in
 * {@code docs/benchmarks-journal.md}); only the first append of a new roll cycle also creates that cycle's file and
 * writes the roll snapshot there. The accepts of one batch request, between {@link #beginBatch} and {@link #endBatch},
 * are buffered and written as one record (all or nothing; {@link AcceptBatch#MAX_SIZE} at most per record), and
 * share one future. A failed append fails its future (nothing of it is written).
 *
 * <h2>Durability</h2>
 * Under {@link SyncPolicy#NONE} and {@link SyncPolicy#ASYNC} a write's future is complete when the append returns:
 * the record is in the page cache and survives a crash of the process. Under {@link SyncPolicy#SYNC} the future
 * completes once an {@code fsync} covering the record returned ({@link GroupCommit}): so the event loop never waits
 * for the disk, and one {@code fsync} answers as many requests as arrived during the previous one.
 *
 * <h2>Mapping onto the journal's records</h2>
 * A claim is a {@code CLAIM} record ({@link ClaimEntry}): fingerprints, payload hash, token, claim time, lease end,
 * explicit remember-until ({@link ClaimEntry#NOT_RECORDED} for the default) and the claimer named by the request
 * (a consumer's instance id; {@link ClaimEntry#NO_CLAIMER} if none). A claim token (16 hex digits) is the record's
 * 64-bit token ({@link ChroniclePartitionJournal#tokenValue}). A {@code COMMIT} record carries no key: replay takes
 * it, and the committed id's first-seen time, from the claim ({@link Recovery}); lookups after a restart report that
 * time at bucket precision anyway.
 *
 * <h2>Carried state</h2>
 * {@link CarriedState} keeps a copy of the open claims (added once their {@code CLAIM} record is written, removed
 * once their commit or release is) and of the committed offsets; the first append of each roll cycle writes them
 * again into the new cycle, so that old cycles can go once their accepts have expired.
 *
 * <p>Not thread-safe: confined to the partition's event loop; the syncs complete on the partition's context.
 */
final class JournalAppends {

  private static final Future<Void> DONE = Future.succeededFuture();

  private final Path dir;
  private final SyncPolicy policy;
  private final CarriedState carried;
  private final Supplier<Journal> openJournal;
  private final Runnable afterAppend;
  /** SYNC only: the writes waiting for a sync. */
  private final GroupCommit groupCommit;
  private final AcceptBatch batch = new AcceptBatch(256);
  private boolean batching;
  private Promise<Void> batchPromise;
  private Context context;

  /**
   * @param dir the journal directory, for messages
   * @param policy the journal's sync policy
   * @param carried the journal's carried state: open claims and committed offsets, kept up to date here
   * @param openJournal the journal to append to, or null while it is not open or is closing (an append then fails)
   * @param afterAppend called after every append (the journal's retention, due once per roll cycle)
   */
  JournalAppends(Path dir, SyncPolicy policy, CarriedState carried, Supplier<Journal> openJournal,
      Runnable afterAppend) {
    this.dir = dir;
    this.policy = policy;
    this.carried = carried;
    this.openJournal = openJournal;
    this.afterAppend = afterAppend;
    this.groupCommit = new GroupCommit(openJournal);
  }

  /**
   * @param context the partition's context, where the syncs complete; set before the first append
   */
  void bind(Context context) {
    this.context = context;
  }

  /** @see PartitionJournal#accepted */
  Future<Void> accepted(long idFingerprint, long keyFingerprint, long payloadHash, long firstSeenMs,
      long expiresAtMs) {
    if (batching) {
      try {
        if (batch.size() == AcceptBatch.MAX_SIZE) {
          flushBatch();
        }
        batch.add(idFingerprint, keyFingerprint, payloadHash, firstSeenMs, expiresAtMs);
      } catch (RuntimeException e) {
        return Future.failedFuture(e);
      }
      if (batchPromise == null) {
        batchPromise = Promise.promise();
      }
      return batchPromise.future();
    }
    try {
      return written(appender().appendAccept(idFingerprint, keyFingerprint, payloadHash, firstSeenMs, expiresAtMs));
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
  }

  /** @see PartitionJournal#claimed */
  Future<Void> claimed(long idFingerprint, long keyFingerprint, long payloadHash, String claimToken,
      long claimedAtMs, long leaseEndMs, long rememberUntilMs, String claimer) {
    flushIfBatching();
    try {
      long token = ChroniclePartitionJournal.tokenValue(claimToken);
      ClaimEntry claim = ClaimEntry.of(idFingerprint, keyFingerprint, payloadHash, token, claimedAtMs, leaseEndMs,
          rememberUntilMs == DedupWindow.DEFAULT_REMEMBER_UNTIL ? ClaimEntry.NOT_RECORDED : rememberUntilMs,
          claimer == null ? ClaimEntry.NO_CLAIMER : claimer);
      long index = appender().appendClaim(claim);
      carried.claimOpened(claim);
      return written(index);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
  }

  /** @see PartitionJournal#committed */
  Future<Void> committed(long idFingerprint, long expiresAtMs) {
    flushIfBatching();
    try {
      long index = appender().appendCommit(idFingerprint, carried.openToken(idFingerprint), expiresAtMs);
      carried.claimClosed(idFingerprint);
      return written(index);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
  }

  /** @see PartitionJournal#released */
  Future<Void> released(long idFingerprint) {
    flushIfBatching();
    try {
      long index = appender().appendRelease(idFingerprint, carried.openToken(idFingerprint));
      carried.claimClosed(idFingerprint);
      return written(index);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
  }

  /** @see PartitionJournal#offsetsCommitted */
  Future<Void> offsetsCommitted(String topic, int partition, long offset) {
    flushIfBatching();
    try {
      OffsetCommit commit = new OffsetCommit(topic, partition, offset);
      long index = appender().appendOffsetCommit(commit.topic(), commit.partition(), commit.offset());
      carried.offsetCommitted(commit);
      return written(index);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
  }

  /** @see PartitionJournal#beginBatch */
  void beginBatch() {
    flushIfBatching();
    batching = true;
  }

  /** @see PartitionJournal#endBatch */
  void endBatch() {
    batching = false;
    flushBatch();
  }

  /** @return the sync in flight (SYNC), or null */
  Future<?> syncInFlight() {
    return groupCommit.inFlight();
  }

  /**
   * Closing, once the sync in flight has completed: settles the future of accepts still buffered (failed, as nothing
   * is appended once the journal is closing), then syncs the writes that wait for a sync (SYNC) and settles theirs.
   *
   * @param j the journal being closed, or null if it is not open
   * @return completes when every write's future is settled
   */
  Future<Void> flush(Journal j) {
    if (batching || !batch.isEmpty()) {
      batching = false;
      flushBatch();
    }
    return groupCommit.flush(context, j);
  }

  /** Closed: forgets the buffered accepts and their future. */
  void clear() {
    batch.clear();
    batchPromise = null;
  }

  private void flushIfBatching() {
    if (!batch.isEmpty()) {
      flushBatch();
    }
  }

  /** Writes the buffered accepts as one record and settles the batch's future with the outcome. */
  private void flushBatch() {
    if (batch.isEmpty()) {
      return;
    }
    Promise<Void> p = batchPromise;
    batchPromise = null;
    Future<Void> outcome;
    try {
      outcome = written(appender().appendAccepts(batch));
    } catch (RuntimeException e) {
      outcome = Future.failedFuture(e);
    } finally {
      batch.clear();
    }
    if (p != null) {
      outcome.onComplete(p);
    }
  }

  private Journal appender() {
    Journal j = openJournal.get();
    if (j == null) {
      throw new IllegalStateException("journal " + dir + " is not open");
    }
    return j;
  }

  /** The future of a record appended at {@code index}: done now, or (SYNC) once a sync covers it. */
  private Future<Void> written(long index) {
    afterAppend.run();
    if (policy != SyncPolicy.SYNC) {
      return DONE;
    }
    return groupCommit.written(context, index);
  }
}
