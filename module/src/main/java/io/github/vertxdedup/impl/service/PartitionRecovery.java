package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.window.PreparedRestore;
import io.github.vertxdedup.window.TableOrderedEntries;
import io.github.vertxdedup.impl.journal.PartitionJournal;
import io.github.vertxdedup.journal.JournalLockedException;
import io.github.vertxdedup.journal.internal.CommittedOffsets;
import io.github.vertxdedup.window.DedupWindow;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Rebuilds one partition from its journal: opens it, builds a new window on a worker (a presized table is allocated
 * and zeroed there, never on the event loop), and replays the journal into a new core around that window and a new
 * set of committed offsets; on failure it decides between giving up (the first recovery of a deployment, for any
 * reason but a locked journal) and trying again after a backoff on the injected {@link PartitionTimer}
 * ({@value #RETRY_MIN_MS} ms doubling to {@value #RETRY_MAX_MS} ms; reset once a recovery succeeds). What the
 * partition does with each outcome (its state, its replies) is its {@link Owner}'s.
 *
 * <p>Confined to the partition's event loop, but for the building of the window: {@link #recover} is called on the
 * partition's context, and every outcome is delivered on it, whatever thread completes the journal's futures.
 */
final class PartitionRecovery {

  /** First delay before opening the journal again after a failed attempt, in milliseconds. */
  static final long RETRY_MIN_MS = 50;
  /** Longest delay between attempts to open the journal, in milliseconds. */
  static final long RETRY_MAX_MS = 2000;

  /** What the partition does with the outcomes of a recovery; called on its context. */
  interface Owner {

    /** @return true once the partition is stopping: no recovery starts, and an outcome is dropped */
    boolean stopping();

    /**
     * The journal was opened and replayed.
     *
     * @param core the rebuilt core
     * @param offsets the committed offsets replayed
     * @param startNanos {@link System#nanoTime()} when the journal began to open
     */
    void recovered(PartitionCore core, CommittedOffsets offsets, long startNanos);

    /**
     * The first recovery failed for a reason other than a locked journal: no retry; the owner closes the journal.
     *
     * @param cause why
     */
    void failed(Throwable cause);

    /**
     * A recovery failed and is retried after {@code delayMs}, once the journal is closed.
     *
     * @param failure why, for the partition's refusals ("journal locked by another process (...); retrying")
     * @param locked true if another owner holds the journal
     * @param cause the failure
     * @param delayMs the delay before the next attempt, ms
     */
    void retrying(String failure, boolean locked, Throwable cause, long delayMs);
  }

  private final PartitionJournal journal;
  private final PartitionTimer timer;
  private final Context context;
  private final Supplier<DedupWindow> newWindow;
  private final Function<DedupWindow, PartitionCore> newCore;
  private final Owner owner;
  private long retryTimerId = -1;
  private long retryDelayMs = RETRY_MIN_MS;

  /**
   * @param journal the partition's journal
   * @param timer the partition's timers
   * @param context the partition's context
   * @param newWindow builds the partition's empty window; called on a worker, once per recovery, after the journal has
   *     opened
   * @param newCore makes the empty core around that window to replay into (sharing the partition's counters); on the
   *     partition's context
   * @param owner what the partition does with the outcomes
   */
  PartitionRecovery(PartitionJournal journal, PartitionTimer timer, Context context, Supplier<DedupWindow> newWindow,
      Function<DedupWindow, PartitionCore> newCore, Owner owner) {
    this.journal = journal;
    this.timer = timer;
    this.context = context;
    this.newWindow = newWindow;
    this.newCore = newCore;
    this.owner = owner;
  }

  /**
   * Opens the journal, builds the new window on a worker, and replays the journal into a new core around it: the one
   * window of this recovery (none is built while the journal cannot be opened). On failure: a locked journal, or any
   * failure after the first start (the window's allocation included), is retried with the backoff; any other failure
   * of the first start is reported to {@link Owner#failed}.
   *
   * @param first true for the deployment's first recovery
   */
  void recover(boolean first) {
    if (owner.stopping()) {
      return;
    }
    CommittedOffsets freshOffsets = new CommittedOffsets();
    long startNanos = System.nanoTime();
    onContext(journal.open())
        // A presized table is up to 1.5 GiB to allocate and zero: a worker's job, not the event loop's.
        .compose(v -> onContext(context.executeBlocking(newWindow::get, false)))
        .compose(window -> {
          if (owner.stopping()) {
            // stop() is closing the journal: replay nothing (the outcome is dropped below).
            return Future.failedFuture(new IllegalStateException("partition is stopping"));
          }
          PartitionCore fresh = newCore.apply(window);
          return onContext(journal.recover(new RebuiltState(fresh, freshOffsets))).map(v -> fresh);
        })
        // A window whose table was left to presize (nothing restored in place built one beside it): on a worker too.
        .compose(core -> core.windowPresized() ? Future.succeededFuture(core)
            : onContext(context.executeBlocking(() -> {
              core.presizeWindow();
              return core;
            }, false)))
        .onComplete(ar -> {
          if (owner.stopping()) {
            return; // stop() closes the journal and completes the undeployment
          }
          if (ar.succeeded()) {
            retryDelayMs = RETRY_MIN_MS;
            owner.recovered(ar.result(), freshOffsets, startNanos);
            return;
          }
          Throwable cause = ar.cause();
          boolean locked = isLocked(cause);
          if (first && !locked) {
            owner.failed(cause);
            return;
          }
          owner.retrying(locked
              ? "journal locked by another process (" + cause.getMessage() + "); retrying"
              : "journal recovery failed (" + cause + "); retrying", locked, cause, retryDelayMs);
          journal.close().onComplete(v -> context.runOnContext(w -> scheduleRetry()));
        });
  }

  /** Cancels a retry that is waiting for its timer. */
  void cancel() {
    if (retryTimerId != -1) {
      timer.cancel(retryTimerId);
    }
  }

  private void scheduleRetry() {
    if (owner.stopping()) {
      return;
    }
    long delay = retryDelayMs;
    retryDelayMs = Math.min(RETRY_MAX_MS, retryDelayMs * 2);
    retryTimerId = timer.schedule(delay, () -> {
      retryTimerId = -1;
      recover(false);
    });
  }

  private static boolean isLocked(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof JournalLockedException) {
        return true;
      }
    }
    return false;
  }

  /** The same outcome, delivered on the partition's context whatever thread completes the journal's future. */
  private <T> Future<T> onContext(Future<T> f) {
    Promise<T> p = Promise.promise();
    f.onComplete(ar -> context.runOnContext(v -> p.handle(ar)));
    return p.future();
  }

  /** What the journal restores, on the partition's context: the core and the committed offsets being rebuilt. */
  private static final class RebuiltState implements PartitionJournal.RecoveryTarget {

    private final PartitionCore core;
    private final CommittedOffsets offsets;

    RebuiltState(PartitionCore core, CommittedOffsets offsets) {
      this.core = core;
      this.offsets = offsets;
    }

    @Override
    public void reserve(long entries) {
      core.reserve(entries);
    }

    @Override
    public void presize() {
      core.presizeWindow();
    }

    @Override
    public PreparedRestore prepareRestore(TableOrderedEntries entries) {
      return core.prepareRestore(entries);
    }

    @Override
    public boolean restoreInPlace(PreparedRestore prepared) {
      return core.restoreInPlace(prepared);
    }

    @Override
    public void restore(long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs) {
      core.restore(fingerprint, payloadHash, firstSeenMs, expiresAtMs);
    }

    @Override
    public void restoreBatch(long[] fingerprints, long[] payloadHashes, long[] firstSeenMs, long[] expiresAtMs,
        int length) {
      core.restoreBatch(fingerprints, payloadHashes, firstSeenMs, expiresAtMs, length);
    }

    @Override
    public void restoreClaim(long idFingerprint, long keyFingerprint, long payloadHash, String claimToken,
        long claimedAtMs, long leaseEndMs, long rememberUntilMs, String claimer) {
      core.restoreClaim(idFingerprint, keyFingerprint, payloadHash, claimToken, claimedAtMs, leaseEndMs,
          rememberUntilMs, claimer);
    }

    @Override
    public void memoryBegins(long memoryBeginsMs) {
      core.memoryBegins(memoryBeginsMs);
    }

    @Override
    public void restoreOffset(String topic, int partition, long offset) {
      offsets.record(topic, partition, offset);
    }
  }
}
