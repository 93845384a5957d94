package io.github.vertxdedup.journal;

import static io.github.vertxdedup.journal.JournalQueue.LOG;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;

/**
 * The retention of a {@link Journal}: deletes the cycle files a replay would not read, those before the oldest cycle
 * that may still hold a live entry ({@link CycleCatalog#replayStart}). Never the newest cycle.
 *
 * <p>Thread-safe: passes are serialised, and run alongside appends (the appender only ever writes the newest cycle,
 * which a pass keeps). Blocking (file deletion): run it off the event loop.
 */
final class JournalRetention {

  private final JournalQueue q;
  private final Object lock = new Object();

  JournalRetention(JournalQueue q) {
    this.q = q;
  }

  /** See {@link Journal#deleteExpiredCycles}. */
  RetentionResult deleteExpiredCycles(long nowMs) {
    synchronized (lock) {
      JournalQueue.State s = q.state;
      if (s != JournalQueue.State.READY) {
        throw new IllegalStateException("journal " + q.dir + (s == JournalQueue.State.CLOSED ? " is closed"
            : ": replay() must complete before expired cycles are deleted"));
      }
      CycleCatalog catalog = q.catalog;
      int start = catalog.replayStart(nowMs);
      int deleted = 0;
      for (int c : catalog.list()) {
        if (start == CycleCatalog.NONE || c >= start) {
          break;
        }
        File f = q.fileOf(c);
        try {
          Files.deleteIfExists(f.toPath());
        } catch (IOException e) {
          LOG.warn("journal " + q.dir + ": cannot delete expired cycle file " + f, e);
          break;
        }
        catalog.removed(c);
        deleted++;
      }
      if (deleted > 0) {
        q.queue.refreshDirectoryListing();
      }
      return new RetentionResult(deleted, catalog.oldest(), catalog.size());
    }
  }
}
