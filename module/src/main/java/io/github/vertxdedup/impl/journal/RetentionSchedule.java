package io.github.vertxdedup.impl.journal;

import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.RetentionResult;
import io.github.vertxdedup.time.DedupClock;
import io.vertx.core.Context;
import io.vertx.core.Future;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When a {@link ChroniclePartitionJournal} deletes expired cycle files: runs {@link Journal#deleteExpiredCycles} on a
 * worker at most once per roll cycle of the partition's clock (the first {@link #runIfDue} at or after the start of a
 * cycle it has not run in), so a cycle file goes at most one roll cycle after the last entry in it expired; the newest
 * file always stays. Its callers are the first append of each roll cycle and the partition's periodic timer, which
 * trims an idle journal too. At most one pass is in flight; a failed pass is logged and tried again in the next cycle.
 *
 * <p>Not thread-safe: confined to the partition's event loop; a pass completes on the partition's context.
 */
final class RetentionSchedule {

  private static final Logger LOG = LoggerFactory.getLogger(ChroniclePartitionJournal.class);

  private final Path dir;
  private final DedupClock clock;
  private final long cycleMs;
  private long nextRunMs = Long.MIN_VALUE;
  private Future<RetentionResult> inFlight;
  private Consumer<RetentionResult> listener;

  /**
   * @param dir the journal directory, for messages
   * @param clock the partition's clock, whose roll cycles the journal follows
   * @param cycleMs the journal's roll cycle, ms, {@code > 0}
   */
  RetentionSchedule(Path dir, DedupClock clock, long cycleMs) {
    this.dir = dir;
    this.clock = clock;
    this.cycleMs = cycleMs;
  }

  /** The journal was (re)opened: the next {@link #runIfDue} runs a pass, whatever the cycle. */
  void reset() {
    nextRunMs = Long.MIN_VALUE;
  }

  /** @return the pass in flight, or null */
  Future<?> inFlight() {
    return inFlight;
  }

  /**
   * Runs a pass on {@code j} on a worker of {@code context}, unless one is in flight or one has run in this roll
   * cycle already. The caller makes sure that {@code j} is open and that nothing replays it meanwhile: a replay reads
   * what a pass would delete.
   *
   * @param context the partition's context
   * @param j the open journal
   */
  void runIfDue(Context context, Journal j) {
    if (inFlight != null) {
      return;
    }
    long now = clock.nowMs();
    if (now < nextRunMs) {
      return;
    }
    nextRunMs = (Math.floorDiv(now, cycleMs) + 1) * cycleMs;
    Future<RetentionResult> f = context.executeBlocking(() -> j.deleteExpiredCycles(now), false);
    inFlight = f;
    f.onComplete(ar -> {
      inFlight = null;
      if (ar.failed()) {
        LOG.warn("journal " + dir + ": deleting expired cycle files failed; retried "
            + "next cycle", ar.cause());
        return;
      }
      if (ar.result().deletedCycles() > 0) {
        LOG.debug("journal {}: {}", dir, ar.result());
      }
      Consumer<RetentionResult> l = listener;
      if (l != null) {
        l.accept(ar.result());
      }
    });
  }

  /**
   * Tests only: called on the partition's context with the result of each pass that succeeded.
   *
   * @param listener the listener; null removes it
   */
  void listener(Consumer<RetentionResult> listener) {
    this.listener = listener;
  }
}
