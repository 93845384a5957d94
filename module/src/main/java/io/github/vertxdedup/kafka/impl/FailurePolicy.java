package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.kafka.DeadLetter;
import io.github.vertxdedup.kafka.DeadLetterHandler;
import io.vertx.core.Future;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a {@link PartitionOwner} does when something fails for a record: how long it backs off before a retry, how
 * many handler calls a record gets, what a handler that found nobody to hand the record to waits for, and the
 * dead-letter path (the reason, the detail the application reads, and the
 * delivery to the {@link DeadLetterHandler}, retried until it succeeds).
 *
 * <p>Event loop of its owner only.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class FailurePolicy<K, V> {

  private static final Logger LOG = LoggerFactory.getLogger(PartitionOwner.class);

  private final OwnerConfig<K, V> config;
  private final OwnerLoop loop;
  private final TopicPartition tp;
  private final KafkaMetrics metrics;
  /** Handler calls in a row that found nobody to hand the record to ({@link #waitForATaker}); 0 when not waiting. */
  private int takerRetries;

  FailurePolicy(OwnerConfig<K, V> config, OwnerLoop loop, TopicPartition tp, KafkaMetrics metrics) {
    this.config = config;
    this.loop = loop;
    this.tp = tp;
    this.metrics = metrics;
  }

  /**
   * @param attempt the retry, from 1
   * @return the delay before it: {@code backoffInitialMs} doubled per earlier retry, at most {@code backoffMaxMs}, in
   *     milliseconds
   */
  long backoffMs(int attempt) {
    int shift = Math.min(Math.max(attempt - 1, 0), 30);
    long d = config.backoffInitialMs << shift;
    return d <= 0 || d > config.backoffMaxMs ? config.backoffMaxMs : d;
  }

  /**
   * @param expiresAtMs when the other delivery's claim lapses, on the injected clock, epoch milliseconds
   * @param nowMs now, on the same clock
   * @return how long a record found IN_FLIGHT waits before it is decided again: until just after that lease ends,
   *     at least 1 and at most {@code backoffMaxMs} milliseconds
   */
  long inFlightWaitMs(long expiresAtMs, long nowMs) {
    return Math.min(config.backoffMaxMs, Math.max(1, expiresAtMs - nowMs + 1));
  }

  /**
   * @param cause why a handler call failed
   * @return true if it failed because nobody was there to take the record: a {@link ReplyException} of
   *     {@link ReplyFailure#NO_HANDLERS}, which an event-bus request fails with while no consumer is registered at its
   *     address (the application's consumer not deployed yet, or restarting). The record was handed to nobody, so no
   *     attempt is spent: it waits, its partition paused, and is handed over again after a backoff
   *     ({@link #waitForATaker}). Only the handler's own failure is looked at, not its causes.
   */
  static boolean nobodyToHandTo(Throwable cause) {
    return cause instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS;
  }

  /**
   * The handler found nobody to hand the record to ({@link #nobodyToHandTo}): the first time in a row logs a WARN
   * naming the partition, the offset and the failure (which names the address); the next ones only back off longer.
   *
   * @param pending the head record
   * @param cause the handler's failure
   * @return the delay before the handler is called again, in milliseconds: {@code backoffInitialMs} doubled per retry
   *     in a row, at most {@code backoffMaxMs}
   */
  long waitForATaker(PendingRecord<?, ?> pending, Throwable cause) {
    if (takerRetries == 0) {
      LOG.warn("{}: nobody to hand the record at offset {} to ({}); the partition is paused and the record is handed "
          + "over again with backoff, without using up its attempts", tp, pending.offset(), cause.getMessage());
    }
    return backoffMs(++takerRetries);
  }

  /** @return true while the handler last found nobody to hand the record to ({@link #waitForATaker}) */
  boolean waitingForATaker() {
    return takerRetries > 0;
  }

  /**
   * A handler call ended otherwise than with nobody to hand to: the wait for a taker, if any, is over.
   *
   * @return true if there was one (the partition may be resumed)
   */
  boolean takerFound() {
    if (takerRetries == 0) {
      return false;
    }
    LOG.info("{}: the record handler reached a taker again after {} retries", tp, takerRetries);
    takerRetries = 0;
    return true;
  }

  /** @return true if a record whose handler failed {@code attempts} times has no call left: dead-letter it */
  boolean handlerAttemptsSpent(int attempts) {
    return attempts >= config.maxAttempts;
  }

  /**
   * @return true if a record dead-lettered for {@code reason} in effect-first mode still holds its claim and has it
   *     committed after the dead letter, so its id stays remembered (a failed handler or a record the window's memory
   *     did not cover; the other reasons hold no claim)
   */
  static boolean commitsClaimAfter(DeadLetter.Reason reason) {
    return reason == DeadLetter.Reason.HANDLER_FAILED || reason == DeadLetter.Reason.UNCOVERED;
  }

  /**
   * Hands a record to the dead-letter handler (or logs it at WARN without one), counting it once in
   * {@code dedup.kafka.dead.letters{reason}}; a failed delivery is retried after a backoff until it succeeds. Then
   * runs {@code delivered} on the owner's context, unless the owner stopped meanwhile.
   */
  void deadLetter(PendingRecord<K, V> pending, DeadLetter.Reason reason, String detail, Throwable cause,
      Runnable delivered) {
    if (pending.deadLetterTries == 0) {
      metrics.deadLetters(reason).increment();
    }
    pending.deadLetterTries++;
    Future<Void> f;
    if (config.deadLetters == null) {
      LOG.warn("{}: dead letter at offset {} ({}), and no dead-letter handler: {}", tp, pending.offset(), reason,
          detail);
      f = Future.succeededFuture();
    } else {
      f = call(() -> config.deadLetters.handle(
          new DeadLetter<>(pending.record, reason, detail, pending.attempts, cause)),
          "the dead-letter handler returned null");
    }
    loop.whenComplete(f, ar -> {
      if (ar.failed()) {
        LOG.warn("{}: the dead-letter handler failed at offset {}, retrying: {}", tp, pending.offset(),
            String.valueOf(ar.cause()));
        loop.afterDelay(backoffMs(pending.deadLetterTries),
            () -> deadLetter(pending, reason, detail, cause, delivered));
        return;
      }
      delivered.run();
    });
  }

  /**
   * Record-first: the owner stops with {@code n} checked records (their ids recorded) that no commit covered, so their
   * handlers never run here; counts them in {@code dedup.kafka.unhandled} and logs it at WARN. The next owner reads
   * them again, and where its window has their ids, drops them as duplicates.
   *
   * @param n the records, 0 or more
   */
  void leftUnhandled(int n) {
    leftUnhandled(metrics, tp, n);
  }

  /**
   * As {@link #leftUnhandled(int)}, for records a wrapped consumer could not hand to a next owner of its own.
   *
   * @param metrics the partition's meters
   * @param tp the partition
   * @param n the records, 0 or more
   */
  static void leftUnhandled(KafkaMetrics metrics, TopicPartition tp, int n) {
    if (n > 0) {
      metrics.unhandled.increment(n);
      LOG.warn("{}: {} records checked (their ids recorded) were not handled, no commit covering them when their"
          + " owner stopped; where the next owner's window has their ids, their effects are lost", tp, n);
    }
  }

  /**
   * Calls an application's handler (the record handler or the dead-letter handler).
   *
   * @param handler the call
   * @param returnedNull the message of the {@link NullPointerException} the result fails with if the handler returned
   *     null instead of a future
   * @return the handler's future; a failed one if it threw or returned null
   */
  static Future<Void> call(Supplier<Future<Void>> handler, String returnedNull) {
    try {
      Future<Void> f = handler.get();
      return f != null ? f : Future.failedFuture(new NullPointerException(returnedNull));
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
  }

  // --- the details of the dead letters -----------------------------------------------------------------------------

  /** The detail of a {@link DeadLetter.Reason#HANDLER_FAILED} dead letter. */
  static String handlerFailedDetail(int attempts, Throwable lastCause) {
    return "the handler failed " + attempts + " times; last: " + lastCause;
  }

  /** The detail of a {@link DeadLetter.Reason#CONFLICT} dead letter: the first sighting's times, in milliseconds. */
  static String conflictDetail(PendingRecord<?, ?> pending) {
    return "id '" + pending.identity.id() + "' is remembered with another payload hash (first seen at "
        + pending.decision.firstSeenMs() + " ms, remembered until " + pending.decision.expiresAtMs() + " ms)";
  }

  /**
   * The detail of an {@link DeadLetter.Reason#UNEXPECTED_VERDICT} dead letter: the verdict, the request it answered
   * and the id.
   */
  static String unexpectedVerdictDetail(PendingRecord<?, ?> pending, boolean effectFirst) {
    DedupVerdict verdict = pending.decision.verdict();
    return "the window answered " + verdict + " to the " + (effectFirst ? "claim" : "check") + " of id '"
        + pending.identity.id() + "', a verdict this consumer does not handle (" + pending.decision + ")";
  }

  /**
   * The detail of an {@link DeadLetter.Reason#UNCOVERED} dead letter: the record's age (now minus its timestamp) and
   * the window, in milliseconds, and which limit it passed: older than the window; within it but older than the window
   * reaches back at bucket precision (from the start of the bucket after {@code now - W}); or older than the window's
   * memory (a window that began after the record: a first start, a new group, a window without a journal in a new
   * process).
   *
   * @param record the record (it has a timestamp: without one no event time was sent, and every record is covered)
   * @param nowMs now, from the injected clock
   * @param windowMs the window {@code W} in milliseconds
   * @param bucketMs the window's bucket width in milliseconds
   * @return the detail
   */
  static String notCoveredDetail(KafkaConsumerRecord<?, ?> record, long nowMs, long windowMs, long bucketMs) {
    long ageMs = nowMs - record.timestamp();
    String why;
    if (ageMs > windowMs) {
      why = "older than the window (" + windowMs + " ms)";
    } else if (ageMs > windowMs - bucketMs) {
      // The window reaches back to the start of the bucket after now - W (docs/semantics.md).
      why = "older than the window reaches back (" + windowMs + " ms, at bucket precision of " + bucketMs + " ms)";
    } else {
      why = "inside the window (" + windowMs + " ms) but older than the window's memory, which began later";
    }
    return "the window does not cover the record: its timestamp is " + ageMs + " ms old, " + why
        + ", and its id is not remembered";
  }
}
