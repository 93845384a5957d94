package io.github.vertxdedup.journal;

import static io.github.vertxdedup.journal.JournalQueue.LOG;

import java.io.IOException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The durability of a {@link Journal}: {@link #sync} on demand through the {@link Syncer} (the group commit), the
 * periodic sync under {@link SyncPolicy#ASYNC} ({@link BackgroundSync}), and the final sync at close.
 *
 * <p>A failed sync fails the journal for good: what reached the disk is unknown (Linux may drop the dirty pages after
 * reporting the error), so every later sync, and every append ({@link #checkNotFailed}), throws
 * {@link JournalWriteException} until the journal is closed and reopened.
 *
 * <p>Thread-safe: syncs run on any thread (the {@link Syncer} serialises them); the owner's thread reports its appends
 * to {@link #syncer()}.
 */
final class JournalSync {

  private final JournalQueue q;
  private final Syncer syncer;
  private final AtomicLong failures = new AtomicLong();
  private volatile Throwable failure;
  private volatile ScheduledFuture<?> background;

  JournalSync(JournalQueue q) {
    this.q = q;
    this.syncer = new Syncer(q.dir);
  }

  /** Under {@link SyncPolicy#ASYNC}, starts the background sync; once, after the journal was opened. */
  void start() {
    if (q.options.getSyncPolicy() == SyncPolicy.ASYNC) {
      background = BackgroundSync.schedule(this::backgroundSync, q.options.getSyncInterval());
    }
  }

  /** @return the syncer the appends report their indexes and files to */
  Syncer syncer() {
    return syncer;
  }

  /**
   * Refuses an append once a sync has failed.
   *
   * @throws JournalWriteException if a sync failed
   */
  void checkNotFailed() {
    Throwable failed = failure;
    if (failed != null) {
      throw new JournalWriteException("journal " + q.dir + ": an earlier sync failed, so what reached the disk is "
          + "unknown; close and reopen the journal", failed);
    }
  }

  /** See {@link Journal#sync}. Thread-safe; blocking. */
  long sync() {
    if (q.state == JournalQueue.State.CLOSED) {
      throw new IllegalStateException("journal " + q.dir + " is closed");
    }
    Throwable failed = failure;
    if (failed != null) {
      throw new JournalWriteException("journal " + q.dir + ": an earlier sync failed; close and reopen it", failed);
    }
    try {
      return syncer.sync();
    } catch (IOException | RuntimeException e) {
      failure = e;
      failures.incrementAndGet();
      throw new JournalWriteException("journal " + q.dir + ": sync failed; the journal must be reopened", e);
    }
  }

  private void backgroundSync() {
    if (q.state == JournalQueue.State.CLOSED || failure != null) {
      return;
    }
    try {
      sync();
    } catch (JournalWriteException e) {
      LOG.error("journal " + q.dir + ": background sync failed; appends fail until the "
          + "journal is reopened", e);
    } catch (IllegalStateException closed) {
      // closed meanwhile
    }
  }

  /** @return the index of the last appended record, or {@link Syncer#NOTHING} */
  long lastAppendedIndex() {
    return syncer.appendedIndex();
  }

  /** @return the index up to which records are known to be on disk, or {@link Syncer#NOTHING} */
  long syncedIndex() {
    return syncer.syncedIndex();
  }

  /** @return how many syncs failed (at most one: a failure is final) */
  long failures() {
    return failures.get();
  }

  /** The first step of closing: stops the background sync and syncs unless the policy is NONE or a sync failed. */
  void finalSync() {
    stopBackground();
    if (q.options.getSyncPolicy() != SyncPolicy.NONE && failure == null) {
      try {
        syncer.sync();
      } catch (IOException | RuntimeException e) {
        LOG.warn("journal " + q.dir + ": final sync failed", e);
      }
    }
  }

  /** Stops the background sync, if it runs. */
  void stopBackground() {
    ScheduledFuture<?> b = background;
    if (b != null) {
      b.cancel(false);
    }
  }

  /** Closes the syncer's file handles (after the queue closed). */
  void close() {
    syncer.close();
  }
}
