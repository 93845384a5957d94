package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import java.util.Collection;
import java.util.NavigableMap;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Record-first records a partition's owner checked (their ids recorded in the window) and stopped without handling,
 * no commit having covered them: a wrapped consumer's revocation, whose commit in flight Kafka refuses while the
 * group rebalances. When the same consumer is assigned the partition again, its next owner reads them again from the
 * committed offset and the window answers them {@code DUPLICATE}; handed these, it handles each instead, once, as the
 * previous owner would have (its gate still waits for a commit past the record). Where the partition goes elsewhere
 * they are lost, record-first's allowed loss, and counted in {@code dedup.kafka.unhandled}.
 *
 * <p>Safe because nothing else handled them: the previous owner stopped before their handlers ran, and no other
 * member owned the partition in between: an assignment that leaves the partition out drops them, and so does a group
 * committed offset that moved since this consumer last knew it ({@link WrappedAssignment}).
 *
 * <p>Not thread-safe: built on the stopping owner's event loop, then used by one thread at a time, each handed it
 * through a future or an executed task: the wrapped consumer's context (or the stopping owner's loop, counting it),
 * then the next owner's event loop.
 */
final class LeftUnhandled {

  /** One record: where it is, its id, and the window's answer and coverage when it was checked. */
  private record Entry(String id, DedupResult decision, PendingRecord.Coverage coverage) {
  }

  private final NavigableMap<Long, Entry> byOffset = new TreeMap<>();

  /**
   * @param records the records, each checked {@code ACCEPTED} with an identity
   * @return their entries
   */
  static LeftUnhandled of(Collection<? extends PendingRecord<?, ?>> records) {
    LeftUnhandled l = new LeftUnhandled();
    for (PendingRecord<?, ?> p : records) {
      l.byOffset.put(p.offset(), new Entry(p.identity.id(), p.decision, p.coverage));
    }
    return l;
  }

  /** @return how many records are left to hand over */
  int size() {
    return byOffset.size();
  }

  /**
   * Forgets the records before {@code offset}: the next owner reads from there, or has read past them, so they do not
   * come to it (again). O(log n) plus the records dropped.
   *
   * @param offset the offset the next owner reads from or has reached; -1 if unknown (nothing is dropped)
   * @return how many were dropped
   */
  int dropBefore(long offset) {
    SortedMap<Long, Entry> before = byOffset.headMap(offset);
    int n = before.size();
    before.clear();
    return n;
  }

  /**
   * The next owner decided {@code pending}: if it is one of these records, answered {@code DUPLICATE} because the
   * previous owner recorded it, its decision and coverage become the previous owner's ({@code ACCEPTED}). Either way
   * the record at that offset is no longer left.
   *
   * @param pending a decided record with an identity
   * @return true if its decision was restored
   */
  boolean restore(PendingRecord<?, ?> pending) {
    Entry e = byOffset.remove(pending.offset());
    if (e == null || pending.decision.verdict() != DedupVerdict.DUPLICATE || !e.id.equals(pending.identity.id())) {
      return false;
    }
    pending.decision = e.decision;
    pending.coverage = e.coverage;
    return true;
  }

  /**
   * Adds the records {@code other} holds that are not decided here yet (an owner that stops before it read them
   * again leaves them to the next one).
   *
   * @param other records handed to the stopping owner, or null
   */
  void addAll(LeftUnhandled other) {
    if (other != null) {
      other.byOffset.forEach(byOffset::putIfAbsent);
    }
  }
}
