package io.github.vertxdedup.journal;

import static io.github.vertxdedup.journal.RecordFormat.CLAIM;
import static io.github.vertxdedup.journal.RecordFormat.FLAG_CARRIED;
import static io.github.vertxdedup.journal.RecordFormat.NO_EXPIRY;
import static io.github.vertxdedup.journal.RecordFormat.OFFSETS;
import static io.github.vertxdedup.journal.RecordFormat.ROLL;
import static io.github.vertxdedup.journal.RecordFormat.SNAPSHOT_END;
import static io.github.vertxdedup.journal.RecordFormat.UNKNOWN_EXPIRY;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Starts each new roll cycle, inside the first append that falls in it: a {@code ROLL} record (carrying the previous
 * cycle's latest expiry, so retention knows when that cycle's file may go), the owner's roll snapshot (its open claims
 * and committed offsets, collected from the {@link RollSnapshotSource} through this {@link RollSnapshotWriter} and
 * written as carried-over {@code CLAIM} and {@code OFFSETS} records of at most {@value #SNAPSHOT_CHUNK} entries), and
 * {@code SNAPSHOT_END}. A cycle whose start failed is started again by the next append.
 *
 * <p>Threads: confined to the owner's thread, like the appends it runs inside; not thread-safe. As a
 * {@link RollSnapshotWriter} it is valid only during the source's {@code writeSnapshot} call.
 */
final class RollSnapshotAppender implements RollSnapshotWriter {

  /** Entries per carried-over record in a roll snapshot. */
  static final int SNAPSHOT_CHUNK = 1024;

  private final JournalQueue q;
  private final RecordAppender out;
  private final List<ClaimEntry> claims = new ArrayList<>();
  private final List<OffsetCommit> offsets = new ArrayList<>();
  private int rolledCycle;

  /**
   * @param rolledCycle the newest cycle on disk if it starts with a complete roll snapshot, else
   *     {@link CycleCatalog#NONE}: the first append in any other cycle starts that cycle first
   */
  RollSnapshotAppender(JournalQueue q, RecordAppender out, int rolledCycle) {
    this.q = q;
    this.out = out;
    this.rolledCycle = rolledCycle;
  }

  /**
   * Starts the cycle that {@code nowMs} falls in, unless it was started already.
   *
   * @param nowMs the journal's time of the append about to be written, epoch milliseconds
   * @throws JournalWriteException if a record could not be written or the roll snapshot source failed
   */
  void startCycleAt(long nowMs) {
    int cycle = (int) Math.floorDiv(nowMs - q.epochMs, q.cycleMs);
    if (cycle != rolledCycle) {
      roll(cycle, nowMs);
    }
  }

  /** Starts {@code cycle}: ROLL, the owner's snapshot, SNAPSHOT_END. */
  private void roll(int cycle, long nowMs) {
    CycleCatalog catalog = q.catalog;
    int newest = catalog.newest();
    int previous = newest == cycle ? catalog.newestBefore(cycle) : newest;
    long previousMax = NO_EXPIRY;
    if (previous != CycleCatalog.NONE) {
      long known = catalog.maxExpiry(previous);
      previousMax = known != UNKNOWN_EXPIRY ? Math.max(known, out.maxExpiryWritten(previous)) : known;
      // Final from here: nothing is written to a cycle once a later one has begun.
      catalog.exact(previous, previousMax);
    }
    RecordEncoder e = out.encoder();
    e.begin(ROLL, 0, 1);
    e.putInt(cycle);
    e.putInt(previous);
    e.putLong(previousMax);
    e.putLong(nowMs);
    out.append(NO_EXPIRY);
    claims.clear();
    offsets.clear();
    try {
      q.options.getRollSnapshotSource().writeSnapshot(this);
    } catch (RuntimeException ex) {
      throw new JournalWriteException("journal " + q.dir + ": the roll snapshot source failed; the append was not "
          + "written and the next append writes the snapshot again", ex);
    }
    writeSnapshot();
    e.begin(SNAPSHOT_END, 0, 1);
    e.putInt(claims.size());
    e.putInt(offsets.size());
    out.append(NO_EXPIRY);
    catalog.started(cycle);
    rolledCycle = cycle;
  }

  @Override
  public void claim(ClaimEntry claim) {
    claims.add(Objects.requireNonNull(claim, "claim"));
  }

  @Override
  public void offsetCommit(String topic, int partition, long offset) {
    offsets.add(new OffsetCommit(topic, partition, offset));
  }

  /** Writes what the source handed over as carried-over CLAIM and OFFSETS records of at most SNAPSHOT_CHUNK. */
  private void writeSnapshot() {
    RecordEncoder e = out.encoder();
    for (int from = 0; from < claims.size(); from += SNAPSHOT_CHUNK) {
      int to = Math.min(claims.size(), from + SNAPSHOT_CHUNK);
      e.begin(CLAIM, FLAG_CARRIED, to - from);
      for (int i = from; i < to; i++) {
        ClaimEntry c = claims.get(i);
        e.putClaim(c, c.claimerUtf8());
      }
      out.append(NO_EXPIRY);
    }
    for (int from = 0; from < offsets.size(); from += SNAPSHOT_CHUNK) {
      int to = Math.min(offsets.size(), from + SNAPSHOT_CHUNK);
      e.begin(OFFSETS, FLAG_CARRIED, to - from);
      for (int i = from; i < to; i++) {
        OffsetCommit o = offsets.get(i);
        e.putOffset(o.topic().getBytes(StandardCharsets.UTF_8), o.partition(), o.offset());
      }
      out.append(NO_EXPIRY);
    }
  }
}
