package io.github.vertxdedup.kafka.impl;

import org.agrona.collections.LongArrayQueue;

/**
 * Record-first: the gate before a partition's handlers. A record's handler starts only once Kafka has acknowledged an
 * offset commit past the record ({@link #covers}), so the commit happens before the effect:
 *
 * <ul>
 *   <li>If the machine is lost after the acknowledgement, the next owner (another machine, a window rebuilt from the
 *   source topic up to the committed offset) starts after the record and never applies it again: the effect may be
 *   lost, never repeated, as record-first promises.</li>
 *   <li>If this consumer is no longer a member of the group's generation (its partitions moved on while it was paused
 *   or cut off: a zombie), the group coordinator refuses the commit, so the records it decided since its last commit
 *   are never handled here; the next owner reads them from the committed offset and applies them once.</li>
 * </ul>
 *
 * <p>The owner asks for a commit of its decided prefix ({@link #want}) when its head is an accepted record the gate
 * does not cover; the poll thread commits it and hands the acknowledgement back ({@link #acked}). While fewer than
 * {@code maxUnansweredOffsetCommits} such commits are on their way ({@link #roomAhead}) the owner decides the next run
 * and asks for its commit too, so a commit's round trip does not stop the partition. A partition that is
 * lost (or whose commit was refused on revocation) is {@link #shut}: no acknowledgement comes any more, and the
 * records it held are left to the next owner.
 *
 * <p>Event loop of its owner only, except {@link #wantedNext}, which any thread may call.
 */
final class OffsetGate {

  /** The offset the owner asked to commit last (the next record after its decided prefix), or -1. */
  private volatile long wantedNext = -1;
  /** The offsets asked for and not acknowledged yet, oldest first; {@link #wantedNext} is the last. */
  private final LongArrayQueue awaited = new LongArrayQueue(-1);
  /** The offset Kafka acknowledged last for this owner, or -1: the handlers of records before it may run. */
  private long ackedNext = -1;
  private boolean shut;

  /** @return true if Kafka acknowledged a commit past the record at {@code offset}: its handler may run */
  boolean covers(long offset) {
    return offset < ackedNext;
  }

  /**
   * Asks for a commit of the offset {@code next}, unless it was asked for already.
   *
   * @param next the offset after the owner's decided prefix
   * @return true if this is a new request (the poll thread must be told)
   */
  boolean want(long next) {
    if (shut || next <= wantedNext || next <= ackedNext) {
      return false;
    }
    wantedNext = next;
    awaited.addLong(next);
    return true;
  }

  /**
   * Asked right after {@link #want} of the owner's decided prefix, so the commits asked for cover that whole prefix
   * unless the gate is shut.
   *
   * @param maxUnanswered {@code maxUnansweredOffsetCommits}
   * @return true if the gate is open and fewer than {@code maxUnanswered} commits wait for their acknowledgement: one
   *     more run may be decided, and its commit asked for, meanwhile
   */
  boolean roomAhead(int maxUnanswered) {
    return !shut && awaited.size() < maxUnanswered;
  }

  /** @return the offset the owner waits to see committed, or -1; any thread */
  long wantedNext() {
    return wantedNext;
  }

  /**
   * Kafka acknowledged a commit of {@code next} for this owner's partition.
   *
   * @return true if the gate moved: held handlers may start
   */
  boolean acked(long next) {
    if (shut || next <= ackedNext) {
      return false;
    }
    ackedNext = next;
    while (!awaited.isEmpty() && awaited.peekLong() <= next) {
      awaited.pollLong(); // Kafka commits in order: an acknowledgement also answers the commits asked for before it
    }
    return true;
  }

  /** No acknowledgement comes any more: the records held at the gate are the next owner's. */
  void shut() {
    shut = true;
  }

  /** @return true once {@link #shut} */
  boolean isShut() {
    return shut;
  }
}
