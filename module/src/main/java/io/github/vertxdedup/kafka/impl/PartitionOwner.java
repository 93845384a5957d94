package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.kafka.DeadLetter;
import io.github.vertxdedup.kafka.EventTimeSource;
import io.github.vertxdedup.kafka.UnvouchedRecordPolicy;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.agrona.collections.IntHashSet;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The owner of one assigned topic-partition: takes its records from the poll thread, asks its window for a
 * decision (in batches), runs the handler one record at a time in offset order, and hands each record on to its
 * {@link CommitPipeline}, which publishes the committable offset for the poll thread to commit. Retries and dead
 * letters follow its {@link FailurePolicy}; everything it shares with the consumer's other owners is in its
 * {@link OwnerConfig}.
 *
 * <h2>Threads, and the in-process window</h2>
 * The owner runs on the context of its window's partition and calls the window in-process ({@link LocalPartition}):
 * the same decisions, journal writes and failure codes as the event-bus service, without an event-bus round trip
 * (reply registration, timeout timer, two thread hops) per decision batch and per commit batch. A request is decided when it is made, and its future is already complete
 * unless its reply waits for a journal write. Everything but {@link #offer}, {@link #fence}, {@link #stop},
 * {@link #committableNext}, {@link #buffered} and {@link #wantsPause} runs on that context. Those six are called by
 * the poll thread; they only hand work to the context or read volatile fields.
 *
 * <h2>A record's way</h2>
 * A record waits in {@code queue} until it is done with. The head of the queue is the only record whose handler may
 * run. A record is decided when it reaches the head undecided: the run of undecided records from the head (up to
 * {@code maxBatch}) goes to the window in one {@code checkBatch} or {@code claimBatch}. The pump is a trampoline:
 * completions that arrive while it runs ask it to go again instead of recursing, so a long run of already-complete
 * futures costs no stack. What the head waits for is {@link Head}; how far the owner is in its life is the
 * {@link OwnerLoop.Phase}. In effect-first mode a handled record leaves the queue for the commit pipeline, and the next
 * record's handler runs without waiting for the commit's reply (see {@link CommitPipeline}); handlers still run one at
 * a time in offset order.
 *
 * <h2>Every handler starts with half a lease ahead</h2>
 * A run is claimed at once, but its handlers run one after the other, so the last of a long run could start after the
 * run's lease ended, and its commit would be refused. Before a handler starts, the owner looks at its claim's lease
 * end (the claim's request time plus {@code leaseMs}, on the injected clock the window also uses, so never later than
 * the window's): with less than half a lease left it releases the claims not started and claims them again (a new
 * run from the head). It also sends the commits not sent yet first if their leases are that short, since a handler
 * that completes at once leaves its commit to go with the next ones. So a handler call shorter than half of
 * {@code leaseMs} is always committed within its lease, whatever the run's size; claiming again costs a release and
 * a claim per record only when a run is slower than half a lease. A commit refused all the same (a handler slower
 * than that) is followed by a check of the record's identity, which records the id unless another delivery claimed
 * it since the lease ended.
 *
 * <h2>Claims name the consumer</h2>
 * Effect-first claims carry the consumer's instance id as their claimer, so that the consumer restarted after a kill
 * can have the claims it left open released when it takes the partition back (the window store does that before this
 * owner starts) instead of waiting out their leases.
 *
 * <h2>Event time, and records the window's memory does not cover</h2>
 * With {@link EventTimeSource#RECORD_TIMESTAMP} every check and claim carries the record's timestamp as its event
 * time (none for a record without one). A record older than the window {@code W}, or than the window's memory, is not
 * covered: the window cannot tell a redelivery of it from a new record. The consumer's windows accept it, recording
 * its id, and mark it {@code unvouched}; this owner then applies {@link UnvouchedRecordPolicy}: the handler runs and
 * the record is counted, or it goes to the dead-letter path (effect-first commits its claim after, so the id stays
 * remembered, as after a failed handler). Only the first acceptance of a record is judged: a claim taken again after a
 * handler failure keeps the first answer.
 *
 * <h2>Verdicts it does not handle</h2>
 * A check or claim answered with any verdict but ACCEPTED, DUPLICATE, CONFLICT or IN_FLIGHT ({@code UNKNOWN} from a
 * window configured otherwise, or a reply meant for another action) fails closed: the record goes to the dead-letter
 * path with {@link DeadLetter.Reason#UNEXPECTED_VERDICT}, counted like every dead letter; it never becomes committable
 * without the handler or the dead-letter handler seeing it.
 *
 * <h2>Fence</h2>
 * Once fenced (revocation) nothing new is decided. What was decided is finished: the running handler and its
 * commit, and in record-first mode every record already checked (its id is recorded: skipping it would lose its
 * effect); in effect-first mode the claims not yet started are released, so the next owner can claim them at once.
 * A record-first check batch is answered per record, so a full window can refuse a record while recording one behind
 * it: handlers run in offset order, so the fence then still decides (and handles) the undecided records before the
 * last checked one. The fence completes when no decided record is left; the poll thread bounds the wait.
 */
final class PartitionOwner<K, V> {

  private static final System.Logger LOG = System.getLogger(PartitionOwner.class.getName());

  /** What the head of the queue waits for. */
  private enum Head {
    /** Nothing: the pump may take the head on. */
    IDLE,
    /** The answer to the decision request of a run from the head. */
    DECIDING,
    /** Its handler's future. */
    HANDLING,
    /** Effect-first: the release of its claim after a failed handler call. */
    RELEASING,
    /** The dead-letter handler's future. */
    DEAD_LETTERING,
    /** A timer, after which it is decided again (a 503, a lost reply, another delivery's claim). */
    BACKING_OFF_TO_DECIDE,
    /** Record-first: a timer, after which its handler is called again. */
    BACKING_OFF_TO_HANDLE
  }

  /** The pump's trampoline. */
  private enum Pump {
    IDLE,
    RUNNING,
    /** Asked to run again while it ran. */
    AGAIN
  }

  private final OwnerConfig<K, V> config;
  private final TopicPartition tp;
  private final LocalPartition client;
  private final KafkaMetrics metrics;
  private final OwnerLoop loop;
  private final RecordEvents<K, V> events;
  private final FailurePolicy<K, V> failures;
  private final CommitPipeline<K, V> commits;

  /** The head waits for a lease or for the window (503): the poll thread pauses the partition. */
  private volatile boolean wantsPause;
  /** The records not done with, in offset order; only the head's handler may run. */
  private final ArrayDeque<PendingRecord<K, V>> queue = new ArrayDeque<>();
  /** Effect-first: hash codes of the ids (and complemented, of the keys) of the run being gathered by decide. */
  private final IntHashSet runHashes = new IntHashSet();
  private Head head = Head.IDLE;
  private Pump pumpState = Pump.IDLE;
  /** Records to decide one by one (a batch failed whole on one bad identity). */
  private int decideSingly;
  /** The timer of a backoff of the head, or -1. */
  private long timerId = -1;
  /** Completed when, fenced, no decided record is left. */
  private Promise<Void> drained;

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
    this.commits = new CommitPipeline<>(config, loop, client, tp, metrics, failures, this::pump);
  }

  /**
   * Stops the owner: nothing more is decided, handled or made committable, and its timer is cancelled. Any thread.
   *
   * @return completes once stopped, on the owner's context
   */
  Future<Void> stop() {
    Promise<Void> p = Promise.promise();
    loop.execute(() -> {
      loop.stop();
      if (timerId != -1) {
        loop.cancelTimer(timerId);
        timerId = -1;
      }
      p.complete();
    });
    return p.future();
  }

  // --- called by the poll thread -----------------------------------------------------------------------------------

  /**
   * @return the offset after the last record of the committable prefix (the offset to commit to Kafka), or -1 if no
   *     record is committable yet; any thread
   */
  long committableNext() {
    return commits.committableNext();
  }

  /** @return records handed over and not yet committable; any thread */
  int buffered() {
    return commits.buffered();
  }

  /** @return true while the head record waits for a lease or for the window (503); any thread */
  boolean wantsPause() {
    return wantsPause;
  }

  /**
   * Hands records of one poll over, in offset order. Poll thread.
   *
   * @param records the records of this partition from one poll
   */
  void offer(List<ConsumerRecord<K, V>> records) {
    int n = records.size();
    commits.received(n);
    loop.execute(() -> {
      if (loop.fenced()) {
        commits.discarded(n);
        return;
      }
      for (ConsumerRecord<K, V> r : records) {
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
      loop.fence();
      drained = p;
      if (timerId != -1 && head == Head.BACKING_OFF_TO_DECIDE && !checkedBehindHead()) {
        loop.cancelTimer(timerId);
        timerId = -1;
        head = Head.IDLE;
        queue.peek().decision = null;
      }
      if (config.effectFirst) {
        releaseUnstartedClaims(head != Head.IDLE ? queue.peek() : null);
      }
      pump();
    });
    return p.future();
  }

  // --- the pump (event loop) ---------------------------------------------------------------------------------------

  private void pump() {
    if (pumpState != Pump.IDLE) {
      pumpState = Pump.AGAIN;
      return;
    }
    try {
      do {
        pumpState = Pump.RUNNING;
        advance();
        // Commits answered at once (an in-process window without a journal write to wait for) pump again.
        commits.flush();
      } while (pumpState == Pump.AGAIN);
    } finally {
      pumpState = Pump.IDLE;
    }
    if (loop.fenced() && drained != null && isDrained()) {
      drained.tryComplete();
    }
  }

  private boolean isDrained() {
    if (head != Head.IDLE || !commits.isEmpty()) {
      return false;
    }
    PendingRecord<K, V> it = queue.peek();
    return it == null || (it.decision == null || it.decision.verdict() == DedupVerdict.IN_FLIGHT)
        && !checkedBehindHead();
  }

  /**
   * Record-first: whether a record behind the head was checked (its id is recorded) while the head is not decided,
   * which a full window's per-record batch answer allows. Such a record must still be handled, and handlers run in
   * offset order, so a fence goes on deciding the records before it. O(queued records); called only while fenced.
   */
  private boolean checkedBehindHead() {
    if (config.effectFirst) {
      return false;
    }
    for (PendingRecord<K, V> it : queue) {
      if (it.decision != null && it.decision.verdict() == DedupVerdict.ACCEPTED) {
        return true;
      }
    }
    return false;
  }

  /** Takes the head on until it must wait: decides it, drops it, runs its handler or dead-letters it. */
  private void advance() {
    while (head == Head.IDLE && !loop.stopped()) {
      PendingRecord<K, V> it = queue.peek();
      if (it == null) {
        stopWaiting();
        return;
      }
      if (it.decision == null) {
        if (loop.fenced() && !checkedBehindHead()) {
          return;
        }
        if (it.identity == null) {
          deadLetter(it, DeadLetter.Reason.NO_IDENTITY, it.noIdentity, null);
        } else {
          decide();
        }
        continue;
      }
      switch (it.decision.verdict()) {
        case DUPLICATE -> {
          metrics.duplicates.increment();
          stopWaiting();
          queue.poll();
          commits.committable(it);
        }
        case ACCEPTED -> {
          if (config.effectFirst) {
            if (commits.full()) {
              return; // the next answered commit pumps again
            }
            long now = config.clock.nowMs();
            if (lessThanHalfALeaseLeft(commits.unsentLeaseEndMs(), now)) {
              // This handler could outlast the leases of the commits not sent yet: send them first.
              commits.flush();
            }
            if (lessThanHalfALeaseLeft(it.leaseEndMs, now) && !it.claimedAgainForLease) {
              claimAgain(it);
              continue;
            }
          }
          if (it.coverage == PendingRecord.Coverage.NOT_COVERED && config.deadLetterNotCovered) {
            deadLetter(it, DeadLetter.Reason.UNVOUCHED,
                FailurePolicy.notCoveredDetail(it.record, config.clock.nowMs(), config.windowMs,
                    config.bucketMs), null);
          } else {
            runHandler(it);
          }
        }
        case CONFLICT -> deadLetter(it, DeadLetter.Reason.CONFLICT, FailurePolicy.conflictDetail(it), null);
        case IN_FLIGHT -> {
          if (loop.fenced()) {
            return;
          }
          metrics.inFlightWaits.increment();
          wantsPause = true;
          backOff(failures.inFlightWaitMs(it.decision.expiresAtMs(), config.clock.nowMs()),
              Head.BACKING_OFF_TO_DECIDE);
        }
        default -> {
          // The consumer's windows answer unvouched records ACCEPTED (unvouched), never UNKNOWN; COMMITTED and
          // RELEASED answer other actions. A fault of the window or its configuration: fail closed, never let the
          // record become committable unseen.
          LOG.log(System.Logger.Level.ERROR, tp + ": unexpected verdict " + it.decision + " at offset "
              + it.offset() + "; the record goes to the dead-letter path");
          deadLetter(it, DeadLetter.Reason.UNEXPECTED_VERDICT,
              FailurePolicy.unexpectedVerdictDetail(it, config.effectFirst), null);
        }
      }
    }
  }

  // --- deciding ----------------------------------------------------------------------------------------------------

  private void decide() {
    // A record of an id handled earlier is decided after that record's commit was sent (same route): it then finds
    // the id committed (a duplicate), not its claim (IN_FLIGHT, which would wait for a lease).
    commits.flush();
    head = Head.DECIDING;
    List<PendingRecord<K, V>> run = gatherRun();
    if (config.effectFirst) {
      // The window claims on the same clock, at this instant or later: its lease ends no earlier than this.
      long leaseEndMs = config.clock.nowMs() + config.leaseMs;
      for (PendingRecord<K, V> it : run) {
        it.leaseEndMs = leaseEndMs;
      }
    }
    if (run.size() == 1) {
      PendingRecord<K, V> it = run.get(0);
      DedupEvent e = events.decision(it);
      Future<DedupResult> f = config.effectFirst ? client.claim(e) : client.check(e);
      loop.whenComplete(f, ar -> {
        head = Head.IDLE;
        if (ar.succeeded()) {
          decided(it, ar.result(), config.clock.nowMs());
        } else {
          decisionFailed(it, ar.cause(), false);
        }
        pump();
      });
      return;
    }
    List<DedupEvent> requests = new ArrayList<>(run.size());
    for (PendingRecord<K, V> it : run) {
      requests.add(events.decision(it));
    }
    Future<List<DedupBatchResult>> f = config.effectFirst ? client.claimBatch(requests) : client.checkBatch(requests);
    loop.whenComplete(f, ar -> {
      head = Head.IDLE;
      if (ar.succeeded()) {
        batchDecided(run, ar.result());
      } else {
        decisionFailed(run.get(0), ar.cause(), true);
        if (head == Head.IDLE) {
          decideSingly = run.size();
        }
      }
      pump();
    });
  }

  /**
   * The run of undecided records from the head, up to {@code maxBatch} (one while {@code decideSingly}). In
   * effect-first mode a run stops before a repeat of an id or key already in it: inside one claimBatch the repeat
   * would find the first copy's claim (IN_FLIGHT) and wait for a lease; decided after the first copy's commit, it is a
   * plain duplicate. Tracked by String hash codes: two different ids that share one only end the run early, which is
   * always safe.
   */
  private List<PendingRecord<K, V>> gatherRun() {
    int limit = decideSingly > 0 ? 1 : config.maxBatch;
    List<PendingRecord<K, V>> run = new ArrayList<>(Math.min(limit, queue.size()));
    if (config.effectFirst) {
      runHashes.clear();
    }
    for (PendingRecord<K, V> it : queue) {
      if (run.size() == limit || it.decision != null || it.identity == null) {
        break;
      }
      if (config.effectFirst && (!runHashes.add(it.identity.id().hashCode())
          || (it.identity.key() != null && !runHashes.add(~it.identity.key().hashCode())))) {
        break;
      }
      run.add(it);
    }
    if (decideSingly > 0) {
      decideSingly--;
    }
    return run;
  }

  /**
   * Takes the elements of a decision batch, one per record of {@code run}. A refused record (a new id a full window
   * has no room for) is left undecided while the others keep their verdicts, so the duplicates before it become
   * committable and those after it wait only for it: the head backs off at once if it is the one refused, and a later
   * refused record is decided again when it reaches the head. Effect-first gives back a claim decided after a refused
   * record: it would hold the room the refused one waits for, and run its lease during that record's backoff.
   */
  private void batchDecided(List<PendingRecord<K, V>> run, List<DedupBatchResult> results) {
    long now = config.clock.nowMs();
    boolean refused = false;
    for (int i = 0; i < run.size(); i++) {
      PendingRecord<K, V> it = run.get(i);
      DedupBatchResult r = results.get(i);
      if (r.failed()) {
        if (i == 0) {
          decisionFailed(it, r.cause(), false);
        }
        refused = true;
        continue;
      }
      decided(it, r.result(), now);
      if (refused && config.effectFirst && it.decision != null && it.decision.verdict() == DedupVerdict.ACCEPTED) {
        releaseClaim(it);
      }
    }
  }

  private void decided(PendingRecord<K, V> it, DedupResult result, long nowMs) {
    it.decision = result;
    it.requestRetries = 0;
    if (result.verdict() == DedupVerdict.ACCEPTED && it.coverage == PendingRecord.Coverage.NOT_ACCEPTED) {
      it.coverage = result.unvouched() ? PendingRecord.Coverage.NOT_COVERED : PendingRecord.Coverage.COVERED;
      boolean notCovered = it.coverage == PendingRecord.Coverage.NOT_COVERED;
      // A record dead-lettered as not covered is counted among the dead letters, not among the accepted ones.
      if (!(notCovered && config.deadLetterNotCovered)) {
        if (notCovered) {
          metrics.unvouchedAccepts.increment();
        }
        if (beyondWindow(it.record.timestamp(), nowMs, config.windowMs)) {
          metrics.redeliveriesBeyondWindow.increment();
        }
      }
    }
    if (loop.fenced() && config.effectFirst && result.verdict() == DedupVerdict.ACCEPTED) {
      releaseClaim(it);
    }
  }

  /** A 503 (or a lost reply) backs off and decides again; a 400 names a field of the identity: dead letter. */
  private void decisionFailed(PendingRecord<K, V> it, Throwable cause, boolean batch) {
    int code = cause instanceof ReplyException re ? re.failureCode() : -1;
    if (code == DedupFailure.BAD_REQUEST) {
      if (!batch) {
        deadLetter(it, DeadLetter.Reason.INVALID_IDENTITY, cause.getMessage(), null);
      }
      // A batch fails whole on one bad event: the caller decides its records one by one to find it.
      return;
    }
    metrics.unavailable.increment();
    wantsPause = true;
    LOG.log(System.Logger.Level.DEBUG, tp + ": decision refused, retrying: " + cause);
    backOff(failures.backoffMs(++it.requestRetries), Head.BACKING_OFF_TO_DECIDE);
  }

  // --- leases (effect-first) ---------------------------------------------------------------------------------------

  /**
   * Whether a claim whose lease ends at {@code leaseEndMs} has less than half of {@code leaseMs} left at
   * {@code nowMs}: a handler started now might then outlast it.
   */
  private boolean lessThanHalfALeaseLeft(long leaseEndMs, long nowMs) {
    return leaseEndMs - nowMs < config.leaseMs - config.leaseMs / 2;
  }

  /**
   * The head's claim has less than half its lease left, so its handler might outlast it (a long run of records
   * claimed at once, slow handlers, or a wait for commits or another delivery's lease). Gives it back with every
   * other claim whose handler has not started (they were claimed with it or before it) and lets the pump claim them
   * again, so that every handler starts with at least half a lease ahead and its commit, sent when it completes,
   * finds its claim live. A record is claimed again for this reason once per handler call: if the claim made again
   * has less than half a lease left too (the window, or the replies to the commits the pipeline waits for, took more
   * than half a lease), claiming once more would not help, and its handler runs on it.
   */
  private void claimAgain(PendingRecord<K, V> it) {
    LOG.log(System.Logger.Level.DEBUG, tp + ": less than half the lease left at offset " + it.offset()
        + "; claiming the unstarted records again");
    releaseUnstartedClaims(null);
    it.claimedAgainForLease = true;
  }

  /** Releases the claims of records whose handler has not started (all but {@code except}), forgetting them. */
  private void releaseUnstartedClaims(PendingRecord<K, V> except) {
    for (PendingRecord<K, V> it : queue) {
      if (it != except && it.decision != null && it.decision.verdict() == DedupVerdict.ACCEPTED
          && it.decision.claimToken() != null) {
        releaseClaim(it);
      }
    }
  }

  private void releaseClaim(PendingRecord<K, V> it) {
    client.release(RecordEvents.claim(it)).onFailure(e -> LOG.log(System.Logger.Level.DEBUG, tp
        + ": release failed, the claim will lapse: " + e));
    it.decision = null;
  }

  // --- handling ----------------------------------------------------------------------------------------------------

  private void runHandler(PendingRecord<K, V> it) {
    head = Head.HANDLING;
    stopWaiting();
    it.attempts++;
    it.claimedAgainForLease = false;
    Future<Void> f;
    try {
      f = config.handler.handle(it.record);
      if (f == null) {
        f = Future.failedFuture(new NullPointerException("the record handler returned null instead of a future"));
      }
    } catch (RuntimeException e) {
      f = Future.failedFuture(e);
    }
    if (f.isComplete()) {
      // Most handlers that do no I/O return a completed future: no listener, no context lookup per record.
      handled(it, f);
    } else {
      loop.whenComplete(f, ar -> handled(it, ar));
    }
  }

  /** The handler's future of the head record completed. On the context. */
  private void handled(PendingRecord<K, V> it, AsyncResult<Void> ar) {
    if (loop.stopped()) {
      return;
    }
    if (ar.succeeded()) {
      done(it, config.effectFirst);
    } else {
      metrics.handlerFailures.increment();
      handlerFailed(it, ar.cause());
    }
  }

  private void handlerFailed(PendingRecord<K, V> it, Throwable cause) {
    if (failures.handlerAttemptsSpent(it.attempts)) {
      head = Head.IDLE;
      deadLetter(it, DeadLetter.Reason.HANDLER_FAILED, FailurePolicy.handlerFailedDetail(it.attempts, cause), cause);
      pump();
      return;
    }
    LOG.log(System.Logger.Level.DEBUG, tp + ": handler failed at offset " + it.offset() + " (attempt "
        + it.attempts + " of " + config.maxAttempts + "), retrying: " + cause);
    if (!config.effectFirst) {
      // Record-first: the id stays recorded; the handler is called again in place.
      backOff(failures.backoffMs(it.attempts), Head.BACKING_OFF_TO_HANDLE);
      return;
    }
    // Effect-first: give the id back (a crash during the backoff then loses nothing), and the later claims too,
    // whose leases would otherwise run while this record backs off; then claim again.
    head = Head.RELEASING;
    releaseUnstartedClaims(it);
    loop.whenComplete(client.release(RecordEvents.claim(it)), ar -> {
      if (ar.failed()) {
        LOG.log(System.Logger.Level.DEBUG, tp + ": release failed, the claim will lapse: " + ar.cause());
      }
      it.decision = null;
      head = Head.IDLE;
      if (loop.fenced()) {
        // Revoked meanwhile: the claim is given back and the next owner claims the record; no retry here.
        pump();
        return;
      }
      backOff(failures.backoffMs(it.attempts), Head.BACKING_OFF_TO_DECIDE);
      pump();
    });
  }

  /**
   * Hands a record to the dead-letter path, then is done with it. In effect-first mode a record whose handler
   * failed, or that was dead-lettered as not covered, still holds its claim: it is committed, so its id stays
   * remembered.
   */
  private void deadLetter(PendingRecord<K, V> it, DeadLetter.Reason reason, String detail, Throwable cause) {
    head = Head.DEAD_LETTERING;
    failures.deadLetter(it, reason, detail, cause,
        () -> done(it, config.effectFirst && FailurePolicy.commitsClaimAfter(reason)));
  }

  /**
   * The head record is done with (handled or dead-lettered): it leaves the queue, and either becomes committable or,
   * holding a claim, goes to the commit pipeline; the next record may start.
   */
  private void done(PendingRecord<K, V> it, boolean commitClaim) {
    queue.poll();
    head = Head.IDLE;
    if (commitClaim) {
      commits.add(it);
    } else {
      commits.committable(it);
    }
    pump();
  }

  /** The head no longer waits for a lease or a backoff: the poll loop may resume the partition. */
  private void stopWaiting() {
    if (wantsPause) {
      wantsPause = false;
      config.wakePoll.run();
    }
  }

  /** Waits {@code delayMs} with the head, then decides it again or calls its handler again ({@code then}). */
  private void backOff(long delayMs, Head then) {
    head = then;
    PendingRecord<K, V> it = queue.peek();
    timerId = loop.afterDelay(delayMs, () -> {
      timerId = -1;
      head = Head.IDLE;
      if (then == Head.BACKING_OFF_TO_DECIDE) {
        it.decision = null;
      }
      pump();
    });
  }

  // --- meters ------------------------------------------------------------------------------------------------------

  /**
   * Whether an accepted record is probably a redelivery the window no longer remembers: its Kafka timestamp (the
   * producer's create time, or the broker's append time, by the topic's {@code message.timestamp.type}) is more
   * than the window {@code W} before now. An id older than the window cannot be told from a new one, so watch how
   * often such records arrive and size {@code W} to cover them. The verdict stands (the record was not seen within
   * {@code W}, and the handler runs); only {@code dedup.kafka.redeliveries.beyond.window} counts it. A record
   * without a timestamp ({@code -1}) is never counted. Computed by the owner from the timestamp whatever the
   * {@link EventTimeSource}; under {@link UnvouchedRecordPolicy#DEAD_LETTER} such a record (which the window marks
   * unvouched) is dead-lettered instead, and not counted here.
   *
   * @param timestampMs the record's timestamp, epoch milliseconds, or negative if none
   * @param nowMs now, from the injected clock
   * @param windowMs the window {@code W} in milliseconds
   * @return true if {@code 0 <= timestampMs < nowMs - windowMs}
   */
  static boolean beyondWindow(long timestampMs, long nowMs, long windowMs) {
    return timestampMs >= 0 && timestampMs < nowMs - windowMs;
  }
}
