package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.kafka.EventTimeSource;
import io.github.vertxdedup.kafka.RecordIdentity;

/**
 * What the window is asked about a Kafka record: its identity (by the application's extractor) and the events of its
 * check or claim, of its claim's commit or release, and of the late check after a lapsed claim.
 *
 * <p>With {@link EventTimeSource#RECORD_TIMESTAMP} every check and claim carries the record's timestamp as its event
 * time (none for a record without one), by which the window tells whether its memory covers the record. Effect-first
 * claims carry the consumer's instance id as their claimer, so that the consumer restarted after a kill can have the
 * claims it left open released when it takes the partition back (the window store does that before the owner starts)
 * instead of waiting out their leases.
 *
 * <p>Stateless apart from the consumer's {@link OwnerConfig}; any thread.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class RecordEvents<K, V> {

  private final OwnerConfig<K, V> config;

  RecordEvents(OwnerConfig<K, V> config) {
    this.config = config;
  }

  /**
   * Sets the record's identity, or, when the extractor finds none or throws, why it has none.
   *
   * @return {@code pending}
   */
  PendingRecord<K, V> identify(PendingRecord<K, V> pending) {
    try {
      pending.identity = config.identity.identify(pending.record);
      if (pending.identity == null) {
        pending.noIdentity = "the identity extractor found no id in the record";
      }
    } catch (RuntimeException e) {
      pending.noIdentity = "the identity extractor failed: " + e;
    }
    return pending;
  }

  /**
   * The event of a {@code check} or {@code claim}: with {@link EventTimeSource#RECORD_TIMESTAMP} the record's
   * timestamp is its event time (none if the record has none: a timestamp of -1); a claim names
   * this consumer's instance id as its claimer.
   */
  DedupEvent decision(PendingRecord<K, V> pending) {
    RecordIdentity id = pending.identity;
    DedupEvent e = new DedupEvent(id.id()).setKey(id.key()).setPayloadHash(id.payloadHash());
    long timestampMs = pending.record.timestamp();
    if (config.recordTimestamps && timestampMs >= 0) {
      e.setEventTimeMs(timestampMs);
    }
    return config.effectFirst ? e.setClaimer(config.claimer) : e;
  }

  /** The event of a {@code commit} or {@code release} of the record's claim. */
  static DedupEvent claim(PendingRecord<?, ?> pending) {
    return new DedupEvent(pending.identity.id()).setKey(pending.identity.key())
        .setClaimToken(pending.decision.claimToken());
  }

  /** The event of the check that records the id of a lapsed claim: the full identity, no event time. */
  static DedupEvent lateCheck(PendingRecord<?, ?> pending) {
    return new DedupEvent(pending.identity.id()).setKey(pending.identity.key())
        .setPayloadHash(pending.identity.payloadHash());
  }
}
