package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupOptions;
import io.vertx.core.Future;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * What a takeover learns before it decides, and the term it decides on: the epoch it took, what the cluster says of
 * the previous term (its clean release, its deployment), and what the journal directory's {@code owner-epoch} file
 * says of its last owner.
 *
 * <pre>
 *   previous     epoch - 1, or, after a counter that went back, the newest epoch known
 *   clean        no previous owner, or the previous epoch's release was marked; never after a counter that went back
 *   handed over  no previous owner, or the journal's file names the previous epoch and the same term id as the
 *                cluster's record of the previous owner's deployment; never after a counter that went back (the
 *                newest epoch seen need not be the last owner's, so no file can vouch for it). The term id matters
 *                after a restart of the whole cluster: epochs start again at 1 there, so an old file's epoch can
 *                match the previous one by chance
 *   unvouched    until the later of the takeover + W (not handed over; none if handed over) and the journal's mark
 * </pre>
 *
 * <p>A counter goes back when Hazelcast loses the partition that held it: its member died before a backup of the
 * entry existed (a member that dies during the migration after a join), or with more members lost at once than
 * backups kept. The next increment then starts again from 1 and, without this check, would make its owner a first
 * owner, which neither waits out its predecessor's lease nor marks new ids unvouched. {@link OwnerLock#nextEpoch}
 * detects it against the newest epoch its deployment has read (a standby reads the counter at every lock poll) and
 * the last clean release's, and moves the counter past them.
 *
 * <p>Immutable; any thread.
 *
 * @param epoch the epoch this term took
 * @param releasedEpoch the epoch whose release was marked clean, or {@link OwnerEpochFile#NO_EPOCH}
 * @param deployedEpoch the epoch of the newest owner whose partition deployed, as the cluster recorded it, or
 *     {@link OwnerEpochFile#NO_EPOCH}
 * @param deployedTermId that owner's term id, or {@link OwnerEpochFile#NO_TERM}
 * @param journal what the journal's {@code owner-epoch} file says of the last owner that opened it (its epoch, term
 *     id and the unvouched mark it carries)
 * @param wentBackFrom the newest epoch known (read by this deployment, or released cleanly) when the counter was found
 *     at or below it (the counter was lost), or 0 if the counter was found above it
 */
record OwnerTakeover(long epoch, long releasedEpoch, long deployedEpoch, long deployedTermId,
    OwnerEpochFile.Contents journal, long wentBackFrom) {

  private static final Logger LOG = LoggerFactory.getLogger(PartitionOwnership.class);

  /**
   * Learns what a takeover needs, once the lock is held: whether the previous owner released cleanly, the cluster's
   * record of the newest deployed term, and the journal's {@code owner-epoch} file; then takes the next epoch, with
   * the release and the deployed term as floors (an epoch at or above the counter's next value also shows a lost
   * counter; the journal's file does not, since after a restart of the whole cluster the counter starts again from 0
   * by right).
   *
   * @param lock the partition's lock, counter and maps
   * @param epochFile the journal directory's {@code owner-epoch} file
   * @return what was learned; fails if the cluster or the file fails
   */
  static Future<OwnerTakeover> learn(OwnerLock lock, OwnerEpochFile epochFile) {
    return lock.releasedEpoch().compose(released -> lock.deployedTerm().compose(deployed ->
        epochFile.read().compose(journal -> {
          long releasedEpoch = released == null ? OwnerEpochFile.NO_EPOCH : released;
          return lock.nextEpoch(Math.max(releasedEpoch, deployed.epoch())).map(taken -> new OwnerTakeover(
              taken.epoch(), releasedEpoch, deployed.epoch(), deployed.termId(), journal, taken.wentBackFrom()));
        })));
  }

  /** @return whether the counter had gone back below an epoch this deployment had read */
  boolean counterWentBack() {
    return wentBackFrom > 0;
  }

  /** @return the previous owner's epoch as far as it is known; 0 for the first owner ever */
  long previous() {
    return counterWentBack() ? wentBackFrom : epoch - 1;
  }

  /** @return whether the previous owner released cleanly (or there was none): no lease need be waited out */
  boolean clean() {
    return !counterWentBack() && (previous() == 0 || releasedEpoch == previous());
  }

  /**
   * @param journaled whether the partition has a journal directory
   * @return whether the journal is the previous owner's (or there was no previous owner)
   */
  boolean handedOver(boolean journaled) {
    if (counterWentBack()) {
      return false;
    }
    long previous = previous();
    return previous == 0 || (journaled && journal.epoch() == previous && deployedEpoch == previous
        && journal.termId() != OwnerEpochFile.NO_TERM && journal.termId() == deployedTermId);
  }

  /**
   * The term this takeover starts, not yet confirmed.
   *
   * @param nowMs the takeover instant, clock ms
   * @param options the service's options (its window W)
   * @param journaled whether the partition has a journal directory
   * @param owner the owning deployment's name
   * @param leaseClock the lease clock, monotonic ms
   * @return the new term
   */
  OwnerTerm term(long nowMs, DedupOptions options, boolean journaled, String owner, LongSupplier leaseClock) {
    boolean handedOver = handedOver(journaled);
    // Unvouched until the later of this takeover's own mark (none if the journal is handed over) and the one the
    // journal carries from an earlier takeover without its predecessor's journal.
    long ownMark = handedOver ? OwnerEpochFile.NO_MARK : nowMs + options.getWindowMs();
    long unvouchedUntil = Math.max(ownMark, journal.mark());
    return new OwnerTerm(epoch, previous(), handedOver, nowMs, unvouchedUntil, owner, leaseClock);
  }

  /**
   * Logs the takeover: INFO for a first owner or a handed-over journal, WARN when new ids are unvouched or the
   * counter went back.
   *
   * @param name the partition's name, {@code <address>.<p>}
   * @param t the term {@link #term} made
   * @param options the service's options
   * @param journaled whether the partition has a journal directory
   */
  void log(String name, OwnerTerm t, DedupOptions options, boolean journaled) {
    String words = journalWords(t, options, journaled);
    if (counterWentBack()) {
      LOG.warn("partition {}: taking over, epoch {}: the epoch counter had gone back to or below epoch {}, known"
          + " before (its cluster partition was lost with a member), and was moved past it; treated as a loss"
          + " without a clean release: waiting out a lease ({} ms) before answering; journal {}", name, epoch,
          wentBackFrom, options.getOwnerLeaseMs(), words);
    } else if (previous() == 0) {
      LOG.info("partition {}: owner, epoch 1 (first owner)", name);
    } else if (clean()) {
      level(t).log("partition {}: taking over, epoch {} after a clean release of epoch {}; journal {}", name, epoch,
          previous(), words);
    } else {
      level(t).log("partition {}: taking over, epoch {} after epoch {} was lost without a clean release; waiting out"
          + " its lease ({} ms) before answering; journal {}", name, epoch, previous(), options.getOwnerLeaseMs(),
          words);
    }
    if (t.journalHandedOver() && journal.mark() > t.takeoverMs()) {
      LOG.info("partition {}: the journal carries the mark of an earlier takeover without its predecessor's journal:"
          + " new ids are unvouched until {} (clock ms, {} ms from now)", name, journal.mark(),
          journal.mark() - t.takeoverMs());
    }
  }

  private static LoggingEventBuilder level(OwnerTerm t) {
    return t.journalHandedOver() ? LOG.atInfo() : LOG.atWarn();
  }

  private static String journalWords(OwnerTerm t, DedupOptions options, boolean journaled) {
    if (t.journalHandedOver()) {
      return "handed over (the previous owner's): rebuilding the window from it";
    }
    return (journaled ? "not the previous owner's" : "none") + ": new ids are unvouched for " + options.getWindowMs()
        + " ms (unvouchedPolicy=" + options.getUnvouchedPolicy() + ")";
  }
}
