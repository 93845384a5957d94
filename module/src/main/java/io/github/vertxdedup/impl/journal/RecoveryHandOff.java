package io.github.vertxdedup.impl.journal;

import io.github.vertxdedup.impl.journal.PartitionJournal.RecoveryTarget;
import io.github.vertxdedup.journal.ClaimEntry;
import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.LiveEntrySink;
import io.github.vertxdedup.journal.OffsetCommit;
import io.github.vertxdedup.journal.ReplayResult;
import io.github.vertxdedup.journal.SnapshotEntries;
import io.github.vertxdedup.journal.internal.CarriedState;
import io.github.vertxdedup.journal.internal.Recovery;
import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.window.PreparedRestore;
import io.github.vertxdedup.window.TableOrderedEntries;
import io.vertx.core.Context;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.function.BooleanSupplier;

/**
 * One recovery of a {@link ChroniclePartitionJournal}: {@link #run} replays the journal on a worker into a {@link
 * Recovery} (which says what the records mean) and hands the live entries to the partition's context in chunks of
 * {@value #CHUNK} as they come, at most {@value #CHUNKS_IN_FLIGHT} queued, so the replay and the window's rebuild
 * overlap on two cores and memory stays bounded; {@link #finish}, on the partition's context after the last chunk,
 * hands over the open claims, the start of memory and the offsets. A snapshot's entries are not handed over one by
 * one: the partition restores them in place ({@link #takeSnapshotEntries}) and answers from the snapshot file while
 * their table is built beside it.
 *
 * <p>Threads: {@link #run} on a worker, once; the chunks and {@link #finish} on the partition's context.
 */
final class RecoveryHandOff implements LiveEntrySink {

  /** Entries handed to the partition's context per recovery task. */
  static final int CHUNK = 16_384;
  /** Recovery chunks queued on the partition's context at most; the replay waits beyond that. */
  static final int CHUNKS_IN_FLIGHT = 4;

  private final Context context;
  private final Path dir;
  private final RecoveryTarget target;
  private final BooleanSupplier aborted;
  private final Recovery recovery;
  private final long windowMs;
  private final long nowMs;
  private final Semaphore permits = new Semaphore(CHUNKS_IN_FLIGHT);
  private final ConcurrentLinkedQueue<Chunk> free = new ConcurrentLinkedQueue<>();
  private Chunk chunk = new Chunk();
  /** The first failure of a chunk on the partition's context; later chunks are dropped. */
  volatile Throwable failure;
  /** Live entries restored, on the partition's context. */
  long restored;
  /** The snapshot's entries the partition answers from in place (kept: the first live one per fingerprint). */
  long restoredInPlace;
  /** Whether the snapshot's entries were restored in place; worker only. */
  private boolean tookInPlace;
  /** Whether the first hand-off has presized the table ({@link RecoveryTarget#presize}); worker only. */
  private boolean presized;
  /** Open claims restored by {@link #finish}. */
  long claimsRestored;

  /**
   * @param context the partition's context
   * @param dir the journal directory, for messages
   * @param target what the partition restores the journal's content into
   * @param nowMs the partition's time at the start of recovery: entries expired by then are skipped
   * @param windowMs the partition's window
   * @param aborted true once the journal is closing: the replay stops at its next hand-off
   */
  RecoveryHandOff(Context context, Path dir, RecoveryTarget target, long nowMs, long windowMs, BooleanSupplier aborted) {
    this.context = context;
    this.dir = dir;
    this.target = target;
    this.aborted = aborted;
    this.recovery = new Recovery(nowMs, windowMs, this);
    this.windowMs = windowMs;
    this.nowMs = nowMs;
  }

  /**
   * Worker: replays {@code j} from its newest usable window snapshot (the records after it only; the whole journal
   * without one) and returns once every chunk has been applied on the partition's context.
   */
  ReplayResult run(Journal j) throws InterruptedException {
    ReplayResult r = j.replayFromSnapshot(windowMs, recovery);
    handOff();
    // Wait until every chunk has been applied: the outcome is known once all permits are back.
    permits.acquire(CHUNKS_IN_FLIGHT);
    permits.release(CHUNKS_IN_FLIGHT);
    return r;
  }

  /** Worker, before the snapshot's first entry: the target sizes its window for them ({@link RecoveryTarget#reserve}). */
  @Override
  public void expect(long entries) {
    target.reserve(entries);
  }

  /**
   * Worker, in place of the snapshot's entries one by one: the target prepares their restore here (one sequential
   * pass: {@link DedupWindow#prepareRestore}) and restores them in place on the partition's context ({@link
   * DedupWindow#restoreInPlace}), where the window answers from the snapshot file until their table, built beside it,
   * is installed. If the target cannot (entries out of table order, more live ones than its cap, a clock that stepped
   * back), they are handed over one by one after all, as the journal would have delivered them.
   */
  @Override
  public boolean takeSnapshotEntries(SnapshotEntries entries) {
    if (aborted.getAsBoolean()) {
      throw new IllegalStateException("journal " + dir + " was closed during recovery");
    }
    final PreparedRestore prepared;
    try {
      prepared = target.prepareRestore(new InPlace(entries));
    } catch (IllegalArgumentException e) {
      return false; // a damaged entry: delivered one by one, the restore then names it
    }
    if (prepared == null) {
      return false;
    }
    CompletableFuture<Boolean> restored = new CompletableFuture<>();
    context.runOnContext(v -> {
      try {
        restored.complete(failure == null && target.restoreInPlace(prepared));
      } catch (RuntimeException e) {
        failure = e;
        restored.complete(true);
      }
    });
    if (restored.join()) {
      tookInPlace = true;
      restoredInPlace = prepared.keptEntries();
      return true;
    }
    expect(entries.size());
    for (long i = 0, n = entries.size(); i < n; i++) {
      if (entries.expiresAtMs(i) > nowMs) {
        live(entries.fingerprint(i), entries.payloadHash(i), entries.firstSeenMs(i), entries.expiresAtMs(i));
      }
    }
    return true;
  }

  @Override
  public void live(long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs) {
    Chunk c = chunk;
    int i = c.size;
    c.fingerprints[i] = fingerprint;
    c.payloadHashes[i] = payloadHash;
    c.firstSeenMs[i] = firstSeenMs;
    c.expiresAtMs[i] = expiresAtMs;
    c.size = i + 1;
    if (c.size == CHUNK) {
      handOff();
    }
  }

  /** Queues the current chunk on the partition's context; waits while {@value #CHUNKS_IN_FLIGHT} are queued. */
  private void handOff() {
    Chunk c = chunk;
    if (c.size == 0) {
      return;
    }
    if (failure != null) {
      throw new IllegalStateException("recovery stopped: " + failure, failure);
    }
    if (aborted.getAsBoolean()) {
      throw new IllegalStateException("journal " + dir + " was closed during recovery");
    }
    if (!presized) {
      // Before the first entries reach the partition's context: a table left to presize is allocated here, on the
      // worker, not grown on the event loop by the inserts. Not after a restore in place, which builds its own.
      presized = true;
      if (!tookInPlace) {
        target.presize();
      }
    }
    permits.acquireUninterruptibly();
    Chunk next = free.poll();
    chunk = next != null ? next : new Chunk();
    context.runOnContext(v -> {
      try {
        if (failure == null) {
          target.restoreBatch(c.fingerprints, c.payloadHashes, c.firstSeenMs, c.expiresAtMs, c.size);
          restored += c.size;
        }
      } catch (RuntimeException e) {
        failure = e;
      } finally {
        c.size = 0;
        free.offer(c);
        permits.release();
      }
    });
  }

  /**
   * On the partition's context, after every chunk: the open claims (also into {@code carried}, which the next roll
   * snapshot writes), the start of memory and the offsets (also into {@code carried}).
   *
   * @param nowMs the partition's time now
   * @param memoryBeganMs when the journal was first opened, or {@link Recovery#NO_MEMORY}
   * @param carried the journal's carried state; cleared first
   */
  void finish(long nowMs, long memoryBeganMs, CarriedState carried) {
    carried.clear();
    recovery.forEachOpenClaim(nowMs, c -> {
      target.restoreClaim(c.fingerprint(), c.keyFingerprint(), c.payloadHash(),
          ChroniclePartitionJournal.tokenText(c.token()), c.claimedAtMs(), c.leaseEndMs(),
          c.rememberUntilMs() == ClaimEntry.NOT_RECORDED ? DedupWindow.DEFAULT_REMEMBER_UNTIL : c.rememberUntilMs(),
          c.hasClaimer() ? c.claimerId() : null);
      carried.claimOpened(c);
      claimsRestored++;
    });
    long began = recovery.memoryBeginsMs(memoryBeganMs, nowMs);
    if (began != Recovery.NO_MEMORY) {
      // The journal has recorded every accept of this partition since it was first opened (or since its first
      // record, whichever is earlier).
      target.memoryBegins(began);
    }
    for (OffsetCommit o : recovery.offsets().toList()) {
      carried.offsetCommitted(o);
      target.restoreOffset(o.topic(), o.partition(), o.offset());
    }
  }

  /** Entries handed to the partition's context in one task. */
  private static final class Chunk {
    final long[] fingerprints = new long[CHUNK];
    final long[] payloadHashes = new long[CHUNK];
    final long[] firstSeenMs = new long[CHUNK];
    final long[] expiresAtMs = new long[CHUNK];
    int size;
  }

  /** A snapshot's entries, read in place, as the window reads entries in table order. */
  private static final class InPlace implements TableOrderedEntries {
    private final SnapshotEntries entries;

    InPlace(SnapshotEntries entries) {
      this.entries = entries;
    }

    @Override
    public long size() {
      return entries.size();
    }

    @Override
    public long fingerprint(long i) {
      return entries.fingerprint(i);
    }

    @Override
    public long payloadHash(long i) {
      return entries.payloadHash(i);
    }

    @Override
    public long firstSeenMs(long i) {
      return entries.firstSeenMs(i);
    }

    @Override
    public long expiresAtMs(long i) {
      return entries.expiresAtMs(i);
    }

    @Override
    public void copyTo(long from, int count, long[] dst) {
      entries.copyTo(from, count, dst);
    }
  }
}
