package io.github.vertxdedup.kafka;

/**
 * What the consumer sends its window as a record's event time ({@code eventTimeMs}), which lets the window tell a
 * record older than it covers (older than now minus the window {@code W}, or older than the moment the
 * window's memory began) from a new one. See {@link UncoveredRecordPolicy} for what the consumer does with such a
 * record.
 */
public enum EventTimeSource {

  /**
   * The record's Kafka timestamp (the producer's create time, or the broker's append time, by the topic's
   * {@code message.timestamp.type}). A record without one ({@code KafkaConsumerRecord.timestamp()} is -1) sends no
   * event time; a timestamp after now counts as now (a producer's clock may run ahead of the consumer's).
   */
  RECORD_TIMESTAMP,

  /**
   * No event time: every record is judged by its arrival alone, so an old copy of an id the window no longer
   * remembers is accepted like a first sighting, and {@link UncoveredRecordPolicy} never applies. For topics whose
   * timestamps mean nothing (set by a producer with a wrong clock, or rewritten on the way).
   */
  NONE
}
