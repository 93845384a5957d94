package io.github.vertxdedup.impl.journal;

import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.SnapshotResult;
import io.github.vertxdedup.journal.internal.Recovery;
import io.github.vertxdedup.time.DedupClock;
import io.vertx.core.Context;
import io.vertx.core.Future;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When a {@link ChroniclePartitionJournal} writes a window snapshot ({@link Journal#writeSnapshot}): on a worker,
 * once the entries journaled since the newest snapshot reach the service's {@code journalSnapshotEntries} (65,536 by
 * default; 0: never) and a {@value #TAIL_SHARE_DIVISOR}th of the live entries that snapshot holds. So a restart replays at most about a
 * quarter of the live entries (plus what arrives while a snapshot is written) from the journal, the rest from the
 * snapshot; each live entry is rewritten about {@value #TAIL_SHARE_DIVISOR} times per window's worth of accepts. The
 * snapshot reads the journal with its own tailer beside the appends: the event loop only starts it and takes its
 * result, so decisions never wait for it. At most one snapshot is in flight; a failed one is logged and tried again
 * at the next check.
 *
 * <p>Not thread-safe: confined to the partition's event loop; a snapshot completes on the partition's context.
 */
final class SnapshotSchedule {

  /** A snapshot is due when the tail reaches the live entries of the newest one divided by this. */
  static final long TAIL_SHARE_DIVISOR = 4;

  private static final Logger LOG = LoggerFactory.getLogger(ChroniclePartitionJournal.class);

  private final Path dir;
  private final DedupClock clock;
  private final long windowMs;
  private long minTailEntries;
  private Future<SnapshotResult> inFlight;
  private Consumer<SnapshotResult> listener;

  /**
   * @param dir the journal directory, for messages
   * @param clock the partition's clock
   * @param windowMs the partition's window, ms: the snapshots' owner key and what a commit means
   * @param minTailEntries the smallest tail worth a snapshot; 0: no snapshots
   */
  SnapshotSchedule(Path dir, DedupClock clock, long windowMs, long minTailEntries) {
    this.dir = dir;
    this.clock = clock;
    this.windowMs = windowMs;
    this.minTailEntries = minTailEntries;
  }

  /** @return the snapshot in flight, or null */
  Future<?> inFlight() {
    return inFlight;
  }

  /**
   * Starts a snapshot of {@code j} on a worker of {@code context} if one is due and none is in flight. The caller
   * makes sure {@code j} is open and replayed.
   *
   * @param context the partition's context
   * @param j the open journal
   */
  void runIfDue(Context context, Journal j) {
    if (inFlight != null || minTailEntries == 0) {
      return;
    }
    long tail = j.entriesSinceSnapshot();
    if (tail < Math.max(minTailEntries, j.snapshotEntries() / TAIL_SHARE_DIVISOR)) {
      return;
    }
    Future<SnapshotResult> f = context.executeBlocking(() -> j.writeSnapshot(windowMs,
        out -> Recovery.compaction(clock.nowMs(), windowMs, out)), false);
    inFlight = f;
    f.onComplete(ar -> {
      inFlight = null;
      if (ar.failed()) {
        LOG.warn("journal " + dir + ": writing a window snapshot failed; a restart replays more of the journal "
            + "until one succeeds (tried again at the next check)", ar.cause());
        return;
      }
      SnapshotResult r = ar.result();
      if (r != null) {
        LOG.debug("journal {}: {}", dir, r);
      }
      Consumer<SnapshotResult> l = listener;
      if (l != null && r != null) {
        l.accept(r);
      }
    });
  }

  /** Tests only: the smallest tail worth a snapshot; 0: none. */
  void minTailEntries(long entries) {
    this.minTailEntries = entries;
  }

  /**
   * Tests only: called on the partition's context with each snapshot written.
   *
   * @param listener the listener; null removes it
   */
  void listener(Consumer<SnapshotResult> listener) {
    this.listener = listener;
  }
}
