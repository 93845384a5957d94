package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.kafka.impl.HeadWait.State;
import io.vertx.core.Future;
import io.vertx.core.eventbus.ReplyException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The decisions of a {@link PartitionOwner}: the runs of its queue it sends to the window ({@code checkBatch} in
 * record-first mode, {@code claimBatch} in effect-first mode, or the single request for a run of one), and what it
 * does with the answers. A run is decided from the head when the head is undecided ({@link #decide}); in record-first
 * mode the next runs are also checked ahead while earlier ones wait for their offset commits ({@link #askForCommit},
 * {@link #decideAhead}). A refused element leaves its record undecided; a batch that fails whole is decided again one
 * record at a time to find its bad identity, which goes to the owner's dead-letter path; a 503 or a lost reply backs
 * the head off. Effect-first claims are given back here too ({@link #releaseClaim}).
 *
 * <p>While a decision is on its way the head waits ({@link State#DECIDING}); the answer pumps the owner again.
 *
 * <p>Event loop of its owner only.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class RunDecisions<K, V> {

  /** Logged under the owner's name: one logger for a partition's records. */
  private static final Logger LOG = LoggerFactory.getLogger(PartitionOwner.class);

  /** The owner's parts the decisions read and move. */
  private final Parts<K, V> owner;
  private final ChangelogBuffer changelog;
  private final Runnable pump;
  private final BiConsumer<PendingRecord<K, V>, String> invalidIdentity;
  /** Record-first: a run decided ahead failed up to this offset; the records up to it are decided from the head. */
  private long decideAheadNotBefore = -1;

  /**
   * @param owner the owner's parts the decisions read and move: its configuration, partition, window, meters, loop,
   *     record events, failure policy, commit pipeline, claim leases, queue, head and offset gate
   * @param changelog the accepted ids the next offset commits write to the changelog topic, or null without one
   * @param pump runs the owner's pump again, once an answer came
   * @param invalidIdentity hands a record whose identity the window refused (400) to the owner's dead-letter path,
   *     with the window's message
   */
  RunDecisions(Parts<K, V> owner, ChangelogBuffer changelog, Runnable pump,
      BiConsumer<PendingRecord<K, V>, String> invalidIdentity) {
    this.owner = owner;
    this.changelog = changelog;
    this.pump = pump;
    this.invalidIdentity = invalidIdentity;
  }

  /** The parts of a {@link PartitionOwner} its decisions share with it. */
  record Parts<K, V>(OwnerConfig<K, V> config, TopicPartition tp, LocalPartition client, KafkaMetrics metrics,
      OwnerLoop loop, RecordEvents<K, V> events, FailurePolicy<K, V> failures, CommitPipeline<K, V> commits,
      ClaimLeases leases, RecordQueue<K, V> queue, HeadWait head, OffsetGate gate) {
  }

  /**
   * Record-first: asks the poll thread to commit the offset after the decided prefix (every record of it is
   * recorded in the window, a duplicate, or without identity), unless that was asked for already or the gate is shut.
   * One commit then covers the whole decided run.
   */
  void askForCommit() {
    long next = owner.queue().decidedNext();
    if (owner.gate().want(next)) {
      owner.commits().decided(next);
      owner.config().wakePoll.run();
    }
  }

  /**
   * Record-first: checks the next run while the decided prefix waits for its offset commit, if fewer than
   * {@code maxUnansweredOffsetCommits} commits are awaited, so a commit's round trip overlaps the next runs' decisions
   * and commits instead of stopping the partition. The runs checked and not handled, each waiting for its commit, are
   * what a kill loses: at most {@code maxUnansweredOffsetCommits} of them. Called right after {@link #askForCommit}.
   *
   * @return true if a decision was started
   */
  boolean decideAhead() {
    if (owner.loop().fenced() || !owner.gate().roomAhead(owner.config().maxUnansweredOffsetCommits)) {
      return false;
    }
    List<PendingRecord<K, V>> run = owner.queue().runAhead(decideAheadNotBefore);
    if (run.isEmpty()) {
      return false;
    }
    decide(run, true);
    return true;
  }

  // --- deciding ----------------------------------------------------------------------------------------------------

  void decide() {
    // A record of an id handled earlier is decided after that record's commit was sent (same route): it then finds
    // the id committed (a duplicate), not its claim (IN_FLIGHT, which would wait for a lease).
    owner.commits().flush();
    List<PendingRecord<K, V>> run = owner.queue().nextRun();
    if (owner.config().effectFirst) {
      owner.leases().claiming(run);
    }
    decide(run, false);
  }

  /**
   * Sends {@code run} to the window in one request and takes the answer. The head waits meanwhile (DECIDING).
   *
   * @param run the records, in offset order
   * @param ahead whether the run is decided ahead of the head ({@link #decideAhead}): a failure then leaves its
   *     records undecided for the head to decide, with the head's backoff and bad-identity search
   */
  private void decide(List<PendingRecord<K, V>> run, boolean ahead) {
    owner.head().set(State.DECIDING);
    boolean batch = run.size() > 1;
    Future<List<DedupBatchResult>> f;
    if (batch) {
      List<DedupEvent> requests = new ArrayList<>(run.size());
      for (PendingRecord<K, V> pending : run) {
        requests.add(owner.events().decision(pending));
      }
      f = owner.config().effectFirst ? owner.client().claimBatch(requests) : owner.client().checkBatch(requests);
    } else {
      DedupEvent e = owner.events().decision(run.get(0));
      f = (owner.config().effectFirst ? owner.client().claim(e) : owner.client().check(e))
          .map(r -> List.of(DedupBatchResult.decided(r)));
    }
    owner.loop().whenComplete(f, ar -> {
      owner.head().set(State.IDLE);
      if (ahead && (ar.failed() || refusedAny(ar.result()))) {
        // Decided again from the head, which backs off or searches for the bad identity as it does for its own runs.
        decideAheadNotBefore = run.get(run.size() - 1).offset();
        LOG.debug("{}: a run checked ahead at offsets {}..{} failed, decided again from the head: {}", owner.tp(),
            run.get(0).offset(), decideAheadNotBefore, ar.failed() ? ar.cause().toString() : "an element refused");
      }
      if (ar.succeeded()) {
        batchDecided(run, ar.result(), ahead);
      } else if (!ahead) {
        // A single request refused with 400 names the bad identity; a batch fails whole on one: decide it singly.
        decisionFailed(run.get(0), ar.cause(), batch);
        if (batch && owner.head().idle()) {
          owner.queue().decideSingly(run.size());
        }
      }
      pump.run();
    });
  }

  /**
   * Takes the elements of a decision batch, one per record of {@code run}. A refused record (a new id a full window
   * has no room for) is left undecided while the others keep their verdicts, so the duplicates before it become
   * committable and those after it wait only for it: the head backs off at once if it is the one refused, and a later
   * refused record is decided again when it reaches the head. Effect-first gives back a claim decided after a refused
   * record (it would hold the room the refused one waits for, and run its lease during that record's backoff), and
   * every claim decided once fenced.
   */
  private void batchDecided(List<PendingRecord<K, V>> run, List<DedupBatchResult> results, boolean ahead) {
    long now = owner.config().clock.nowMs();
    boolean refused = false;
    for (int i = 0; i < run.size(); i++) {
      PendingRecord<K, V> pending = run.get(i);
      DedupBatchResult r = results.get(i);
      if (r.failed()) {
        if (i == 0 && !ahead) {
          decisionFailed(pending, r.cause(), false);
        }
        refused = true;
        continue;
      }
      if (pending.decided(r.result())) {
        owner.metrics().firstAcceptance(pending, owner.config().deadLetterNotCovered, now, owner.config().windowMs);
        if (changelog != null && !owner.config().effectFirst) {
          // Record-first: the check recorded the id. Effect-first records it with the claim's commit.
          changelog.accepted(pending, now, owner.config().windowMs);
        }
      }
      if (owner.config().effectFirst && pending.decision.verdict() == DedupVerdict.ACCEPTED
          && (refused || owner.loop().fenced())) {
        releaseClaim(pending);
      }
    }
  }

  /** @return true if the window refused an element of a decision batch */
  private static boolean refusedAny(List<DedupBatchResult> results) {
    for (DedupBatchResult r : results) {
      if (r.failed()) {
        return true;
      }
    }
    return false;
  }

  /** A 503 (or a lost reply) backs off and decides again; a 400 names a field of the identity: dead letter. */
  private void decisionFailed(PendingRecord<K, V> pending, Throwable cause, boolean batch) {
    int code = cause instanceof ReplyException re ? re.failureCode() : -1;
    if (code == DedupFailure.BAD_REQUEST) {
      if (!batch) {
        invalidIdentity.accept(pending, cause.getMessage());
      }
      // A batch fails whole on one bad event: the caller decides its records one by one to find it.
      return;
    }
    owner.metrics().unavailable.increment();
    owner.head().pauseWanted();
    LOG.debug("{}: decision refused, retrying: {}", owner.tp(), cause.toString());
    owner.head().backOff(owner.failures().backoffMs(++pending.requestRetries), State.BACKING_OFF_TO_DECIDE,
        owner.queue().head(), pump);
  }

  /** Releases the claims of records whose handler has not started (all but {@code except}), forgetting them. */
  void releaseUnstartedClaims(PendingRecord<K, V> except) {
    for (PendingRecord<K, V> pending : owner.queue().unstartedClaims(except)) {
      releaseClaim(pending);
    }
  }

  /** Gives the record's claim back and forgets its decision; a failed release is logged, and the claim lapses. */
  Future<?> releaseClaim(PendingRecord<K, V> pending) {
    Future<?> f = owner.client().release(RecordEvents.claim(pending)).onFailure(e ->
        LOG.debug("{}: release failed, the claim will lapse: {}", owner.tp(), e.toString()));
    pending.decision = null;
    return f;
  }
}
