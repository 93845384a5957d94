package io.github.vertxdedup.journal.internal;

import io.github.vertxdedup.journal.ClaimEntry;
import io.github.vertxdedup.journal.OffsetCommit;
import io.github.vertxdedup.journal.RollSnapshotSource;
import io.github.vertxdedup.journal.RollSnapshotWriter;
import io.github.vertxdedup.time.DedupClock;
import java.util.Iterator;
import java.util.Objects;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The owner's state each new roll cycle carries ({@link RollSnapshotSource}): a copy of its open claims, each added
 * once its {@code CLAIM} record is written and removed once its commit or release is, and of its committed offsets.
 * A claim whose lease has ended by the roll is dropped rather than carried: after a restart it would free the id
 * anyway. So old cycles can go once their accepts and commits have expired.
 *
 * <p>Not thread-safe: confined to the owner's thread, which is also the thread the journal calls
 * {@link #writeSnapshot} on (inside an append).
 */
public final class CarriedState implements RollSnapshotSource {

  private final DedupClock clock;
  private final Long2ObjectHashMap<ClaimEntry> openClaims = new Long2ObjectHashMap<>();
  private CommittedOffsets offsets = new CommittedOffsets();

  /**
   * @param clock the owner's clock, epoch milliseconds: claims whose lease ended by a roll are not carried
   * @throws NullPointerException if {@code clock} is null
   */
  public CarriedState(DedupClock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * A claim's record was written: carry it until it is closed.
   *
   * @param claim the claim; replaces an earlier one of the same fingerprint
   */
  public void claimOpened(ClaimEntry claim) {
    openClaims.put(claim.fingerprint(), claim);
  }

  /**
   * Returns the token of the open claim of {@code fingerprint}, for its commit or release record.
   *
   * @param fingerprint the id's fingerprint
   * @return the token, or 0 if no claim of it is open
   */
  public long openToken(long fingerprint) {
    ClaimEntry c = openClaims.get(fingerprint);
    return c == null ? 0 : c.token();
  }

  /**
   * A commit or release record of {@code fingerprint} was written: stop carrying its claim.
   *
   * @param fingerprint the id's fingerprint
   */
  public void claimClosed(long fingerprint) {
    openClaims.remove(fingerprint);
  }

  /**
   * An offset record was written: carry the offset (the highest per topic-partition).
   *
   * @param commit the offset
   */
  public void offsetCommitted(OffsetCommit commit) {
    offsets.record(commit);
  }

  /** @return the number of topic-partitions with a committed offset */
  public int offsetCount() {
    return offsets.size();
  }

  /** Forgets every claim and offset (the journal was closed, or is about to be restored). */
  public void clear() {
    openClaims.clear();
    offsets = new CommittedOffsets();
  }

  /**
   * Writes every open claim whose lease has not ended (dropping those that have) and every committed offset.
   *
   * @param w where to write them
   */
  @Override
  public void writeSnapshot(RollSnapshotWriter w) {
    long now = clock.nowMs();
    for (Iterator<ClaimEntry> it = openClaims.values().iterator(); it.hasNext(); ) {
      ClaimEntry c = it.next();
      if (c.leaseEndMs() <= now) {
        it.remove();
      } else {
        w.claim(c);
      }
    }
    offsets.writeTo(w);
  }
}
