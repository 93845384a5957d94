package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.window.DedupWindow;

/**
 * The results one partition answers with: the fixed ones, made once per core and shared by every request (so an
 * accept allocates nothing), and those for an event that records nothing because it is known already (duplicate,
 * conflict, in flight) or older than the partition covers (unknown), each counted as it is made.
 *
 * <p>Confined to the partition's event loop (not thread-safe): one per {@link PartitionCore}.
 */
final class PartitionResults {

  private final int partition;
  private final PartitionCounters counters;
  private final DedupResult accepted;
  /** {@link #accepted} as a batch element, shared like it. */
  private final DedupBatchResult acceptedElement;
  private final DedupResult acceptedUncovered;
  private final DedupResult acceptedUnvouched;
  private final DedupResult acceptedUncoveredUnvouched;
  private final DedupResult unknown;
  private final DedupResult committed;
  private final DedupResult released;

  /**
   * @param partition the partition's number, carried by every result
   * @param counters where the verdicts made here are counted
   */
  PartitionResults(int partition, PartitionCounters counters) {
    this.partition = partition;
    this.counters = counters;
    this.accepted = DedupResult.of(DedupVerdict.ACCEPTED, partition);
    this.acceptedElement = DedupBatchResult.decided(accepted);
    this.acceptedUncovered = new DedupResult(DedupVerdict.ACCEPTED, partition, null, DedupResult.NO_TIME,
        DedupResult.NO_TIME, DedupResult.NO_TIME, true);
    this.acceptedUnvouched = new DedupResult(DedupVerdict.ACCEPTED, partition, null, DedupResult.NO_TIME,
        DedupResult.NO_TIME, DedupResult.NO_TIME, false, true);
    this.acceptedUncoveredUnvouched = new DedupResult(DedupVerdict.ACCEPTED, partition, null, DedupResult.NO_TIME,
        DedupResult.NO_TIME, DedupResult.NO_TIME, true, true);
    this.unknown = DedupResult.of(DedupVerdict.UNKNOWN, partition);
    this.committed = DedupResult.of(DedupVerdict.COMMITTED, partition);
    this.released = DedupResult.of(DedupVerdict.RELEASED, partition);
  }

  /** @return ACCEPTED of an accept (not counted here: the accept is counted where it is journaled) */
  DedupResult accepted() {
    return accepted;
  }

  /**
   * ACCEPTED of a new id, with its marks: uncovered if the event is older than the partition covers (counted where it
   * is journaled), unvouched if it came within the window after a takeover without the previous owner's journal
   * (counted here, in {@code unvouched}).
   *
   * @param uncovered true if the event is older than the partition covers
   * @param unvouched true if the partition cannot vouch for a new id now
   * @return the shared result so marked
   */
  DedupResult accepted(boolean uncovered, boolean unvouched) {
    if (unvouched) {
      counters.unvouched++;
      return uncovered ? acceptedUncoveredUnvouched : acceptedUnvouched;
    }
    return uncovered ? acceptedUncovered : accepted;
  }

  /**
   * ACCEPTED of a claim: the claim's token, whether the event was older than the partition covers, and whether the
   * partition can vouch for it (counted in {@code unvouched} if not).
   *
   * @param token the claim's token
   * @param uncovered true if the event's time is before the partition's memory began
   * @param unvouched true within the window after a takeover without the previous owner's journal
   * @return a new result (not counted here, but for {@code unvouched})
   */
  DedupResult claimed(String token, boolean uncovered, boolean unvouched) {
    if (unvouched) {
      counters.unvouched++;
    }
    return new DedupResult(DedupVerdict.ACCEPTED, partition, token, DedupResult.NO_TIME, DedupResult.NO_TIME,
        DedupResult.NO_TIME, uncovered, unvouched);
  }

  /** @return COMMITTED (not counted here) */
  DedupResult committed() {
    return committed;
  }

  /** @return RELEASED (not counted here) */
  DedupResult released() {
    return released;
  }

  /** @return UNKNOWN, counted: the event is older than the partition covers and its id is not remembered */
  DedupResult unknown() {
    counters.unknown++;
    return unknown;
  }

  /**
   * DUPLICATE or CONFLICT of an event the window remembers, counted (a duplicate's age goes to the duplicate-age
   * sink).
   *
   * @param entry what the window remembers of its id or key; null only if the window has just said it remembers it
   *     and then cannot find it (cannot happen), answered DUPLICATE without times
   * @param conflict true if the payload hashes differ
   * @param now the clock's reading, ms
   * @return a new result
   */
  DedupResult seen(DedupWindow.Entry entry, boolean conflict, long now) {
    if (entry == null) {
      counters.duplicates++;
      return DedupResult.of(DedupVerdict.DUPLICATE, partition);
    }
    long age = now - entry.firstSeenMs();
    if (conflict) {
      counters.conflicts++;
    } else {
      counters.duplicate(age);
    }
    return new DedupResult(conflict ? DedupVerdict.CONFLICT : DedupVerdict.DUPLICATE, partition, null,
        entry.firstSeenMs(), age, entry.expiresAtMs(), false);
  }

  /**
   * IN_FLIGHT of an event whose id or key a live claim holds, counted.
   *
   * @param c the live claim
   * @param now the clock's reading, ms
   * @return a new result with the claim's time, its age and its lease end
   */
  DedupResult inFlight(Claim c, long now) {
    counters.inFlight++;
    return new DedupResult(DedupVerdict.IN_FLIGHT, partition, null, c.claimedAtMs, now - c.claimedAtMs,
        c.leaseEndMs, false);
  }

  /**
   * A result of a check or claim as the element of a batch.
   *
   * @param r the result
   * @return its element; the shared one for the shared ACCEPTED
   */
  DedupBatchResult element(DedupResult r) {
    return r == accepted ? acceptedElement : DedupBatchResult.decided(r);
  }
}
