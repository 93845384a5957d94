package io.github.vertxdedup;

/**
 * A verdict on the wire: the {@code verdict} field of a reply of the dedup service. The names are the contract
 * (they travel as JSON strings) and never change.
 *
 * <ul>
 *   <li>{@link #ACCEPTED}: first sighting; the caller applies the effect. After {@code claim} the id is held for a
 *       lease and the reply carries a {@code claimToken}.</li>
 *   <li>{@link #DUPLICATE}: the id (or its business key) is remembered; drop the event, still acknowledge it.</li>
 *   <li>{@link #CONFLICT}: remembered with another payload hash (the same id for other content: an identity
 *       conflict, not a duplicate); the first hash is kept; route the event to a conflict path.</li>
 *   <li>{@link #IN_FLIGHT}: another delivery holds a claim on the id (or key) and has neither committed nor released
 *       it, and its lease has not run out; retry later.</li>
 *   <li>{@link #UNKNOWN}: the event's {@code eventTimeMs} is older than the partition covers and the id is not
 *       remembered; nothing was recorded; the caller decides (what to do once an id may have expired is its
 *       policy).</li>
 *   <li>{@link #COMMITTED}: reply to {@code commit}; the id is now remembered until its expiry.</li>
 *   <li>{@link #RELEASED}: reply to {@code release}; the id is forgotten and a redelivery will be accepted.</li>
 * </ul>
 */
public enum DedupVerdict {
  /** First sighting: apply the effect. */
  ACCEPTED,
  /** Seen within the window: drop and acknowledge. */
  DUPLICATE,
  /** Seen within the window with another payload hash: do not apply, report. */
  CONFLICT,
  /** Claimed by another delivery that has not finished: retry later. */
  IN_FLIGHT,
  /** Older than the partition's memory and not remembered: nothing recorded, the caller decides. */
  UNKNOWN,
  /** The claim was committed: the id is remembered. */
  COMMITTED,
  /** The claim was released: the id is forgotten. */
  RELEASED
}
