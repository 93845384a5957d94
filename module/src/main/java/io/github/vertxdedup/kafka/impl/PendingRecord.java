package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.kafka.RecordIdentity;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;

/**
 * One record of a partition between its hand-over by the poll thread and the moment its offset becomes committable
 * (every record before it handled, dropped as a duplicate or dead-lettered, and in effect-first mode its claim's
 * commit answered). Mutable; event loop of its {@link PartitionOwner} only.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class PendingRecord<K, V> {

  /** Whether the window's memory covered the record when it first accepted it. */
  enum Coverage {
    /** Not accepted yet. */
    NOT_ACCEPTED,
    /** Accepted, and the window remembers far enough back to know the record is new. */
    COVERED,
    /**
     * Accepted, but its event time is older than the window {@code W} or than the window's memory, so the window
     * cannot tell a redelivery from a new record: what the public API calls uncovered. The consumer's windows accept
     * such a record, recording its id, and mark it uncovered; the owner then applies
     * {@link io.github.vertxdedup.kafka.UncoveredRecordPolicy}: the handler runs and the record is counted, or it
     * goes to the dead-letter path (effect-first commits its claim after, so the id stays remembered, as after a
     * failed handler).
     */
    NOT_COVERED
  }

  /**
   * The record as the application's identity extractor, handler and dead-letter handler see it: one instance for the
   * whole way through the owner, so its headers are converted to {@code KafkaHeader}s at most once.
   */
  final KafkaConsumerRecord<K, V> record;
  /** Its identity, or null when the extractor found none ({@link #noIdentity} says why). */
  RecordIdentity identity;
  /** Why it has no identity, or null. */
  String noIdentity;
  /** The window's answer to its latest check or claim, or null while undecided (or decided again). */
  DedupResult decision;
  /** Handler calls so far. */
  int attempts;
  /** Consecutive failed requests to the window (decision, commit, late check); reset when it is decided. */
  int requestRetries;
  /** Calls of the dead-letter handler so far. */
  int deadLetterTries;
  /** Effect-first: the reply to its claim's commit came (or the late check after a refused commit). */
  boolean commitAnswered;
  /** Judged at its first acceptance only: a claim taken again after a handler failure keeps the first answer. */
  Coverage coverage = Coverage.NOT_ACCEPTED;
  /**
   * Effect-first: the earliest instant the window's lease of its latest claim can end (the claim's request time plus
   * {@code leaseMs}, on the injected clock), in epoch milliseconds.
   */
  long leaseEndMs;
  /** Effect-first: its claim was given back and made again for lack of lease since its handler last started. */
  boolean claimedAgainForLease;

  PendingRecord(KafkaConsumerRecord<K, V> record) {
    this.record = record;
  }

  /**
   * Takes the window's answer to its check or claim. At its first acceptance it judges whether the window's memory
   * covered the record ({@link #coverage}); a claim taken again after a handler failure keeps the first answer.
   *
   * @param result the window's answer
   * @return true if this answer is its first acceptance
   */
  boolean decided(DedupResult result) {
    decision = result;
    requestRetries = 0;
    if (result.verdict() != DedupVerdict.ACCEPTED || coverage != Coverage.NOT_ACCEPTED) {
      return false;
    }
    coverage = result.uncovered() ? Coverage.NOT_COVERED : Coverage.COVERED;
    return true;
  }

  /** @return the offset of the record */
  long offset() {
    return record.offset();
  }
}
