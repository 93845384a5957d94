package io.github.vertxdedup.journal;

/**
 * Receives the records of a {@link Journal#replay replay}, in the order they were appended. The journal does not
 * interpret them: the owner decides what each means for its window (an accept whose {@code expiresAtMs} has passed
 * is still delivered; skip it).
 *
 * <p>Every method has an empty default, so a visitor overrides only what it needs. Methods are called on the
 * replaying thread, one at a time. A visitor that throws stops the replay; the exception propagates from
 * {@link Journal#replay} unchanged.
 *
 * <p>Claims and offsets that were open at a roll are written again at the start of the next cycle (see
 * {@link RollSnapshotSource}), so a claim or offset may be delivered more than once; both are idempotent for a
 * visitor that keeps the latest claim per fingerprint and the highest offset per topic-partition.
 */
public interface JournalVisitor {

  /**
   * A record begins: its entries (if it is intact) follow through the other methods. For tools that show where an
   * entry is (a journal inspector) and what it costs on disk; a partition's recovery ignores it.
   *
   * @param index the record's queue index (Chronicle's: cycle in the high bits, sequence in the low bits)
   * @param length the record's length in bytes, without Chronicle's 4-byte excerpt header
   */
  default void onRecord(long index, int length) {
  }

  /**
   * An id was accepted: remember it until {@code expiresAtMs}.
   *
   * @param fingerprint the id's fingerprint, never 0
   * @param keyFingerprint the business key's fingerprint, or 0 if none
   * @param payloadHash the payload's hash, or 0 if none
   * @param acceptedAtMs when it was accepted, epoch milliseconds of the owner's clock
   * @param expiresAtMs when it may be forgotten (remember-until), epoch milliseconds, {@code > acceptedAtMs}
   */
  default void onAccept(long fingerprint, long keyFingerprint, long payloadHash, long acceptedAtMs,
      long expiresAtMs) {
  }

  /**
   * An id was claimed: it is in flight, held by {@link ClaimEntry#claimerId()}, until
   * {@link ClaimEntry#leaseEndMs()} unless committed or released first. A claim whose lease has ended at recovery
   * frees the id again; it is never a commit. A claim read from a record of format version 1 lacks some columns (see
   * {@link ClaimEntry}).
   *
   * @param claim the claim
   */
  default void onClaim(ClaimEntry claim) {
  }

  /**
   * A claim was committed: remember the id until {@code expiresAtMs}.
   *
   * @param fingerprint the id's fingerprint, never 0
   * @param token the token of the claim that was committed
   * @param expiresAtMs when it may be forgotten, epoch milliseconds
   */
  default void onCommit(long fingerprint, long token, long expiresAtMs) {
  }

  /**
   * A claim was released: the id is free again.
   *
   * @param fingerprint the id's fingerprint, never 0
   * @param token the token of the claim that was released
   */
  default void onRelease(long fingerprint, long token) {
  }

  /**
   * A consumer offset was committed. Offsets of one topic-partition may arrive lower than one delivered earlier
   * (see the type comment); keep the highest.
   *
   * @param topic the topic
   * @param partition the partition, {@code >= 0}
   * @param offset the committed offset, {@code >= 0}
   */
  default void onOffsetCommit(String topic, int partition, long offset) {
  }

  /**
   * A snapshot stands for the records up to {@code index} ({@link Journal#replayFromSnapshot}): its live entries
   * follow as accepts without key (their first-seen time as {@code acceptedAtMs}) unless the visitor takes them in
   * place ({@link #onSnapshotEntriesInPlace}), its open claims as claims, its offsets as offset commits, and then the
   * records after {@code index}. Called once, before those, and only by a replay from a snapshot.
   *
   * @param index the journal index of the last record the snapshot covers
   * @param coveredSinceMs the earliest accept or claim time among the records it covers, epoch milliseconds, or
   *     {@link Long#MAX_VALUE} if none
   */
  default void onSnapshot(long index, long coveredSinceMs) {
  }

  /**
   * How many live entries the snapshot announced by {@link #onSnapshot} holds: called once, right after it and before
   * its first entry, so that a visitor can size its table for them. They arrive in ascending order of
   * {@code fingerprint * 0x9E3779B97F4A7C15} (unsigned), the order of the home slots of a Fibonacci-hashed table:
   * inserted in that order into a linear-probing table smaller than they need, they pile into one probe chain.
   *
   * @param entries the snapshot's live entries (some may have expired since it was written)
   */
  default void onSnapshotEntries(long entries) {
  }

  /**
   * Offers the entries of the snapshot announced by {@link #onSnapshot} in place: a read-only view of them in the
   * snapshot file, memory-mapped, in the order {@link #onSnapshotEntries} describes. Called once, right after
   * {@link #onSnapshot}, and only when the snapshot has the layout its writer gives it (its entries blocks first,
   * each of 4,096 entries but the last; checked when the file was); for a snapshot without it, or one whose entries
   * cannot be mapped, it is not called and the entries are delivered one by one.
   *
   * <p>Return true to take them: then neither {@link #onSnapshotEntries} nor an {@link #onAccept} for any of the
   * snapshot's entries is called, and the replay does not read them again (it goes on from the end of the entries in
   * the file); the snapshot's claims and offsets and the records after it are delivered as ever. The view holds
   * every entry as written: an entry whose remember-until has passed is in it, where it would have been delivered to
   * {@link #onAccept} anyway; the visitor decides. Its entries come before the records delivered after it in journal
   * order. The view stays valid after the replay returns, for as long as the visitor keeps it (see
   * {@link SnapshotEntries}). Return false (the default) to receive them one by one, as if this were never called.
   *
   * <p>{@link Journal#snapshotEntries} and {@link ReplayResult#snapshotEntries()} count the snapshot's entries
   * either way.
   *
   * @param entries the snapshot's entries, in place
   * @return true if the visitor takes the entries in place, false to receive them one by one
   */
  default boolean onSnapshotEntriesInPlace(SnapshotEntries entries) {
    return false;
  }
}
