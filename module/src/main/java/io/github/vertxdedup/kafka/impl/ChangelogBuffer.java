package io.github.vertxdedup.kafka.impl;

import java.util.ArrayList;
import java.util.List;

/**
 * The changelog entries of one assigned partition that no committed transaction holds yet ({@code changelog} on).
 *
 * <p>The partition's owner adds an entry where its window accepted an id ({@link #accepted}): record-first when the
 * check answers ACCEPTED, effect-first when the claim's commit is answered (or the late check of a lapsed claim
 * records the id). Both happen before the record's offset becomes committable, so when the poll thread commits an
 * offset {@code next}, every id accepted below {@code next} is here ({@link #below}), and the transaction of that
 * commit writes them. Entries leave only when a transaction that held them committed ({@link #committed}): a commit
 * that failed is retried by a later one, which holds them again; an entry written twice restores its id twice,
 * which is harmless. So the buffer holds the ids accepted since the last committed transaction: the records between
 * two commits, while the commits succeed.
 *
 * <p>Thread-safe: the owner's event loop adds, the poll thread reads and removes.
 */
final class ChangelogBuffer {

  private final List<ChangelogEntry> entries = new ArrayList<>();

  /**
   * Adds the entry of an id the window accepted. Owner's event loop.
   *
   * @param entry an {@link ChangelogEntry.Kind#ACCEPTED} entry
   */
  synchronized void accepted(ChangelogEntry entry) {
    entries.add(entry);
  }

  /**
   * The entries of a transaction that commits {@code next}: every entry of a source offset below it, then the commit
   * mark. Poll thread.
   *
   * @param next the source offset to commit
   * @param committed the group's offset this consumer knows committed for the partition (at its assignment, or by
   *     its last committed transaction), or -1 if none: the commit mark covers from it, or from the lowest entry
   * @return the entries, the commit mark last
   */
  synchronized List<ChangelogEntry> below(long next, long committed) {
    List<ChangelogEntry> out = new ArrayList<>();
    long lowest = next;
    for (ChangelogEntry e : entries) {
      if (e.sourceOffset() < next) {
        out.add(e);
        lowest = Math.min(lowest, e.sourceOffset());
      }
    }
    out.add(ChangelogEntry.commit(committed >= 0 ? Math.min(committed, next) : lowest, next));
    return out;
  }

  /**
   * A transaction that committed {@code next} was committed: its entries leave. Poll thread.
   *
   * @param next the source offset it committed
   */
  synchronized void committed(long next) {
    entries.removeIf(e -> e.sourceOffset() < next);
  }

  /**
   * Adds the entry of a record whose id the window accepted now: remembered until {@code now + W}, as the window
   * remembers it. Owner's event loop.
   *
   * @param pending the record, with its identity
   * @param nowMs now, epoch milliseconds on the windows' clock
   * @param windowMs the window {@code W}, milliseconds
   */
  void accepted(PendingRecord<?, ?> pending, long nowMs, long windowMs) {
    accepted(ChangelogEntry.accepted(pending.identity.id(), pending.identity.key(), pending.identity.payloadHash(),
        pending.offset(), nowMs, nowMs + windowMs));
  }

  /** @return entries held now */
  synchronized int size() {
    return entries.size();
  }
}
