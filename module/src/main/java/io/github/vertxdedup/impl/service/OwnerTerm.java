package io.github.vertxdedup.impl.service;

import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;

/**
 * One owner's term of a partition of the event-bus service: its epoch (the fencing token the cluster handed it),
 * the epoch before it, whether it took the partition over from another owner and with that owner's journal, and the
 * lease its confirmations extend. Made by {@link PartitionOwnership} when it takes the partition's lock, handed to the
 * {@link PartitionVerticle} it deploys, which decides only while the term is {@linkplain #confirmed confirmed} and
 * applies the takeover to each core it builds ({@link #applyTo}).
 *
 * <p>The lease: each confirmation of the epoch through the cluster, asked at instant {@code t}, extends the term to
 * {@code t + ownerLeaseMs} (the instant the question was asked, not the answer's, so a slow answer shortens the
 * lease rather than lengthening it). {@link #revoke()} ends it at once. The lease is real elapsed time, read from a
 * monotonic lease clock ({@link System#nanoTime()} in production), not from the window's clock: a test that moves
 * the window's {@code ManualClock} by hours does not end the owner's lease, and one that drives the lease injects a
 * lease clock of its own. The takeover instant, which starts the window {@code W} of unvouched ids, is the window's
 * clock's.
 *
 * <p>Thread-safety: the lease end, the takeover instant and the unvouched mark are volatile ({@link #confirm}, {@link #revoke} and
 * {@link #decidesFrom} on the ownership's context, {@link #confirmed} on the partition's event loop, before each
 * decision); everything else is immutable.
 */
final class OwnerTerm {

  private final long epoch;
  private final long previousEpoch;
  private final boolean takeover;
  private final boolean journalHandedOver;
  private volatile long takeoverMs;
  /** Set once by {@link #revoke}: no confirmation extends the lease afterwards. */
  private volatile boolean revoked;
  private volatile long unvouchedUntilMs;
  private final String owner;
  /**
   * A random number, never 0, that tells this term from any other of the same epoch: epochs start again at 1 when the
   * whole cluster restarts, so an epoch alone does not name one owner's term across restarts.
   */
  private final long termId;
  private final LongSupplier leaseClock;
  private volatile long leaseEndMs = Long.MIN_VALUE;
  /** Whether the cluster holds this term's deployment record ({@link OwnerLock#recordDeployed}); ownership's context. */
  private boolean deploymentRecorded;
  /** Whether a write of that record failed (logged at WARN once); ownership's context. */
  private boolean deploymentRecordFailed;

  /** The production lease clock: {@link System#nanoTime()} in milliseconds. */
  static final LongSupplier MONOTONIC_MS = () -> System.nanoTime() / 1_000_000;

  /**
   * @param epoch this owner's epoch, {@code >= 1}
   * @param previousEpoch the epoch before it ({@code epoch - 1}; 0 for the first owner ever)
   * @param journalHandedOver true if the journal this owner opens is its previous owner's (or there was no previous
   *     owner); false if it has none, or one the previous owner did not write
   * @param takeoverMs when this owner took the partition, clock ms
   * @param unvouchedUntilMs new ids are unvouched before this instant, clock ms ({@link Long#MIN_VALUE}: never): the
   *     later of {@code takeoverMs + W} after a takeover without the previous owner's journal and the instant the
   *     journal's {@code owner-epoch} file carried over from an earlier such takeover
   * @param owner the owning deployment, as {@code stats} names it
   * @param leaseClock the lease clock, monotonic ms (e.g. {@link #MONOTONIC_MS})
   */
  OwnerTerm(long epoch, long previousEpoch, boolean journalHandedOver, long takeoverMs, long unvouchedUntilMs,
      String owner, LongSupplier leaseClock) {
    this.leaseClock = leaseClock;
    this.epoch = epoch;
    this.previousEpoch = previousEpoch;
    this.takeover = previousEpoch > 0;
    this.journalHandedOver = journalHandedOver;
    this.takeoverMs = takeoverMs;
    this.unvouchedUntilMs = unvouchedUntilMs;
    this.owner = owner;
    long id;
    do {
      id = ThreadLocalRandom.current().nextLong();
    } while (id == OwnerEpochFile.NO_TERM);
    this.termId = id;
  }

  /** @return this owner's epoch */
  long epoch() {
    return epoch;
  }

  /** @return the epoch before this one; 0 if this is the first owner ever */
  long previousEpoch() {
    return previousEpoch;
  }

  /** @return true if another owner held the partition before this one */
  boolean takeover() {
    return takeover;
  }

  /** @return true if the window is rebuilt from the previous owner's journal (or there was no previous owner) */
  boolean journalHandedOver() {
    return journalHandedOver;
  }

  /**
   * @return true if this owner cannot vouch for all new ids after it starts: it took over without the previous
   *     owner's journal, or its journal carries such a takeover's mark that has not ended yet
   */
  boolean unvouched() {
    return unvouchedUntilMs != Long.MIN_VALUE;
  }

  /** @return new ids are unvouched before this instant, clock ms; {@link Long#MIN_VALUE} if never */
  long unvouchedUntilMs() {
    return unvouchedUntilMs;
  }

  /** @return when this owner took the partition (or, after an unclean loss, began to decide), clock ms */
  long takeoverMs() {
    return takeoverMs;
  }

  /**
   * Moves the takeover instant to when this owner begins to decide, after it waited out the lease of a predecessor
   * that was lost without a clean release. Such a predecessor, cut off rather than dead, may have decided until its
   * lease ran out, up to one lease after the lock changed hands; an id it accepted then stays in its window until
   * {@code W} after that. So when this term has an unvouched mark of its own (a takeover without the previous owner's
   * journal), the mark moves to {@code W} after this instant, and the core covers from it; a mark carried over in
   * the journal stays as it is if it ends later. Called on the ownership's context before the partition is deployed
   * ({@link #applyTo} reads it when a core is built).
   *
   * @param decidesFromMs the window's clock now, ms; an earlier instant than the current one is ignored
   * @param windowMs the window {@code W}, ms
   */
  void decidesFrom(long decidesFromMs, long windowMs) {
    if (decidesFromMs <= takeoverMs) {
      return;
    }
    takeoverMs = decidesFromMs;
    if (takeover && !journalHandedOver) {
      unvouchedUntilMs = Math.max(unvouchedUntilMs, decidesFromMs + windowMs);
    }
  }

  /** @return this term's id: random, never {@link OwnerEpochFile#NO_TERM} */
  long termId() {
    return termId;
  }

  /** @return whether the cluster holds this term's deployment record; the ownership's context */
  boolean deploymentRecorded() {
    return deploymentRecorded;
  }

  /** @return whether a write of this term's deployment record has failed; the ownership's context */
  boolean deploymentRecordFailed() {
    return deploymentRecordFailed;
  }

  /**
   * Sets the outcome of a write of this term's deployment record. The ownership's context.
   *
   * @param written true if written, false if the write failed
   */
  void deploymentRecorded(boolean written) {
    deploymentRecorded = written;
    deploymentRecordFailed |= !written;
  }

  /** @return the owning deployment's name */
  String owner() {
    return owner;
  }

  /** @return the lease clock's reading now, ms */
  long leaseNowMs() {
    return leaseClock.getAsLong();
  }

  /**
   * Extends the lease after a confirmation of the epoch; never shortens it.
   *
   * @param untilMs the lease clock's reading when the confirmation was asked, plus {@code ownerLeaseMs}
   */
  void confirm(long untilMs) {
    if (untilMs > leaseEndMs && !revoked) {
      leaseEndMs = untilMs;
    }
  }

  /**
   * Ends the lease at once and for good: the owner steps down and decides nothing more; a confirmation that answers
   * afterwards (a check in flight) extends nothing.
   */
  void revoke() {
    revoked = true;
    leaseEndMs = Long.MIN_VALUE;
  }

  /** @return whether the term was revoked ({@link #revoke}); any thread */
  boolean revoked() {
    return revoked;
  }

  /**
   * The fence before each decision: a read of the lease clock, one volatile read and a comparison.
   *
   * @return true if the owner may decide now: its last confirmation is younger than its lease
   */
  boolean confirmed() {
    return leaseClock.getAsLong() < leaseEndMs;
  }

  /** @return the lease end, lease clock ms ({@link Long#MIN_VALUE} once revoked or before the first confirmation) */
  long leaseEndMs() {
    return leaseEndMs;
  }

  /**
   * Applies the takeover to a core built for this term: while new ids are unvouched (a takeover without the previous
   * owner's journal, this term's or an earlier one's carried over in the journal), the core covers from
   * {@code W} before that mark's end and leaves new ids unvouched until it ({@link PartitionCore#takenOver});
   * otherwise nothing.
   *
   * @param core a core just built (recovered) by the partition
   */
  void applyTo(PartitionCore core) {
    if (unvouched()) {
      core.takenOver(unvouchedUntilMs);
    }
  }

  @Override
  public String toString() {
    return "epoch " + epoch + " (previous " + previousEpoch + ", journal "
        + (journalHandedOver ? "handed over" : "not handed over") + ")";
  }
}
