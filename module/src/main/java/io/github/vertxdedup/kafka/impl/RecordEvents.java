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
   * @return {@code it}
   */
  PendingRecord<K, V> identify(PendingRecord<K, V> it) {
    try {
      it.identity = config.identity.identify(it.record);
      if (it.identity == null) {
        it.noIdentity = "the identity extractor found no id in the record";
      }
    } catch (RuntimeException e) {
      it.noIdentity = "the identity extractor failed: " + e;
    }
    return it;
  }

  /**
   * The event of a {@code check} or {@code claim}: with {@link EventTimeSource#RECORD_TIMESTAMP} the record's
   * timestamp is its event time (none if the record has none, {@code ConsumerRecord.NO_TIMESTAMP}); a claim names
   * this consumer's instance id as its claimer.
   */
  DedupEvent decision(PendingRecord<K, V> it) {
    RecordIdentity id = it.identity;
    DedupEvent e = new DedupEvent(id.id()).setKey(id.key()).setPayloadHash(id.payloadHash());
    long timestampMs = it.record.timestamp();
    if (config.recordTimestamps && timestampMs >= 0) {
      e.setEventTimeMs(timestampMs);
    }
    return config.effectFirst ? e.setClaimer(config.claimer) : e;
  }

  /** The event of a {@code commit} or {@code release} of the record's claim. */
  static DedupEvent claim(PendingRecord<?, ?> it) {
    return new DedupEvent(it.identity.id()).setKey(it.identity.key()).setClaimToken(it.decision.claimToken());
  }

  /** The event of the check that records the id of a lapsed claim: the full identity, no event time. */
  static DedupEvent lateCheck(PendingRecord<?, ?> it) {
    return new DedupEvent(it.identity.id()).setKey(it.identity.key()).setPayloadHash(it.identity.payloadHash());
  }
}
