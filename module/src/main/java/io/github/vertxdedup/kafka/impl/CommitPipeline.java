package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.vertx.core.eventbus.ReplyException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The way out of a partition's records: the claims' commits of effect-first mode, and the committable offset the
 * {@link PartitionOwner} publishes to the poll thread in every mode.
 *
 * <h2>Committable offsets</h2>
 * A record's offset becomes committable once the record is done with (handled, dropped as a duplicate or
 * dead-lettered) and, in effect-first mode, its claim's commit is answered. {@link #committableNext} is the offset
 * after the last committable record of an unbroken prefix: it never passes a record whose commit is unanswered, so the
 * poll thread never commits to Kafka past a record the window may not remember. Each committable record is counted in
 * {@code dedup.kafka.records} and lowers {@link #buffered}; reaching the resume mark wakes the poll thread.
 *
 * <h2>Effect-first commits are pipelined</h2>
 * Once a record's handler has succeeded the record leaves the owner's queue for {@code committing}, and its claim's
 * commit is sent with the others that became ready in the same pump pass as one {@code commitBatch} (answered per id);
 * the next record's handler runs without waiting for the reply. Without a journal the reply comes at once; with one,
 * after the journal write, so the handler does not wait for the disk. What a crash can repeat grows from one record to
 * the records whose commit was unanswered, all of them handled and none of them committed to Kafka: still "a crash can
 * repeat an effect, never lose it". The pipeline is bounded ({@link #full}): a handler waits while
 * {@code maxUnansweredCommits} commits are unanswered, so a kill repeats at most {@code maxUnansweredCommits + 1}
 * records per partition. A later record of the same id is decided by a request made after the commit was sent (the
 * owner {@link #flush flushes} before every decision), on the same context, so the window sees the commit first.
 *
 * <h2>A lapsed claim</h2>
 * A commit refused with 409 is a claim whose lease ended before its commit (a handler slower than half a lease can
 * outlast it): the effect is applied and the id not remembered. The pipeline then checks the record's identity, which
 * records the id unless another delivery claimed it since the lease ended ({@link #recordLate}).
 *
 * <p>Event loop of its owner only, except {@link #committableNext}, {@link #buffered} and {@link #received}, which
 * any thread may call.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class CommitPipeline<K, V> {

  /** Logged under the owner's name: one logger for a partition's records. */
  private static final Logger LOG = LoggerFactory.getLogger(PartitionOwner.class);

  private final OwnerConfig<K, V> config;
  private final OwnerLoop loop;
  private final LocalPartition client;
  private final TopicPartition tp;
  private final KafkaMetrics metrics;
  private final FailurePolicy<K, V> failures;
  /** The owner's pump, run when commits were answered: the next handler may start. */
  private final Runnable pump;
  /** Where the ids the commits record go for the changelog topic, or null without one. */
  private final ChangelogBuffer changelog;

  /** Records handed over by the poll thread and not yet committable. */
  private final AtomicInteger buffered = new AtomicInteger();
  private volatile long committableNext = -1;
  /** The offset after the last committable record, whether or not an earlier one still waits in committing. */
  private long lastCommittableNext = -1;
  /** Effect-first: records handled (or dead-lettered) whose claim's commit is unanswered, in offset order. */
  private final ArrayDeque<PendingRecord<K, V>> committing = new ArrayDeque<>();
  /** Effect-first: the tail of {@code committing} whose commit is not sent yet; sent as one commitBatch per pass. */
  private final List<PendingRecord<K, V>> toCommit = new ArrayList<>();
  /** Effect-first: the earliest lease end of the claims in {@code toCommit}; {@code Long.MAX_VALUE} when empty. */
  private long toCommitLeaseEndMs = Long.MAX_VALUE;

  CommitPipeline(OwnerConfig<K, V> config, OwnerLoop loop, LocalPartition client, TopicPartition tp,
      KafkaMetrics metrics, FailurePolicy<K, V> failures, ChangelogBuffer changelog, Runnable pump) {
    this.config = config;
    this.loop = loop;
    this.client = client;
    this.tp = tp;
    this.metrics = metrics;
    this.failures = failures;
    this.pump = pump;
    this.changelog = changelog;
  }

  // --- any thread --------------------------------------------------------------------------------------------------

  /** @return the offset after the last record of the committable prefix, or -1 if none; any thread */
  long committableNext() {
    return committableNext;
  }

  /** @return records handed over and not yet committable; any thread */
  int buffered() {
    return buffered.get();
  }

  /** Counts {@code n} records handed over by the poll thread. Any thread. */
  void received(int n) {
    buffered.addAndGet(n);
  }

  // --- the owner's event loop --------------------------------------------------------------------------------------

  /** Forgets {@code n} records handed over to an owner that no longer takes them (fenced or stopped). */
  void discarded(int n) {
    buffered.addAndGet(-n);
  }

  /** @return true while {@code maxUnansweredCommits} commits are unsent or unanswered: no handler may start */
  boolean full() {
    return committing.size() >= config.maxUnansweredCommits;
  }

  /** @return true if no commit is unsent or unanswered */
  boolean isEmpty() {
    return committing.isEmpty();
  }

  /** @return the earliest lease end of the claims whose commit is not sent yet, or {@code Long.MAX_VALUE} if none */
  long unsentLeaseEndMs() {
    return toCommitLeaseEndMs;
  }

  /** A record that needs no commit (record-first, a duplicate, most dead letters) is done with. */
  void committable(PendingRecord<K, V> pending) {
    lastCommittableNext = Math.max(lastCommittableNext, pending.offset() + 1);
    PendingRecord<K, V> waiting = committing.peek();
    // Never publish past a record whose commit is unanswered: every record before it is committable.
    committableNext = waiting == null ? lastCommittableNext : Math.max(committableNext, waiting.offset());
    if (buffered.decrementAndGet() == config.resumeMark) {
      config.wakePoll.run();
    }
    metrics.records.increment();
  }

  /**
   * Effect-first: a record was handled (or dead-lettered holding its claim). Its commit is sent at the end of this
   * pump pass (or before the next decision) with the others that became ready in the pass.
   */
  void add(PendingRecord<K, V> pending) {
    committing.add(pending);
    toCommit.add(pending);
    toCommitLeaseEndMs = Math.min(toCommitLeaseEndMs, pending.leaseEndMs);
  }

  /** Sends the commits not sent yet as one {@code commitBatch} (chunks of {@code maxBatch}). */
  void flush() {
    toCommitLeaseEndMs = Long.MAX_VALUE;
    while (!toCommit.isEmpty()) {
      int n = Math.min(config.maxBatch, toCommit.size());
      List<PendingRecord<K, V>> batch = new ArrayList<>(toCommit.subList(0, n));
      toCommit.subList(0, n).clear();
      commitClaims(batch);
    }
  }

  /**
   * Commits the claims of handled records in one request. A per-id 409 is a claim that lapsed before its commit:
   * counted in {@code dedup.kafka.lapsed.claims}, and the id is then recorded with a check if it can be
   * ({@link #recordLate}); the record is committable when that is answered. A failed request (503, a lost reply) or a
   * per-id failure other than 409 is retried after a backoff for those records.
   */
  private void commitClaims(List<PendingRecord<K, V>> batch) {
    List<DedupEvent> events = new ArrayList<>(batch.size());
    for (PendingRecord<K, V> pending : batch) {
      events.add(RecordEvents.claim(pending));
    }
    loop.whenComplete(client.commitBatch(events), ar -> {
      List<PendingRecord<K, V>> retry;
      if (ar.failed()) {
        retry = batch;
      } else {
        retry = null;
        List<DedupCommitResult> results = ar.result();
        for (int i = 0; i < batch.size(); i++) {
          PendingRecord<K, V> pending = batch.get(i);
          DedupCommitResult r = results.get(i);
          if (r.committed()) {
            pending.commitAnswered = true;
            recorded(pending);
          } else if (r.failureCode() == DedupFailure.STATE_CONFLICT) {
            metrics.lapsedClaims.increment();
            recordLate(pending, r.message());
          } else {
            if (retry == null) {
              retry = new ArrayList<>();
            }
            retry.add(pending);
          }
        }
      }
      if (retry != null) {
        metrics.unavailable.increment();
        List<PendingRecord<K, V>> again = retry;
        loop.afterDelay(failures.backoffMs(++again.get(0).requestRetries), () -> commitClaims(again));
      }
      publishAnswered();
    });
  }

  /**
   * The commit of a handled record was refused because its claim had lapsed (the handler, or the dead-letter handler
   * after it, outlasted the lease): the effect is applied and the id not remembered. Checks the record's full identity
   * (id, key, payload hash), which records the id (journaled as an accepted id, kept across a restart) if no other
   * delivery claimed or committed it since the lease ended; counted in {@code dedup.kafka.lapsed.claims.recorded}.
   * Otherwise the other delivery decides: a DUPLICATE was committed by it, an IN_FLIGHT is held by it, and either may
   * have applied the effect a second time. Logged at WARN with the id either way. The record is committable when
   * the check is answered; a 503 or a lost reply is retried after a backoff.
   *
   * @param refusal the commit's 409 message
   */
  private void recordLate(PendingRecord<K, V> pending, String refusal) {
    loop.whenComplete(client.check(RecordEvents.lateCheck(pending)), ar -> {
      if (ar.failed() && !(ar.cause() instanceof ReplyException re && re.failureCode() == DedupFailure.BAD_REQUEST)) {
        metrics.unavailable.increment();
        loop.afterDelay(failures.backoffMs(++pending.requestRetries), () -> recordLate(pending, refusal));
        return;
      }
      String lapsed = tp + ": the claim of id '" + pending.identity.id() + "' at offset " + pending.offset()
          + " lapsed before its commit (" + refusal + "; a handler call must take less than half of leaseMs="
          + config.leaseMs + "): its effect is applied; ";
      if (ar.failed()) {
        LOG.warn(lapsed + "the id could not be recorded: " + ar.cause());
      } else if (ar.result().verdict() == DedupVerdict.ACCEPTED) {
        metrics.lapsedClaimsRecorded.increment();
        recorded(pending);
        LOG.warn(lapsed + "no other delivery had claimed it, and it is now remembered");
      } else {
        LOG.warn(lapsed + "another delivery of it is " + ar.result().verdict() + " (held or committed since the lease"
            + " ended), so the effect may be applied twice");
      }
      pending.commitAnswered = true;
      publishAnswered();
    });
  }

  /** The window now remembers the record's id: its entry goes to the changelog with the offset commit past it. */
  private void recorded(PendingRecord<K, V> pending) {
    if (changelog != null) {
      changelog.accepted(pending, config.clock.nowMs(), config.windowMs);
    }
  }

  /** Commits were answered: makes the run of answered commits at the head of {@code committing} committable. */
  private void publishAnswered() {
    PendingRecord<K, V> head;
    while ((head = committing.peek()) != null && head.commitAnswered) {
      committing.poll();
      committable(head);
    }
    pump.run();
  }
}
