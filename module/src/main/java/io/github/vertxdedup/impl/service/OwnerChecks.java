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
 *                              this owner holds the lock: put back to the own epoch by compare-and-set (within
 *                              ownerCheckMs), then as above; if the counter changed meanwhile, the check fails
 *   read &gt; own epoch, failed,  the check fails: {@link Owner#checkFailed} (the ownership steps down)
 *   or slower than ownerCheckMs
 * </pre>
 *
 * <p>{@link #verify} is the one confirmation: the periodic check, the confirmation after a lease waited out and the
 * one after a deployment that outlasted the lease all use it.
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
     * @return whether {@code t} is still the ownership's current term, not revoked nor due to step down, and the
     *     ownership is not stopping: a check of any other term is dropped
     */
    boolean current(OwnerTerm t);

    /**
     * A check of the current term failed: the term must end.
     *
     * @param t the term checked
     * @param why what the check found, for the log
     */
    void checkFailed(OwnerTerm t, String why);

    /**
     * A periodic check confirmed the current term: the next check is scheduled.
     *
     * @param t the term confirmed
     */
    void confirmed(OwnerTerm t);
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

  /**
   * Confirms term {@code t} once through the cluster (the table above): its lease then runs to
   * {@code askedMs + ownerLeaseMs}. A counter below the term's epoch is put back first (compare-and-set, bounded by
   * {@code ownerCheckMs} as the read is). A revoked term is never confirmed ({@link OwnerTerm#confirm}).
   *
   * @param t the term
   * @param askedMs the lease clock's reading before the read is asked, ms
   * @return null if confirmed, else why not (the read failed or was slow, a newer epoch, a counter that could not be
   *     put back); never fails
   */
  Future<String> verify(OwnerTerm t, long askedMs) {
    return read().transform(ar -> {
      if (ar.failed()) {
        return Future.succeededFuture("its epoch could not be confirmed: " + ar.cause());
      }
      long found = ar.result();
      if (found == t.epoch()) {
        t.confirm(askedMs + options.getOwnerLeaseMs());
        return Future.succeededFuture(null);
      }
      if (found > t.epoch()) {
        return Future.succeededFuture("the partition's epoch is " + found + ", another owner took over");
      }
      return lock.restoreEpoch(found, t.epoch()).timeout(options.getOwnerCheckMs(), TimeUnit.MILLISECONDS)
          .transform(cas -> {
            if (cas.succeeded() && cas.result()) {
              LOG.warn("partition {}: the epoch counter had gone back to {}, below this owner's epoch {} (its cluster"
                  + " partition was lost with a member); put back to {}", name, found, t.epoch(), t.epoch());
              t.confirm(askedMs + options.getOwnerLeaseMs());
              return Future.succeededFuture(null);
            }
            return Future.succeededFuture("the epoch counter went back to " + found + " and could not be put back to "
                + t.epoch() + ": " + (cas.failed() ? cas.cause().toString() : "it changed meanwhile"));
          });
    });
  }

  private void check(OwnerTerm t) {
    timerId = -1;
    if (!owner.current(t)) {
      return;
    }
    long askedMs = leaseClock.getAsLong();
    verify(t, askedMs).onComplete(ar -> {
      if (!owner.current(t)) {
        return;
      }
      if (ar.result() == null) {
        schedule(t, askedMs);
        owner.confirmed(t);
      } else {
        owner.checkFailed(t, ar.result());
      }
    });
  }
}
