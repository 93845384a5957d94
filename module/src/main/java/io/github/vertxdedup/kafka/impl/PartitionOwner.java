package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.kafka.DeadLetter;
import io.github.vertxdedup.kafka.UncoveredRecordPolicy;
import io.github.vertxdedup.kafka.impl.HeadWait.State;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The record pipeline of one assigned topic-partition: takes its records from the poll thread, asks its window for a
 * decision (in batches), runs the handler one record at a time in offset order, and hands each record on to its
 * {@link CommitPipeline}, which publishes the committable offset for the poll thread to commit. The records wait in
 * its {@link RecordQueue}; what the head waits for is its {@link HeadWait}; the runs it sends to the window, and
 * their answers, are its {@link RunDecisions}; effect-first claims keep half a lease
 * ahead of their handler by the rule of {@link ClaimLeases}; retries and dead letters follow its
 * {@link FailurePolicy}; everything it shares with the consumer's other owners is in its {@link OwnerConfig}.
 *
 * <h2>Threads, and the in-process window</h2>
 * The owner runs on the context of its window's partition and calls the window in-process ({@link LocalPartition}):
 * the same decisions, journal writes and failure codes as the event-bus service, without an event-bus round trip
 * (reply registration, timeout timer, two thread hops) per decision batch and per commit batch. A request is decided when it is made, and its future is already complete
 * unless its reply waits for a journal write. Everything but {@link #offer}, {@link #fence}, {@link #stop},
 * {@link #committableNext}, {@link #buffered}, {@link #wantsPause}, {@link #wantedNext}, {@link #committed},
 * {@link #refuseCommits}, {@link #stopLeaving} and {@link #takeOver} runs on that context. Those are called by the
 * poll thread (or the wrapped consumer's context); they only hand work to the context or read volatile fields.
 *
 * <h2>A record's way</h2>
 * The head of the queue is the only record whose handler may run. A record is decided when it reaches the head
 * undecided: the run of undecided records from the head goes to the window in one {@code checkBatch} or
 * {@code claimBatch}; in record-first mode also earlier, in a run checked ahead while the runs before it wait for
 * their offset commits (below). The pump runs on a {@link Trampoline}, so completions that arrive while it runs ask
 * it to go again instead of recursing. A record done with (handled, dropped as a duplicate or dead-lettered) leaves the queue:
 * it is committable at once, or, holding an effect-first claim, once the commit pipeline has the claim's commit
 * answered; the next record's handler does not wait for that reply. A record the window's memory does not cover
 * ({@link PendingRecord.Coverage#NOT_COVERED}) is handled and counted, or dead-lettered, by
 * {@link UncoveredRecordPolicy}. Any verdict but ACCEPTED, DUPLICATE, CONFLICT or IN_FLIGHT fails closed: the record
 * goes to the dead-letter path ({@link DeadLetter.Reason#UNEXPECTED_VERDICT}), never committable unseen. In INBOX mode
 * the owner claims and commits as in effect-first; the handler call is the record's inbox transaction
 * ({@link InboxCalls}), whose conflict gives the claim back and dead-letters the record.
 *
 * <h2>Record-first commits before its handlers</h2>
 * An accepted record's handler starts only once Kafka has acknowledged, for this member of the group, a commit of an
 * offset past the record ({@link OffsetGate}). When the head is an accepted record no acknowledged commit covers, the
 * owner publishes the end of its decided prefix as the committable offset and wakes the poll thread, which commits it
 * at once and hands the acknowledgement back ({@link #committed}); one commit covers a whole decided run. While fewer
 * than {@code maxUnansweredOffsetCommits} commits are awaited, the owner checks the next run and asks for its commit
 * too, so a commit's round trip overlaps the next runs instead of stopping the partition; what a kill loses is those
 * runs, checked and not handled. A run checked ahead whose decision fails is left undecided for the head, which
 * decides it again with its own backoff and bad-identity search. So the next
 * owner of the partition (another machine, after this one is lost) starts after every record whose effect this owner
 * may have applied, and an owner no longer in the group's generation, whose commit is refused, handles none of what it
 * decided since ({@link #refuseCommits}: the partition was lost, or a commit on revocation was refused).
 *
 * <h2>Fence</h2>
 * Once fenced (revocation) nothing new is decided. What was decided is finished: the running handler and its
 * commit, and in record-first mode every record already checked (its id is recorded: skipping it would lose its
 * effect; see {@link RecordQueue#checkedBehindHead}); in effect-first mode the claims not yet started are released,
 * so the next owner can claim them at once. The fence completes when no decided record is left; the poll thread
 * bounds the wait. How far the owner is in its life is its {@link OwnerLoop.Phase}.
 */
final class PartitionOwner<K, V> {

  private static final Logger LOG = LoggerFactory.getLogger(PartitionOwner.class);

  private final OwnerConfig<K, V> config;
  private final TopicPartition tp;
  private final LocalPartition client;
  private final KafkaMetrics metrics;
  private final OwnerLoop loop;
  private final RecordEvents<K, V> events;
  private final FailurePolicy<K, V> failures;
  private final CommitPipeline<K, V> commits;
  private final ClaimLeases leases;
  private final Trampoline trampoline = new Trampoline(this::pass);
  /** The records not done with, in offset order; only the head's handler may run. */
  private final RecordQueue<K, V> queue;
  /** What the head of the queue waits for. */
  private final HeadWait head;
  /** The accepted ids the next offset commits write to the changelog topic, or null without one. */
  private final ChangelogBuffer changelog;
  /** Record-first: a handler starts only once Kafka acknowledged a commit past its record. */
  private final OffsetGate gate = new OffsetGate();
  /** The runs sent to the window, and their answers. */
  private final RunDecisions<K, V> decisions;
  /** Record-first: what this consumer's previous owner of the partition checked and left unhandled, or null. */
  private LeftUnhandled handedOver;

  /**
   * @param config what the consumer's owners share
   * @param tp the topic-partition
   * @param context where the owner runs: the context of its window's partition
   * @param client the window, called in-process
   * @param metrics the partition's meters
   */
  PartitionOwner(OwnerConfig<K, V> config, TopicPartition tp, Context context, LocalPartition client,
      KafkaMetrics metrics) {
    this.config = config;
    this.tp = tp;
    this.client = client;
    this.metrics = metrics;
    this.loop = new OwnerLoop(config.vertx, context);
    this.events = new RecordEvents<>(config);
    this.failures = new FailurePolicy<>(config, loop, tp, metrics);
    this.changelog = config.changelog ? new ChangelogBuffer() : null;
    this.commits = new CommitPipeline<>(config, loop, client, tp, metrics, failures, changelog, this::pump);
    this.leases = new ClaimLeases(config.clock, config.leaseMs);
    this.queue = new RecordQueue<>(config.effectFirst, config.maxBatch);
    this.head = new HeadWait(loop, config.wakePoll);
    this.decisions = new RunDecisions<>(new RunDecisions.Parts<>(config, tp, client, metrics, loop, events, failures,
        commits, leases, queue, head, gate), changelog, this::pump,
        (pending, detail) -> deadLetter(pending, DeadLetter.Reason.INVALID_IDENTITY, detail, null));
  }

  /** @return the partition's meters; any thread */
  KafkaMetrics metrics() {
    return metrics;
  }

  // --- called by the poll thread -----------------------------------------------------------------------------------

  /**
   * Stops the owner: nothing more is decided, handled or made committable, and its timer is cancelled; record-first
   * records checked and not handled are counted in {@code dedup.kafka.unhandled}. Any thread.
   *
   * @return completes once stopped, on the owner's context
   */
  Future<Void> stop() {
    return stopLeaving().map(left -> {
      failures.leftUnhandled(left.size());
      return null;
    });
  }

  /**
   * Stops the owner as {@link #stop} does, without counting what it leaves: the caller hands it to the partition's
   * next owner ({@link #takeOver}) or counts it. Any thread.
   *
   * @return the record-first records checked and not handled (with those handed to this owner that it did not
   *     reach), on the owner's context; empty if already stopped
   */
  Future<LeftUnhandled> stopLeaving() {
    Promise<LeftUnhandled> p = Promise.promise();
    loop.execute(() -> {
      LeftUnhandled left = LeftUnhandled.of(List.of());
      if (!loop.stopped()) {
        left = LeftUnhandled.of(queue.checkedUnhandled(head.handlerStarted() ? queue.head() : null));
        left.addAll(handedOver);
      }
      loop.stop();
      head.cancelTimer();
      p.complete(left);
    });
    return p.future();
  }

  /**
   * Takes the records the partition's previous owner in this consumer checked and left unhandled: when the window
   * answers one of them {@code DUPLICATE}, it is handled instead. Before the first {@link #offer}; any thread.
   *
   * @param left the records, their offsets at or after the one this owner reads from
   */
  void takeOver(LeftUnhandled left) {
    loop.execute(() -> handedOver = left);
  }

  /**
   * @return the offset after the last record of the committable prefix (the offset to commit to Kafka), or -1 if no
   *     record is committable yet; any thread
   */
  long committableNext() {
    return commits.committableNext();
  }

  /**
   * Record-first: the offset this owner waits to see committed before the handlers of its decided records run (the
   * offset after its decided prefix), or -1. Any thread.
   */
  long wantedNext() {
    return gate.wantedNext();
  }

  /**
   * Kafka acknowledged a commit of {@code next} for this partition, made by this consumer's member of the group: in
   * record-first mode the handlers of the records before it may run ({@link OffsetGate}). Any thread.
   *
   * @param next the offset committed
   */
  void committed(long next) {
    loop.execute(() -> {
      if (gate.acked(next)) {
        pump();
      }
    });
  }

  /**
   * No commit of this partition is acknowledged any more (it was lost, or a commit on its revocation was refused):
   * in record-first mode the decided records no commit covers are never handled here; they are the next owner's. Any
   * thread.
   */
  void refuseCommits() {
    loop.execute(() -> {
      gate.shut();
      pump();
    });
  }

  /** @return records handed over and not yet committable; any thread */
  int buffered() {
    return commits.buffered();
  }

  /** @return the accepted ids not yet in a committed changelog transaction, or null without a changelog; any thread */
  ChangelogBuffer changelog() {
    return changelog;
  }

  /** @return true while the head record waits for a lease or for the window (503); any thread */
  boolean wantsPause() {
    return head.wantsPause();
  }

  /**
   * Hands records of one poll over, in offset order. Poll thread.
   *
   * @param records the records of this partition from one poll, each wrapped once for the application
   */
  void offer(List<KafkaConsumerRecord<K, V>> records) {
    int n = records.size();
    commits.received(n);
    loop.execute(() -> {
      if (loop.fenced()) {
        commits.discarded(n);
        return;
      }
      for (KafkaConsumerRecord<K, V> r : records) {
        queue.add(events.identify(new PendingRecord<>(r)));
      }
      pump();
    });
  }

  /**
   * Stops deciding and finishes what was decided. Poll thread.
   *
   * @return completes when no decided record is left; the caller bounds the wait
   */
  Future<Void> fence() {
    Promise<Void> p = Promise.promise();
    loop.execute(() -> {
      loop.fence(p);
      head.endBackoffToDecide(queue.head(), () -> !queue.checkedBehindHead());
      if (config.effectFirst) {
        decisions.releaseUnstartedClaims(head.idle() ? null : queue.head());
      }
      pump();
    });
    return p.future();
  }

  // --- the pump (event loop) ---------------------------------------------------------------------------------------

  private void pump() {
    if (trampoline.run()) {
      loop.completeFenceIf(this::drained);
    }
  }

  /** One pass of the pump: the head as far as it goes, then the commits that became ready in the pass. */
  private void pass() {
    advance();
    // Commits answered at once (an in-process window without a journal write to wait for) pump again.
    commits.flush();
  }

  /**
   * @return true if, fenced, no decided record is left: the head waits for nothing, no commit is unanswered; once the
   *     gate is shut, the records it holds are left to the next owner
   */
  private boolean drained() {
    return head.idle() && commits.isEmpty() && (queue.nothingDecided() || gate.isShut() && !gate.covers(
        queue.head().offset()));
  }

  /** Takes the head on until it must wait: decides it, drops it, runs its handler or dead-letters it. */
  private void advance() {
    while (head.idle() && !loop.stopped()) {
      PendingRecord<K, V> pending = queue.head();
      if (pending == null) {
        head.stopWaiting();
        return;
      }
      if (pending.decision == null) {
        // Fenced, an undecided head is left to the next owner, unless records behind it were checked (their ids are
        // recorded: they must be handled) or a commit past it was acknowledged (the next owner starts after it).
        if (loop.fenced() && !gate.covers(pending.offset()) && (gate.isShut() || !queue.checkedBehindHead())) {
          return;
        }
        if (pending.identity == null) {
          deadLetter(pending, DeadLetter.Reason.NO_IDENTITY, pending.noIdentity, null);
        } else {
          decisions.decide();
        }
        continue;
      }
      if (handedOver != null && pending.identity != null) {
        // Those before this record will not come (the consumer read past them, as after an offset reset): lost.
        failures.leftUnhandled(handedOver.dropBefore(pending.offset()));
        handedOver.restore(pending); // a DUPLICATE the previous owner recorded and left: ACCEPTED again
        if (handedOver.size() == 0) {
          handedOver = null;
        }
      }
      switch (pending.decision.verdict()) {
        case DUPLICATE -> {
          metrics.duplicates.increment();
          head.stopWaiting();
          queue.removeHead();
          commits.committable(pending);
        }
        case ACCEPTED -> {
          if (!config.effectFirst && !gate.covers(pending.offset())) {
            // Record-first: the effect waits until Kafka has the offset past it committed for this member.
            decisions.askForCommit();
            if (decisions.decideAhead()) {
              continue; // decided at once (the window answers in-process), or its answer pumps again
            }
            return; // the acknowledgement pumps again
          }
          if (config.effectFirst) {
            if (commits.full()) {
              return; // the next answered commit pumps again
            }
            long now = config.clock.nowMs();
            if (leases.lessThanHalfLeft(commits.unsentLeaseEndMs(), now)) {
              // This handler could outlast the leases of the commits not sent yet: send them first.
              commits.flush();
            }
            if (leases.mustClaimAgain(pending, now)) {
              LOG.debug("{}: less than half the lease left at offset {}; claiming the unstarted records again", tp,
                  pending.offset());
              decisions.releaseUnstartedClaims(null);
              continue;
            }
          }
          if (pending.coverage == PendingRecord.Coverage.NOT_COVERED && config.deadLetterNotCovered) {
            deadLetter(pending, DeadLetter.Reason.UNCOVERED, FailurePolicy.notCoveredDetail(pending.record,
                config.clock.nowMs(), config.windowMs, config.bucketMs), null);
          } else {
            runHandler(pending);
          }
        }
        case CONFLICT -> deadLetter(pending, DeadLetter.Reason.CONFLICT, FailurePolicy.conflictDetail(pending), null);
        case IN_FLIGHT -> {
          if (loop.fenced()) {
            return;
          }
          metrics.inFlightWaits.increment();
          head.pauseWanted();
          backOff(failures.inFlightWaitMs(pending.decision.expiresAtMs(), config.clock.nowMs()),
              State.BACKING_OFF_TO_DECIDE);
        }
        default -> {
          // The consumer's windows answer uncovered records ACCEPTED (uncovered), never UNKNOWN; COMMITTED and
          // RELEASED answer other actions. A fault of the window or its configuration: fail closed, never let the
          // record become committable unseen.
          LOG.error("{}: unexpected verdict {} at offset {}; the record goes to the dead-letter path", tp,
              pending.decision, pending.offset());
          deadLetter(pending, DeadLetter.Reason.UNEXPECTED_VERDICT,
              FailurePolicy.unexpectedVerdictDetail(pending, config.effectFirst), null);
        }
      }
    }
  }

  // --- handling ----------------------------------------------------------------------------------------------------

  private void runHandler(PendingRecord<K, V> pending) {
    head.set(State.HANDLING);
    if (!failures.waitingForATaker()) {
      // Waiting for a taker, the partition stays paused until one takes the record.
      head.stopWaiting();
    }
    pending.attempts++;
    leases.handlerStarts(pending);
    long startNs = System.nanoTime();
    Future<Void> f = config.inbox != null ? inboxTransaction(pending)
        : FailurePolicy.call(() -> config.handler.handle(pending.record),
            "the record handler returned null instead of a future");
    if (f.isComplete()) {
      // Most handlers that do no I/O return a completed future: no listener, no context lookup per record.
      handled(pending, f, startNs);
    } else {
      loop.whenComplete(f, ar -> handled(pending, ar, startNs));
    }
  }

  /**
   * INBOX mode: the record's transaction instead of the handler call. Applied, or a duplicate only the inbox knew
   * (a copy after a crash, or older than the window): the handler's success, so the claim is committed. A conflict:
   * an {@link InboxCalls.Conflict} failure, which {@link #handled} dead-letters at once.
   */
  private Future<Void> inboxTransaction(PendingRecord<K, V> pending) {
    return config.inbox.run(tp, pending).compose(result -> switch (result.verdict()) {
      case APPLIED -> Future.succeededFuture();
      case DUPLICATE -> {
        metrics.duplicates.increment();
        yield Future.succeededFuture();
      }
      case CONFLICT -> Future.failedFuture(new InboxCalls.Conflict(InboxCalls.conflictDetail(result, pending)));
    });
  }

  /**
   * The handler's future of the head record completed (in INBOX mode: its transaction's). On the context.
   *
   * @param startNs when the handler was called, {@link System#nanoTime()}: its duration is a real time, whatever
   *     clock the windows run on
   */
  private void handled(PendingRecord<K, V> pending, AsyncResult<Void> ar, long startNs) {
    if (loop.stopped()) {
      return;
    }
    boolean nobodyToHandTo = !ar.succeeded() && FailurePolicy.nobodyToHandTo(ar.cause());
    if (!nobodyToHandTo) {
      metrics.handlerDuration.record(System.nanoTime() - startNs, TimeUnit.NANOSECONDS);
    }
    if (nobodyToHandTo) {
      // Nobody took the record (no consumer at the event-bus address yet): not a failure of the handler.
      pending.attempts--;
      head.pauseWanted();
      retryHandler(pending, failures.waitForATaker(pending, ar.cause()));
      return;
    }
    if (failures.takerFound()) {
      head.stopWaiting();
    }
    if (ar.failed() && ar.cause() instanceof InboxCalls.Conflict conflict) {
      // INBOX: the transaction rolled back. The window must not remember this payload under the id (the inbox holds
      // another): give the claim back, then dead-letter the record.
      head.set(State.RELEASING);
      loop.whenComplete(decisions.releaseClaim(pending), released ->
          deadLetter(pending, DeadLetter.Reason.CONFLICT, conflict.getMessage(), null));
      return;
    }
    if (ar.succeeded()) {
      done(pending, config.effectFirst);
    } else {
      metrics.handlerFailures.increment();
      handlerFailed(pending, ar.cause());
    }
  }

  private void handlerFailed(PendingRecord<K, V> pending, Throwable cause) {
    if (failures.handlerAttemptsSpent(pending.attempts)) {
      head.set(State.IDLE);
      deadLetter(pending, DeadLetter.Reason.HANDLER_FAILED,
          FailurePolicy.handlerFailedDetail(pending.attempts, cause), cause);
      pump();
      return;
    }
    LOG.debug("{}: handler failed at offset {} (attempt {} of {}), retrying: {}", tp, pending.offset(),
        pending.attempts, config.maxAttempts, String.valueOf(cause));
    retryHandler(pending, failures.backoffMs(pending.attempts));
  }

  /** Calls the head record's handler again after {@code delayMs}: in place (record-first) or after a new claim. */
  private void retryHandler(PendingRecord<K, V> pending, long delayMs) {
    if (!config.effectFirst) {
      // Record-first: the id stays recorded; the handler is called again in place.
      backOff(delayMs, State.BACKING_OFF_TO_HANDLE);
      return;
    }
    // Effect-first: give the id back (a crash during the backoff then loses nothing), and the later claims too,
    // whose leases would otherwise run while this record backs off; then claim again.
    head.set(State.RELEASING);
    decisions.releaseUnstartedClaims(pending);
    loop.whenComplete(decisions.releaseClaim(pending), ar -> {
      head.set(State.IDLE);
      if (loop.fenced()) {
        // Revoked meanwhile: the claim is given back and the next owner claims the record; no retry here.
        pump();
        return;
      }
      backOff(delayMs, State.BACKING_OFF_TO_DECIDE);
      pump();
    });
  }

  /**
   * Hands a record to the dead-letter path, then is done with it. In effect-first mode a record whose handler
   * failed, or that was dead-lettered as not covered, still holds its claim: it is committed, so its id stays
   * remembered.
   */
  private void deadLetter(PendingRecord<K, V> pending, DeadLetter.Reason reason, String detail, Throwable cause) {
    head.set(State.DEAD_LETTERING);
    failures.deadLetter(pending, reason, detail, cause,
        () -> done(pending, config.effectFirst && FailurePolicy.commitsClaimAfter(reason)));
  }

  /**
   * The head record is done with (handled or dead-lettered): it leaves the queue, and either becomes committable or,
   * holding a claim, goes to the commit pipeline; the next record may start.
   */
  private void done(PendingRecord<K, V> pending, boolean commitClaim) {
    queue.removeHead();
    head.set(State.IDLE);
    if (commitClaim) {
      commits.add(pending);
    } else {
      commits.committable(pending);
    }
    pump();
  }

  /** Waits {@code delayMs} with the head, then decides it again or calls its handler again ({@code then}). */
  private void backOff(long delayMs, State then) {
    head.backOff(delayMs, then, queue.head(), this::pump);
  }
}
