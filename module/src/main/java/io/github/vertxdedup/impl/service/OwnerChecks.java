package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupOptions;
import io.vertx.core.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The owner's periodic confirmation of its epoch through the cluster (the fence of {@link PartitionOwnership}): every
 * {@code ownerCheckMs} from the takeover, each check due {@code ownerCheckMs} after the previous one was asked
 * (not answered), so the period stays {@code ownerCheckMs} however long a read takes.
 *
 * <pre>
 *   read == own epoch          the lease runs to (asked + ownerLeaseMs); next check scheduled
 *   read &lt; own epoch           the counter was lost with its cluster partition (it never goes back otherwise) while
 *                              this owner holds the lock: put back to the own epoch by compare-and-set, then as
 *                              above; if the counter changed meanwhile, the check fails
 *   read &gt; own epoch, failed,  the check fails: {@link Owner#checkFailed} (the ownership steps down)
 *   or slower than ownerCheckMs
 * </pre>
 *
 * <p>Threads: not thread-safe; every method is called on the context of the ownership's deployment, where the timer
 * fires and the cluster's futures complete.
 */
final class OwnerChecks {

  private static final Logger LOG = LoggerFactory.getLogger(PartitionOwnership.class);

  /** The ownership whose term is checked. */
  interface Owner {
    /**
     * @param t a term
     * @return whether {@code t} is still the ownership's current term and the ownership is not stopping: a check of
     *     any other term is dropped
     */
    boolean current(OwnerTerm t);

    /**
     * A check of the current term failed: the term must end.
     *
     * @param t the term checked
     * @param why what the check found, for the log
     */
    void checkFailed(OwnerTerm t, String why);
  }

  private final String name;
  private final DedupOptions options;
  private final PartitionTimer timer;
  private final LongSupplier leaseClock;
  private final OwnerLock lock;
  private final Owner owner;
  /** The timer of the next check, or -1. */
  private long timerId = -1;

  /**
   * @param name the partition's name, {@code <address>.<p>}
   * @param options the service's options: {@code ownerCheckMs}, {@code ownerLeaseMs}
   * @param timer fires the checks on the ownership's context
   * @param leaseClock the lease clock, monotonic ms
   * @param lock the partition's lock and epoch counter
   * @param owner the ownership
   */
  OwnerChecks(String name, DedupOptions options, PartitionTimer timer, LongSupplier leaseClock, OwnerLock lock,
      Owner owner) {
    this.name = name;
    this.options = options;
    this.timer = timer;
    this.leaseClock = leaseClock;
    this.lock = lock;
    this.owner = owner;
  }

  /**
   * Schedules the next check of term {@code t} {@code ownerCheckMs} after {@code askedMs}, replacing any scheduled
   * one; nothing if {@code t} is not current.
   *
   * @param t the term
   * @param askedMs when its last confirmation was asked, lease clock ms
   */
  void schedule(OwnerTerm t, long askedMs) {
    cancel();
    if (owner.current(t)) {
      // At least 1 ms: Vert.x refuses a shorter timer, and a read slower than ownerCheckMs makes this negative.
      long delayMs = Math.max(1, askedMs + options.getOwnerCheckMs() - leaseClock.getAsLong());
      timerId = timer.schedule(delayMs, () -> check(t));
    }
  }

  /** Cancels the scheduled check, if any. */
  void cancel() {
    if (timerId != -1) {
      timer.cancel(timerId);
      timerId = -1;
    }
  }

  /**
   * @return the epoch counter's value; fails if the read fails or takes longer than {@code ownerCheckMs}
   */
  Future<Long> read() {
    return lock.epoch().timeout(options.getOwnerCheckMs(), TimeUnit.MILLISECONDS);
  }

  private void check(OwnerTerm t) {
    timerId = -1;
    if (!owner.current(t)) {
      return;
    }
    long askedMs = leaseClock.getAsLong();
    read().onComplete(ar -> {
      if (!owner.current(t)) {
        return;
      }
      if (ar.succeeded() && ar.result() == t.epoch()) {
        confirm(t, askedMs);
      } else if (ar.succeeded() && ar.result() < t.epoch()) {
        restore(t, ar.result(), askedMs);
      } else {
        owner.checkFailed(t, ar.failed() ? "its epoch could not be confirmed: " + ar.cause() : "the partition's"
            + " epoch is " + ar.result() + ", another owner took over");
      }
    });
  }

  private void confirm(OwnerTerm t, long askedMs) {
    t.confirm(askedMs + options.getOwnerLeaseMs());
    schedule(t, askedMs);
  }

  /** The check found the counter at {@code found}, below the term's epoch: puts it back, or fails the check. */
  private void restore(OwnerTerm t, long found, long askedMs) {
    lock.restoreEpoch(found, t.epoch()).onComplete(ar -> {
      if (!owner.current(t)) {
        return;
      }
      if (ar.succeeded() && ar.result()) {
        LOG.warn("partition {}: the epoch counter had gone back to {}, below this owner's epoch {} (its cluster"
            + " partition was lost with a member); put back to {}", name, found, t.epoch(), t.epoch());
        confirm(t, askedMs);
      } else {
        owner.checkFailed(t, "the epoch counter went back to " + found + " and could not be put back to "
            + t.epoch() + ": " + (ar.failed() ? ar.cause().toString() : "it changed meanwhile"));
      }
    });
  }
}
