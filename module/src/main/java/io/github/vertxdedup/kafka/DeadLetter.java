package io.github.vertxdedup.kafka;

import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import java.util.Objects;

/**
 * A record the consumer will not hand to the record handler, with the reason. Its offset advances once the
 * dead-letter handler's future succeeds; its id stays remembered if the window recorded it (after
 * {@link Reason#HANDLER_FAILED} and {@link Reason#UNCOVERED}; a {@link Reason#CONFLICT} keeps the first sighting's), so
 * the dead-letter path owns it.
 *
 * @param record the record, as the record handler would have received it
 * @param reason why
 * @param detail a message that says what happened (verdict times, the handler's failure, the bad field)
 * @param attempts handler attempts made (0 unless {@link Reason#HANDLER_FAILED})
 * @param cause the last failure of the handler, or null
 * @param <K> the record key type
 * @param <V> the record value type
 */
public record DeadLetter<K, V>(KafkaConsumerRecord<K, V> record, Reason reason, String detail, int attempts,
    Throwable cause) {

  /**
   * Validates the components.
   *
   * @param record the record, as the record handler would have received it
   * @param reason why
   * @param detail a message that says what happened (verdict times, the handler's failure, the bad field)
   * @param attempts handler attempts made (0 unless {@link Reason#HANDLER_FAILED})
   * @param cause the last failure of the handler, or null
   * @throws NullPointerException if {@code record}, {@code reason} or {@code detail} is null
   */
  public DeadLetter {
    Objects.requireNonNull(record, "record");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(detail, "detail");
  }

  /** Why a record went to the dead-letter handler. */
  public enum Reason {
    /** The identity extractor found no id (or threw). */
    NO_IDENTITY,
    /** The id or key was refused by the window (too long, unpaired surrogates): a 400 naming the field. */
    INVALID_IDENTITY,
    /** The id is remembered with another payload hash. */
    CONFLICT,
    /** The handler failed {@code maxAttempts} times. */
    HANDLER_FAILED,
    /**
     * The window did not cover the record (its event time is older than now minus the window, or older than
     * the window's memory) and {@link DedupKafkaOptions#getUncoveredRecords()} is
     * {@link UncoveredRecordPolicy#DEAD_LETTER}. The detail names the record's age and the window, in milliseconds.
     * The id is recorded: a later copy is a duplicate.
     */
    UNCOVERED,
    /**
     * The window answered a verdict the consumer does not handle (for example {@code UNKNOWN}, which the consumer's
     * windows never answer: they accept uncovered records and leave the choice to {@link UncoveredRecordPolicy}).
     * A fault of the window or of its configuration: the record is not handled and not skipped silently. The detail
     * names the verdict.
     */
    UNEXPECTED_VERDICT
  }
}
