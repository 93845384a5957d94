package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DeadLetter;
import io.github.vertxdedup.kafka.DeadLetterHandler;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.EventTimeSource;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.RecordHandler;
import io.github.vertxdedup.kafka.RecordIdentity;
import io.github.vertxdedup.kafka.UnvouchedRecordPolicy;
import io.github.vertxdedup.window.DedupClock;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.agrona.collections.IntHashSet;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The owner of one assigned topic-partition: takes its records from the poll thread, asks its window for a
 * decision (in batches), runs the handler one record at a time in offset order, retries, dead-letters, and
 * publishes the offset after the last settled record for the poll thread to commit.
 *
 * <h2>Threads, and the in-process window</h2>
 * The owner runs on the context of its window's partition verticle and calls the window in-process
 * ({@code PartitionVerticle.inProcessClient()}): the same requests, decisions, journal writes and failure codes as
 * the event-bus service, without an event-bus round trip (reply registration, timeout timer, two thread hops) per
 * decision batch and per commit batch. A request is decided when it is made, and its future is already complete
 * unless its reply waits for a journal write. Everything but {@link #offer}, {@link #fence}, {@link #stop},
 * {@link #settledNext}, {@link #buffered} and {@link #wantsPause} runs on that context. Those six are called by the
 * poll thread; they only hand work to the context or read volatile fields.
 *
 * <h2>A record's way</h2>
 * A record waits in {@code queue} until it is settled (its offset may then be committed). The head of the queue is
 * the only record whose handler may run. A record is decided when it reaches the head undecided: the run of
 * undecided records from the head (up to {@code maxBatch}) goes to the window in one {@code checkBatch} or
 * {@code claimBatch}. The pump is a trampoline: completions that arrive while it runs set {@code again} instead of
 * recursing, so a long run of already-complete futures costs no stack.
 *
 * <h2>Effect-first commits are pipelined</h2>
 * Once a record's handler has succeeded the record leaves {@code queue} for {@code committing}, and its claim's commit
 * is sent with the others that became ready in the same pump pass as one {@code commitBatch} (answered per id); the
 * next record's handler runs without waiting for the reply. The record is settled (its
 * offset may be committed to Kafka) only when the reply comes, and settlement stays a prefix: {@link #settledNext}
 * never passes a record whose commit is unanswered. Without a journal the reply comes at once; with one, after the
 * journal write, so the handler does not wait for the disk. What a crash can repeat grows from one record to the
 * records whose commit was unanswered, all of them handled and none of them committed to Kafka: still "a crash can
 * repeat an effect, never lose it". The pipeline is bounded: a handler waits while {@code maxUnansweredCommits}
 * commits are unanswered, so a kill repeats at most {@code maxUnansweredCommits + 1} records per partition.
 * Handlers still run one at a time in offset order. A later record of the same id is decided by a request made
 * after the commit was sent, on the same context, so the window sees the commit first.
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
 * <h2>Event time and unvouched records</h2>
 * With {@link EventTimeSource#RECORD_TIMESTAMP} every check and claim carries the record's timestamp as its event
 * time (none for a record without one). The consumer's windows accept an event they cannot vouch for, recording its
 * id, and mark it {@code unvouched}; this owner then applies {@link UnvouchedRecordPolicy}: the handler runs and the
 * record is counted, or it goes to the dead-letter path (effect-first commits its claim after, so the id stays
 * remembered, as after a failed handler). Only the first acceptance of a record is judged: a claim taken again after a
 * handler failure keeps the first answer.
 *
 * <h2>Verdicts it does not handle</h2>
 * A check or claim answered with any verdict but ACCEPTED, DUPLICATE, CONFLICT or IN_FLIGHT ({@code UNKNOWN} from a
 * window configured otherwise, or a reply meant for another action) fails closed: the record goes to the dead-letter
 * path with {@link DeadLetter.Reason#UNEXPECTED_VERDICT}, counted like every dead letter; it is never settled
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

  private final TopicPartition tp;
  private final boolean effectFirst;
  private final int maxAttempts;
  private final long backoffInitialMs;
  private final long backoffMaxMs;
  private final int maxBatch;
  private final IdentityExtractor<K, V> identity;
  private final RecordHandler<K, V> handler;
  private final DeadLetterHandler<K, V> deadLetters;
  private final DedupClock clock;
  private final KafkaMetrics metrics;
  private final Runnable wakePoll;
  private final int resumeMark;
  /** The consumer's instance id, named as the claimer of every claim (effect-first). */
  private final String claimer;
  private final long windowMs;
  /** The window's bucket width: it vouches from the start of the bucket after {@code now - windowMs}. */
  private final long bucketMs;
  private final int maxUnansweredCommits;
  /** Effect-first: the lease of every claim (the window's default {@code leaseMs}; claims name no lease). */
  private final long leaseMs;
  /** Checks and claims carry the record's timestamp as their event time ({@link EventTimeSource#RECORD_TIMESTAMP}). */
  private final boolean recordTimestamps;
  /** Records the window cannot vouch for go to the dead-letter path ({@link UnvouchedRecordPolicy#DEAD_LETTER}). */
  private final boolean deadLetterUnvouched;

  final AtomicInteger buffered = new AtomicInteger();
  private volatile long settledNext = -1;
  private volatile boolean wantsPause;

  private final ArrayDeque<Item<K, V>> queue = new ArrayDeque<>();
  /** Effect-first: hash codes of the ids (and complemented, of the keys) of the run being gathered by decide. */
  private final IntHashSet runHashes = new IntHashSet();
  /** Effect-first: records handled (or dead-lettered) whose claim's commit is unanswered, in offset order. */
  private final ArrayDeque<Item<K, V>> committing = new ArrayDeque<>();
  /** Effect-first: the tail of {@code committing} whose commit is not sent yet; sent as one commitBatch per pass. */
  private final List<Item<K, V>> toCommit = new ArrayList<>();
  /** Effect-first: the earliest lease end of the claims in {@code toCommit}; {@code Long.MAX_VALUE} when empty. */
  private long toCommitLeaseEndMs = Long.MAX_VALUE;
  /** The offset after the last record settled, whether or not an earlier one still waits in committing. */
  private long lastSettledNext = -1;
  private final Vertx vertx;
  private final Context context;
  private final DedupClient client;
  private boolean busy;
  private boolean pumping;
  private boolean again;
  private boolean fenced;
  private boolean stopped;
  private int decideSingly;
  private long timerId = -1;
  private boolean timerRedecides;
  private Promise<Void> drained;

  /**
   * @param vertx the Vert.x instance
   * @param context where the owner runs: the context of its window's partition verticle
   * @param client the window, called in-process (the partition verticle's
   *     {@link io.github.vertxdedup.impl.PartitionVerticle#inProcessClient()})
   */
  PartitionOwner(Vertx vertx, Context context, DedupClient client, TopicPartition tp, DedupKafkaOptions options,
      IdentityExtractor<K, V> identity, RecordHandler<K, V> handler, DeadLetterHandler<K, V> deadLetters,
      DedupClock clock, KafkaMetrics metrics, Runnable wakePoll, String instanceId) {
    this.vertx = vertx;
    this.context = context;
    this.client = client;
    this.tp = tp;
    this.effectFirst = options.getMode() == AtomicityMode.EFFECT_FIRST;
    this.maxAttempts = options.getMaxAttempts();
    this.backoffInitialMs = options.getBackoffInitialMs();
    this.backoffMaxMs = options.getBackoffMaxMs();
    this.maxBatch = options.getDedup().getMaxBatch();
    this.identity = identity;
    this.handler = handler;
    this.deadLetters = deadLetters;
    this.clock = clock;
    this.metrics = metrics;
    this.wakePoll = wakePoll;
    this.resumeMark = resumeMark(options.getMaxBufferedPerPartition());
    this.claimer = instanceId;
    this.windowMs = options.getDedup().getWindowMs();
    this.bucketMs = options.getDedup().getEffectiveBucketMs();
    this.maxUnansweredCommits = options.getMaxUnansweredCommits();
    this.leaseMs = options.getDedup().getLeaseMs();
    this.recordTimestamps = options.getEventTimeSource() == EventTimeSource.RECORD_TIMESTAMP;
    this.deadLetterUnvouched = options.getUnvouchedRecords() == UnvouchedRecordPolicy.DEAD_LETTER;
  }

  /**
   * @param maxBuffered {@code maxBufferedPerPartition}
   * @return the number of unsettled records at or below which a paused partition is resumed: half the maximum
   */
  static int resumeMark(int maxBuffered) {
    return maxBuffered / 2;
  }

  /**
   * Stops the owner: nothing more is decided, handled or settled, and its timer is cancelled. Any thread.
   *
   * @return completes once stopped, on the owner's context
   */
  Future<Void> stop() {
    Promise<Void> p = Promise.promise();
    context.runOnContext(v -> {
      stopped = true;
      if (timerId != -1) {
        vertx.cancelTimer(timerId);
        timerId = -1;
      }
      p.complete();
    });
    return p.future();
  }

  // --- called by the poll thread -----------------------------------------------------------------------------------

  /** @return the offset after the last settled record, or -1 if none was settled; any thread */
  long settledNext() {
    return settledNext;
  }

  /** @return records handed over and not yet settled; any thread */
  int buffered() {
    return buffered.get();
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
    buffered.addAndGet(n);
    context.runOnContext(v -> {
      if (fenced || stopped) {
        buffered.addAndGet(-n);
        return;
      }
      for (ConsumerRecord<K, V> r : records) {
        queue.add(identify(new Item<>(r)));
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
    context.runOnContext(v -> {
      fenced = true;
      drained = p;
      if (timerId != -1 && timerRedecides && !checkedBehindHead()) {
        vertx.cancelTimer(timerId);
        timerId = -1;
        busy = false;
        queue.peek().decision = null;
      }
      if (effectFirst) {
        releaseUnstartedClaims(busy ? queue.peek() : null);
      }
      pump();
    });
    return p.future();
  }

  // --- the pump (event loop) ---------------------------------------------------------------------------------------

  private void pump() {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        advance();
        // Commits answered at once (an in-process window without a journal write to wait for) pump again.
        flushCommits();
      } while (again);
    } finally {
      pumping = false;
    }
    if (fenced && drained != null && isDrained()) {
      drained.tryComplete();
    }
  }

  private boolean isDrained() {
    if (busy || !committing.isEmpty()) {
      return false;
    }
    Item<K, V> head = queue.peek();
    return head == null || (head.decision == null || head.decision.verdict() == DedupVerdict.IN_FLIGHT)
        && !checkedBehindHead();
  }

  /**
   * Record-first: whether a record behind the head was checked (its id is recorded) while the head is not decided,
   * which a full window's per-record batch answer allows. Such a record must still be handled, and handlers run in
   * offset order, so a fence goes on deciding the records before it. O(queued records); called only while fenced.
   */
  private boolean checkedBehindHead() {
    if (effectFirst) {
      return false;
    }
    for (Item<K, V> it : queue) {
      if (it.decision != null && it.decision.verdict() == DedupVerdict.ACCEPTED) {
        return true;
      }
    }
    return false;
  }

  private void advance() {
    while (!busy && !stopped) {
      Item<K, V> it = queue.peek();
      if (it == null) {
        stopWaiting();
        return;
      }
      if (it.decision == null) {
        if (fenced && !checkedBehindHead()) {
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
          settle(it);
        }
        case ACCEPTED -> {
          if (effectFirst) {
            if (committing.size() >= maxUnansweredCommits) {
              return; // the next answered commit pumps again
            }
            long now = clock.nowMs();
            if (lessThanHalfALeaseLeft(toCommitLeaseEndMs, now)) {
              // This handler could outlast the leases of the commits not sent yet: send them first.
              flushCommits();
            }
            if (lessThanHalfALeaseLeft(it.leaseEndMs, now) && !it.claimedForLease) {
              claimAgain(it);
              continue;
            }
          }
          if (it.unvouched && deadLetterUnvouched) {
            deadLetter(it, DeadLetter.Reason.UNVOUCHED, unvouchedDetail(it.record, clock.nowMs(), windowMs, bucketMs), null);
          } else {
            runHandler(it);
          }
        }
        case CONFLICT -> deadLetter(it, DeadLetter.Reason.CONFLICT, "id '" + it.identity.id() + "' is remembered"
            + " with another payload hash (first seen at " + it.decision.firstSeenMs() + " ms, remembered until "
            + it.decision.expiresAtMs() + " ms)", null);
        case IN_FLIGHT -> {
          if (fenced) {
            return;
          }
          metrics.inFlightWaits.increment();
          wantsPause = true;
          long delay = Math.min(backoffMaxMs, Math.max(1, it.decision.expiresAtMs() - clock.nowMs() + 1));
          retryAfter(delay, true);
        }
        default -> {
          // The consumer's windows answer unvouched records ACCEPTED (unvouched), never UNKNOWN; COMMITTED and
          // RELEASED answer other actions. A fault of the window or its configuration: fail closed, never settle the
          // record unseen.
          LOG.log(System.Logger.Level.ERROR, tp + ": unexpected verdict " + it.decision + " at offset "
              + it.record.offset() + "; the record goes to the dead-letter path");
          deadLetter(it, DeadLetter.Reason.UNEXPECTED_VERDICT, "the window answered " + it.decision.verdict()
              + " to the " + (effectFirst ? "claim" : "check") + " of id '" + it.identity.id() + "', a verdict this"
              + " consumer does not handle (" + it.decision + ")", null);
        }
      }
    }
  }

  private void decide() {
    // A record of an id handled earlier is decided after that record's commit was sent (same route): it then finds
    // the id committed (a duplicate), not its claim (IN_FLIGHT, which would wait for a lease).
    flushCommits();
    busy = true;
    int limit = decideSingly > 0 ? 1 : maxBatch;
    List<Item<K, V>> run = new ArrayList<>(Math.min(limit, queue.size()));
    // In effect-first mode a run stops before a repeat of an id or key already in it: inside one claimBatch the
    // repeat would find the first copy's claim (IN_FLIGHT) and wait for a lease; decided after the first copy's
    // commit, it is a plain duplicate. Tracked by String hash codes: two different ids that share one only end the
    // run early, which is always safe.
    if (effectFirst) {
      runHashes.clear();
    }
    for (Item<K, V> it : queue) {
      if (run.size() == limit || it.decision != null || it.identity == null) {
        break;
      }
      if (effectFirst && (!runHashes.add(it.identity.id().hashCode())
          || (it.identity.key() != null && !runHashes.add(~it.identity.key().hashCode())))) {
        break;
      }
      run.add(it);
    }
    if (decideSingly > 0) {
      decideSingly--;
    }
    if (effectFirst) {
      // The window claims on the same clock, at this instant or later: its lease ends no earlier than this.
      long leaseEndMs = clock.nowMs() + leaseMs;
      for (Item<K, V> it : run) {
        it.leaseEndMs = leaseEndMs;
      }
    }
    if (run.size() == 1) {
      Item<K, V> it = run.get(0);
      DedupEvent e = decisionEvent(it);
      Future<DedupResult> f = effectFirst ? client.claim(e) : client.check(e);
      f.onComplete(ar -> onContext(() -> {
        if (stopped) {
          return;
        }
        busy = false;
        if (ar.succeeded()) {
          decided(it, ar.result(), clock.nowMs());
        } else {
          decisionFailed(it, ar.cause(), false);
        }
        pump();
      }));
      return;
    }
    List<DedupEvent> events = new ArrayList<>(run.size());
    for (Item<K, V> it : run) {
      events.add(decisionEvent(it));
    }
    Future<List<DedupBatchResult>> f = effectFirst ? client.claimBatch(events) : client.checkBatch(events);
    f.onComplete(ar -> onContext(() -> {
      if (stopped) {
        return;
      }
      busy = false;
      if (ar.succeeded()) {
        batchDecided(run, ar.result());
      } else {
        decisionFailed(run.get(0), ar.cause(), true);
        if (!busy) {
          decideSingly = run.size();
        }
      }
      pump();
    }));
  }

  /**
   * Takes the elements of a decision batch, one per record of {@code run}. A refused record (a new id a full window
   * has no room for) is left undecided while the others keep their verdicts, so the duplicates before it are settled
   * and those after it wait only for it: the head backs off at once if it is the one refused, and a later refused
   * record is decided again when it reaches the head. Effect-first gives back a claim decided after a refused record:
   * it would hold the room the refused one waits for, and run its lease during that record's backoff.
   */
  private void batchDecided(List<Item<K, V>> run, List<DedupBatchResult> results) {
    long now = clock.nowMs();
    boolean refused = false;
    for (int i = 0; i < run.size(); i++) {
      Item<K, V> it = run.get(i);
      DedupBatchResult r = results.get(i);
      if (r.failed()) {
        if (i == 0) {
          decisionFailed(it, r.cause(), false);
        }
        refused = true;
        continue;
      }
      decided(it, r.result(), now);
      if (refused && effectFirst && it.decision != null && it.decision.verdict() == DedupVerdict.ACCEPTED) {
        releaseClaim(it);
      }
    }
  }

  private void decided(Item<K, V> it, DedupResult result, long nowMs) {
    it.decision = result;
    it.decisionRetries = 0;
    if (result.verdict() == DedupVerdict.ACCEPTED && !it.acceptedBefore) {
      it.acceptedBefore = true;
      it.unvouched = result.unvouched();
      // A record dead-lettered as unvouched is counted among the dead letters, not among the accepted ones.
      if (!(it.unvouched && deadLetterUnvouched)) {
        if (it.unvouched) {
          metrics.unvouchedAccepts.increment();
        }
        if (beyondWindow(it.record.timestamp(), nowMs, windowMs)) {
          metrics.redeliveriesBeyondWindow.increment();
        }
      }
    }
    if (fenced && effectFirst && result.verdict() == DedupVerdict.ACCEPTED) {
      releaseClaim(it);
    }
  }

  /** A 503 (or a lost reply) backs off and decides again; a 400 names a field of the identity: dead letter. */
  private void decisionFailed(Item<K, V> it, Throwable cause, boolean batch) {
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
    retryAfter(backoff(++it.decisionRetries), true);
  }

  /**
   * Whether a claim whose lease ends at {@code leaseEndMs} has less than half of {@code leaseMs} left at
   * {@code nowMs}: a handler started now might then outlast it.
   */
  private boolean lessThanHalfALeaseLeft(long leaseEndMs, long nowMs) {
    return leaseEndMs - nowMs < leaseMs - leaseMs / 2;
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
  private void claimAgain(Item<K, V> head) {
    LOG.log(System.Logger.Level.DEBUG, tp + ": less than half the lease left at offset " + head.record.offset()
        + "; claiming the unstarted records again");
    releaseUnstartedClaims(null);
    head.claimedForLease = true;
  }

  private void runHandler(Item<K, V> it) {
    busy = true;
    stopWaiting();
    it.attempts++;
    it.claimedForLease = false;
    Future<Void> f;
    try {
      f = handler.handle(it.record);
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
      f.onComplete(ar -> onContext(() -> handled(it, ar)));
    }
  }

  /** The handler's future of the head record completed. On the context. */
  private void handled(Item<K, V> it, AsyncResult<Void> ar) {
    if (stopped) {
      return;
    }
    if (ar.succeeded()) {
      if (effectFirst) {
        pipelineCommit(it);
        pump();
      } else {
        busy = false;
        settle(it);
        pump();
      }
    } else {
      metrics.handlerFailures.increment();
      handlerFailed(it, ar.cause());
    }
  }

  private void handlerFailed(Item<K, V> it, Throwable cause) {
    if (it.attempts >= maxAttempts) {
      busy = false;
      deadLetter(it, DeadLetter.Reason.HANDLER_FAILED, "the handler failed " + it.attempts + " times; last: "
          + cause, cause);
      pump();
      return;
    }
    LOG.log(System.Logger.Level.DEBUG, tp + ": handler failed at offset " + it.record.offset() + " (attempt "
        + it.attempts + " of " + maxAttempts + "), retrying: " + cause);
    if (!effectFirst) {
      // Record-first: the id stays recorded; the handler is called again in place.
      retryAfter(backoff(it.attempts), false);
      return;
    }
    // Effect-first: give the id back (a crash during the backoff then loses nothing), and the later claims too,
    // whose leases would otherwise run while this record backs off; then claim again.
    releaseUnstartedClaims(it);
    client.release(claimEvent(it)).onComplete(ar -> onContext(() -> {
      if (stopped) {
        return;
      }
      if (ar.failed()) {
        LOG.log(System.Logger.Level.DEBUG, tp + ": release failed, the claim will lapse: " + ar.cause());
      }
      it.decision = null;
      busy = false;
      if (fenced) {
        // Revoked meanwhile: the claim is given back and the next owner claims the record; no retry here.
        pump();
        return;
      }
      retryAfter(backoff(it.attempts), true);
      pump();
    }));
  }

  /**
   * Moves the head record, handled, to {@code committing}; its commit is sent at the end of this pump pass (or before
   * the next decision) with the others that became ready in the pass. The next record may start.
   */
  private void pipelineCommit(Item<K, V> it) {
    queue.poll();
    committing.add(it);
    toCommit.add(it);
    toCommitLeaseEndMs = Math.min(toCommitLeaseEndMs, it.leaseEndMs);
    busy = false;
  }

  /** Sends the commits not sent yet as one {@code commitBatch} (chunks of {@code maxBatch}). */
  private void flushCommits() {
    toCommitLeaseEndMs = Long.MAX_VALUE;
    while (!toCommit.isEmpty()) {
      int n = Math.min(maxBatch, toCommit.size());
      List<Item<K, V>> batch = new ArrayList<>(toCommit.subList(0, n));
      toCommit.subList(0, n).clear();
      commitClaims(batch);
    }
  }

  /**
   * Commits the claims of handled records in one request. A per-id 409 is a claim that lapsed before its commit (a
   * handler slower than half a lease can outlast it): counted in {@code dedup.kafka.lapsed.claims}, and the owner then
   * tries to record the id with a check ({@link #recordLate}); the record is settled when that is answered. A failed
   * request (503, a lost reply) or a per-id failure other than 409 is retried after a backoff for those records.
   */
  private void commitClaims(List<Item<K, V>> batch) {
    List<DedupEvent> events = new ArrayList<>(batch.size());
    for (Item<K, V> it : batch) {
      events.add(claimEvent(it));
    }
    client.commitBatch(events).onComplete(ar -> onContext(() -> {
      if (stopped) {
        return;
      }
      List<Item<K, V>> retry;
      if (ar.failed()) {
        retry = batch;
      } else {
        retry = null;
        List<DedupCommitResult> results = ar.result();
        for (int i = 0; i < batch.size(); i++) {
          Item<K, V> it = batch.get(i);
          DedupCommitResult r = results.get(i);
          if (r.committed()) {
            it.commitAnswered = true;
          } else if (r.failureCode() == DedupFailure.STATE_CONFLICT) {
            metrics.lapsedClaims.increment();
            recordLate(it, r.message());
          } else {
            if (retry == null) {
              retry = new ArrayList<>();
            }
            retry.add(it);
          }
        }
      }
      if (retry != null) {
        metrics.unavailable.increment();
        List<Item<K, V>> again = retry;
        vertx.setTimer(backoff(++again.get(0).decisionRetries), t -> {
          if (!stopped) {
            commitClaims(again);
          }
        });
      }
      settleAnsweredCommits();
    }));
  }

  /**
   * The commit of a handled record was refused because its claim had lapsed (the handler, or the dead-letter handler
   * after it, outlasted the lease): the effect is applied and the id not remembered. Checks the record's full identity
   * (id, key, payload hash), which records the id (journaled as an accepted id, kept across a restart) if no other
   * delivery claimed or committed it since the lease ended; counted in {@code dedup.kafka.lapsed.claims.recorded}.
   * Otherwise the other delivery decides: a DUPLICATE was committed by it, an IN_FLIGHT is held by it, and either may
   * have applied the effect a second time. Logged at WARNING with the id either way. The record is settled when the
   * check is answered; a 503 or a lost reply is retried after a backoff.
   *
   * @param refusal the commit's 409 message
   */
  private void recordLate(Item<K, V> it, String refusal) {
    DedupEvent e = new DedupEvent(it.identity.id()).setKey(it.identity.key())
        .setPayloadHash(it.identity.payloadHash());
    client.check(e).onComplete(ar -> onContext(() -> {
      if (stopped) {
        return;
      }
      if (ar.failed() && !(ar.cause() instanceof ReplyException re && re.failureCode() == DedupFailure.BAD_REQUEST)) {
        metrics.unavailable.increment();
        vertx.setTimer(backoff(++it.decisionRetries), t -> {
          if (!stopped) {
            recordLate(it, refusal);
          }
        });
        return;
      }
      String lapsed = tp + ": the claim of id '" + it.identity.id() + "' at offset " + it.record.offset()
          + " lapsed before its commit (" + refusal + "; a handler call must take less than half of leaseMs="
          + leaseMs + "): its effect is applied; ";
      if (ar.failed()) {
        LOG.log(System.Logger.Level.WARNING, lapsed + "the id could not be recorded: " + ar.cause());
      } else if (ar.result().verdict() == DedupVerdict.ACCEPTED) {
        metrics.lapsedClaimsRecorded.increment();
        LOG.log(System.Logger.Level.WARNING, lapsed + "no other delivery had claimed it, and it is now remembered");
      } else {
        LOG.log(System.Logger.Level.WARNING, lapsed + "another delivery of it is " + ar.result().verdict()
            + " (held or committed since the lease ended), so the effect may be applied twice");
      }
      it.commitAnswered = true;
      settleAnsweredCommits();
    }));
  }

  /**
   * Hands a record to the dead-letter handler, retrying it until it succeeds, then settles it. In effect-first
   * mode a record whose handler failed, or that was dead-lettered as unvouched, still holds its claim: it is
   * committed, so its id stays remembered.
   */
  private void deadLetter(Item<K, V> it, DeadLetter.Reason reason, String detail, Throwable cause) {
    busy = true;
    if (it.deadLetterTries == 0) {
      metrics.deadLetters(reason).increment();
    }
    it.deadLetterTries++;
    Future<Void> f;
    if (deadLetters == null) {
      LOG.log(System.Logger.Level.WARNING, tp + ": dead letter at offset " + it.record.offset() + " (" + reason
          + "): " + detail);
      f = Future.succeededFuture();
    } else {
      try {
        f = deadLetters.handle(new DeadLetter<>(it.record, reason, detail, it.attempts, cause));
        if (f == null) {
          f = Future.failedFuture(new NullPointerException("the dead-letter handler returned null"));
        }
      } catch (RuntimeException e) {
        f = Future.failedFuture(e);
      }
    }
    f.onComplete(ar -> onContext(() -> {
      if (stopped) {
        return;
      }
      if (ar.failed()) {
        LOG.log(System.Logger.Level.WARNING, tp + ": the dead-letter handler failed at offset "
            + it.record.offset() + ", retrying: " + ar.cause());
        vertx.setTimer(backoff(it.deadLetterTries), t -> {
          if (!stopped) {
            deadLetter(it, reason, detail, cause);
          }
        });
        return;
      }
      if (effectFirst && (reason == DeadLetter.Reason.HANDLER_FAILED || reason == DeadLetter.Reason.UNVOUCHED)) {
        pipelineCommit(it);
        pump();
        return;
      }
      busy = false;
      settle(it);
      pump();
    }));
  }

  /** Settles the head of {@code queue} (it needs no commit). */
  private void settle(Item<K, V> it) {
    queue.poll();
    settled(it);
  }

  /** Commits were answered: settles the run of answered commits at the head of {@code committing}. */
  private void settleAnsweredCommits() {
    Item<K, V> head;
    while ((head = committing.peek()) != null && head.commitAnswered) {
      committing.poll();
      settled(head);
    }
    pump();
  }

  private void settled(Item<K, V> it) {
    lastSettledNext = Math.max(lastSettledNext, it.record.offset() + 1);
    Item<K, V> waiting = committing.peek();
    // Never publish past a record whose commit is unanswered: every record before it is settled.
    settledNext = waiting == null ? lastSettledNext : Math.max(settledNext, waiting.record.offset());
    if (buffered.decrementAndGet() == resumeMark) {
      wakePoll.run();
    }
    metrics.records.increment();
  }

  /** The head no longer waits for a lease or a backoff: the poll loop may resume the partition. */
  private void stopWaiting() {
    if (wantsPause) {
      wantsPause = false;
      wakePoll.run();
    }
  }

  private void retryAfter(long delayMs, boolean redecide) {
    busy = true;
    timerRedecides = redecide;
    Item<K, V> it = queue.peek();
    timerId = vertx.setTimer(delayMs, id -> {
      timerId = -1;
      if (stopped) {
        return;
      }
      busy = false;
      if (redecide) {
        it.decision = null;
      }
      pump();
    });
  }

  /** Releases the claims of records whose handler has not started (all but {@code except}), forgetting them. */
  private void releaseUnstartedClaims(Item<K, V> except) {
    for (Item<K, V> it : queue) {
      if (it != except && it.decision != null && it.decision.verdict() == DedupVerdict.ACCEPTED
          && it.decision.claimToken() != null) {
        releaseClaim(it);
      }
    }
  }

  private void releaseClaim(Item<K, V> it) {
    client.release(claimEvent(it)).onFailure(e -> LOG.log(System.Logger.Level.DEBUG, tp
        + ": release failed, the claim will lapse: " + e));
    it.decision = null;
  }

  /**
   * Whether an accepted record is probably a redelivery the window no longer remembers: its Kafka timestamp (the
   * producer's create time, or the broker's append time, by the topic's {@code message.timestamp.type}) is more
   * than the window {@code W} before now. Seed 004: an id older than the window cannot be vouched for, so watch how
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

  /**
   * The detail of an {@link DeadLetter.Reason#UNVOUCHED} dead letter: the record's age (now minus its timestamp) and
   * the window, in milliseconds, and which limit it passed: older than the window; within it but older than the window
   * reaches back at bucket precision (from the start of the bucket after {@code now - W}); or older than the window's
   * memory (a window that began after the record: a first start, a new group, a window without a journal in a new
   * process).
   *
   * @param record the record (it has a timestamp: without one no event time was sent, and nothing is unvouched)
   * @param nowMs now, from the injected clock
   * @param windowMs the window {@code W} in milliseconds
   * @param bucketMs the window's bucket width in milliseconds
   * @return the detail
   */
  static String unvouchedDetail(ConsumerRecord<?, ?> record, long nowMs, long windowMs, long bucketMs) {
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
    return "the window cannot vouch for the record: its timestamp is " + ageMs + " ms old, " + why
        + ", and its id is not remembered";
  }

  private long backoff(int attempt) {
    int shift = Math.min(Math.max(attempt - 1, 0), 30);
    long d = backoffInitialMs << shift;
    return d <= 0 || d > backoffMaxMs ? backoffMaxMs : d;
  }

  private Item<K, V> identify(Item<K, V> it) {
    try {
      it.identity = identity.identify(it.record);
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
  private DedupEvent decisionEvent(Item<K, V> it) {
    RecordIdentity id = it.identity;
    DedupEvent e = new DedupEvent(id.id()).setKey(id.key()).setPayloadHash(id.payloadHash());
    long timestampMs = it.record.timestamp();
    if (recordTimestamps && timestampMs >= 0) {
      e.setEventTimeMs(timestampMs);
    }
    return effectFirst ? e.setClaimer(claimer) : e;
  }

  private static DedupEvent claimEvent(Item<?, ?> it) {
    return new DedupEvent(it.identity.id()).setKey(it.identity.key()).setClaimToken(it.decision.claimToken());
  }

  private void onContext(Runnable r) {
    if (Vertx.currentContext() == context) {
      r.run();
    } else {
      context.runOnContext(v -> r.run());
    }
  }

  /** One record between its arrival and its settlement. Event loop only. */
  private static final class Item<K, V> {
    final ConsumerRecord<K, V> record;
    RecordIdentity identity;
    String noIdentity;
    DedupResult decision;
    int attempts;
    int decisionRetries;
    int deadLetterTries;
    boolean commitAnswered;
    /** Accepted once already (a retried claim is not counted again in the beyond-window meter). */
    boolean acceptedBefore;
    /**
     * Effect-first: the earliest instant the window's lease of this record's latest claim can end (the claim's request
     * time plus {@code leaseMs}, on the injected clock).
     */
    long leaseEndMs;
    /** Effect-first: its claim was given back and made again by {@link #claimAgain} since its handler last started. */
    boolean claimedForLease;
    /** Its first acceptance was unvouched: the window could not vouch for its event time. */
    boolean unvouched;

    Item(ConsumerRecord<K, V> record) {
      this.record = record;
    }
  }
}
