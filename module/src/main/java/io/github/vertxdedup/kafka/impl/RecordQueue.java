package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupVerdict;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.agrona.collections.IntHashSet;

/**
 * The records of one partition its {@link PartitionOwner} is not done with, in offset order, and the runs it decides
 * from them. The head is the only record whose handler may run. A run is the undecided records from the head that go
 * to the window in one decision request ({@code checkBatch} or {@code claimBatch}).
 *
 * <h2>Runs</h2>
 * A run holds up to {@code maxBatch} records, one while records are decided singly (after a batch that failed whole on
 * one bad identity, {@link #decideSingly}). In effect-first mode a run stops before a repeat of an id or key already in
 * it: inside one claimBatch the repeat would find the first copy's claim (IN_FLIGHT) and wait for a lease; decided
 * after the first copy's commit, it is a plain duplicate. Repeats are tracked by String hash codes: two different ids
 * that share one only end the run early, which is always safe.
 *
 * <h2>Checked behind the head</h2>
 * A record-first check batch is answered per record, so a full window can refuse a record while recording one behind
 * it. Such a record must still be handled, and handlers run in offset order, so a fenced owner goes on deciding the
 * records before it ({@link #checkedBehindHead}).
 *
 * <p>Event loop of its owner only.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class RecordQueue<K, V> {

  private final boolean effectFirst;
  private final int maxBatch;
  private final ArrayDeque<PendingRecord<K, V>> records = new ArrayDeque<>();
  /** Effect-first: hash codes of the ids (and complemented, of the keys) of the run being gathered. */
  private final IntHashSet runHashes = new IntHashSet();
  /** Runs still to be made of one record each. */
  private int decideSingly;

  /**
   * @param effectFirst whether runs are claimed (effect-first) rather than checked
   * @param maxBatch the most records in one run ({@code dedup.maxBatch})
   */
  RecordQueue(boolean effectFirst, int maxBatch) {
    this.effectFirst = effectFirst;
    this.maxBatch = maxBatch;
  }

  /** Adds a record after the others (the poll thread hands them over in offset order). */
  void add(PendingRecord<K, V> pending) {
    records.add(pending);
  }

  /** @return the head, or null if the queue is empty */
  PendingRecord<K, V> head() {
    return records.peek();
  }

  /** Removes the head: the owner is done with it. */
  void removeHead() {
    records.poll();
  }

  /**
   * The run of undecided records from the head, up to {@code maxBatch} (one while {@link #decideSingly}), stopping at
   * a record without an identity and, in effect-first mode, before a repeat of an id or key already in the run.
   *
   * @return the run, in offset order; empty if the head is decided or has no identity
   */
  List<PendingRecord<K, V>> nextRun() {
    int limit = decideSingly > 0 ? 1 : maxBatch;
    List<PendingRecord<K, V>> run = new ArrayList<>(Math.min(limit, records.size()));
    if (effectFirst) {
      runHashes.clear();
    }
    for (PendingRecord<K, V> pending : records) {
      if (run.size() == limit || pending.decision != null || pending.identity == null) {
        break;
      }
      if (effectFirst && (!runHashes.add(pending.identity.id().hashCode())
          || (pending.identity.key() != null && !runHashes.add(~pending.identity.key().hashCode())))) {
        break;
      }
      run.add(pending);
    }
    if (decideSingly > 0) {
      decideSingly--;
    }
    return run;
  }

  /**
   * Record-first: the run decided ahead while the decided prefix waits for its offset commit. It is the undecided
   * records right after the decided records at the head, up to {@code maxBatch}, stopping at a record without an
   * identity or a decided one. None while records are decided singly, when the first undecided record has no identity
   * (it is dead-lettered at the head first, so nothing behind it is checked before it), or when that record is at or
   * before {@code notBefore} (a record refused or failed in an earlier run, decided again only from the head, after its
   * backoff). O(queued records).
   *
   * @param notBefore the offset of the last record that must wait for the head, or -1
   * @return the run, in offset order; empty if there is none
   */
  List<PendingRecord<K, V>> runAhead(long notBefore) {
    if (effectFirst || decideSingly > 0) {
      return List.of();
    }
    Iterator<PendingRecord<K, V>> it = records.iterator();
    PendingRecord<K, V> first = null;
    while (first == null && it.hasNext()) {
      PendingRecord<K, V> pending = it.next();
      if (pending.decision == null) {
        first = pending; // past the decided records at the head
      }
    }
    if (first == null || first.identity == null || first.offset() <= notBefore) {
      return List.of();
    }
    List<PendingRecord<K, V>> run = new ArrayList<>();
    run.add(first);
    while (run.size() < maxBatch && it.hasNext()) {
      PendingRecord<K, V> pending = it.next();
      if (pending.decision != null || pending.identity == null) {
        break;
      }
      run.add(pending);
    }
    return run;
  }

  /**
   * Makes the next {@code runs} runs of one record each: a batch failed whole on one bad identity, and deciding its
   * records one by one finds it.
   */
  void decideSingly(int runs) {
    decideSingly = runs;
  }

  /**
   * Record-first: whether a record was checked (its id is recorded) while a record before it is not decided, which a
   * full window's per-record batch answer allows. O(queued records); called only while fenced.
   *
   * @return true if a fenced owner must go on deciding the records before a checked one
   */
  boolean checkedBehindHead() {
    if (effectFirst) {
      return false;
    }
    for (PendingRecord<K, V> pending : records) {
      if (pending.decision != null && pending.decision.verdict() == DedupVerdict.ACCEPTED) {
        return true;
      }
    }
    return false;
  }

  /**
   * Record-first: the end of the decided prefix: the offset after the unbroken run of records from the head that are
   * decided or have no identity (those go to the dead-letter path whatever the window says). O(that run).
   *
   * @return the offset after the run, or -1 if the head is undecided or the queue empty
   */
  long decidedNext() {
    long next = -1;
    for (PendingRecord<K, V> pending : records) {
      if (pending.decision == null && pending.identity != null) {
        break;
      }
      next = pending.offset() + 1;
    }
    return next;
  }

  /**
   * @return true if a fenced owner has nothing left to finish in the queue: it is empty, or its head is undecided (or
   *     waits for another delivery's lease) and no record behind it was checked
   */
  boolean nothingDecided() {
    PendingRecord<K, V> head = records.peek();
    return head == null || (head.decision == null || head.decision.verdict() == DedupVerdict.IN_FLIGHT)
        && !checkedBehindHead();
  }

  /**
   * Record-first: the records checked (their id recorded) and not handled; they are left in the queue when the owner
   * stops without a commit that covers them. O(queued records).
   *
   * @param running a record whose handler runs (counted as handled), or null
   * @return the records, in offset order; empty in effect-first mode
   */
  List<PendingRecord<K, V>> checkedUnhandled(PendingRecord<K, V> running) {
    List<PendingRecord<K, V>> out = new ArrayList<>();
    for (PendingRecord<K, V> pending : records) {
      if (!effectFirst && pending != running && pending.decision != null
          && pending.decision.verdict() == DedupVerdict.ACCEPTED) {
        out.add(pending);
      }
    }
    return out;
  }

  /**
   * Effect-first: the records holding a claim whose handler has not started, in offset order.
   *
   * @param except a record to leave out (the head whose handler runs or failed), or null
   * @return the records, a new list
   */
  List<PendingRecord<K, V>> unstartedClaims(PendingRecord<K, V> except) {
    List<PendingRecord<K, V>> claims = new ArrayList<>();
    for (PendingRecord<K, V> pending : records) {
      if (pending != except && pending.decision != null && pending.decision.verdict() == DedupVerdict.ACCEPTED
          && pending.decision.claimToken() != null) {
        claims.add(pending);
      }
    }
    return claims;
  }
}
