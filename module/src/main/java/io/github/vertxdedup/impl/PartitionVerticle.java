package io.github.vertxdedup.impl;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.journal.CommittedOffsets;
import io.github.vertxdedup.journal.JournalLockedException;
import io.github.vertxdedup.journal.OffsetCommit;
import io.github.vertxdedup.window.DedupClock;
import io.github.vertxdedup.window.WindowFullException;
import io.github.vertxdedup.window.WindowStats;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.Objects;

/**
 * One partition of the dedup service: owns one window (in a {@link PartitionCore}) and one journal, listens on
 * {@code <address>.<partition>}, and answers every request on its own event loop, so nothing needs a lock.
 * Deployed by {@link io.github.vertxdedup.DedupVerticle}; internal.
 *
 * <h2>States</h2>
 * {@link State#RECOVERING} from deployment until the journal has opened and replayed (every request is answered 503
 * and nothing is accepted: the partition cannot vouch for anything yet), then {@link State#READY}. If another owner
 * holds the journal, the partition stays {@link State#RECOVERING} (503 "journal locked by another process") and
 * tries again with a backoff ({@value #RETRY_MIN_MS} ms doubling to {@value #RETRY_MAX_MS} ms); its deployment
 * completes meanwhile. Any other failure of the first recovery fails the deployment ({@link State#FAILED}).
 *
 * <p>A failed journal write means the decision is not in the journal. The partition goes back to
 * {@link State#RECOVERING} at once (it decides nothing more), fails that reply and every later waiting one with 503,
 * closes the journal, and reopens and replays it into a new, empty window (retrying with the backoff while that
 * fails), then answers again. So the window never keeps a decision that the journal lacks: the refused id is absent
 * and its redelivery is accepted once the journal works again (fail closed, nothing half-kept).
 *
 * <p>Undeploying moves it to {@link State#STOPPING}: new requests get 503 at once, the journal is flushed and
 * closed, the replies that waited for it are sent (or failed with 503 if their write did not complete), then the
 * consumer is unregistered.
 *
 * <h2>Replies and the journal</h2>
 * A request is decided at once (window and claims updated on the event loop), its state change handed to the
 * journal, and its reply held until every journal write issued up to then has completed; replies go out in decision
 * order. With the memory-only journal every write is already complete and the reply goes out at once. At most
 * {@code maxPending} replies wait; a request that finds the queue full gets a 503 and records nothing.
 *
 * <h2>Leases and retention</h2>
 * A periodic timer ({@value #TICK_MS} ms) forgets lapsed claims (counting them), asks the journal to run its
 * retention if due ({@link PartitionJournal#retain()}, off the event loop; so an idle partition's expired journal
 * files are deleted too) and publishes the metrics snapshot; a request that touches a lapsed claim forgets it at
 * once, so correctness never waits for the timer.
 */
public final class PartitionVerticle extends VerticleBase {

  /** Period of the lease sweep, the journal retention check and metrics publication, in milliseconds. */
  static final long TICK_MS = 1000;
  /** First delay before opening the journal again after a failed attempt, in milliseconds. */
  static final long RETRY_MIN_MS = 50;
  /** Longest delay between attempts to open the journal, in milliseconds. */
  static final long RETRY_MAX_MS = 2000;

  private static final System.Logger LOG = System.getLogger(PartitionVerticle.class.getName());

  /** Lifecycle of a partition. */
  public enum State {
    /**
     * Opening and replaying its journal (at start, after a failed write, or while another owner holds the journal):
     * answers 503, never ACCEPTED.
     */
    RECOVERING,
    /** Answering. */
    READY,
    /** The first recovery failed (the deployment failed): answers 503. */
    FAILED,
    /** Undeploying: answers 503, drains its waiting replies. */
    STOPPING
  }

  private final DedupOptions options;
  private final int partition;
  private final RequestClock clock;
  private final PartitionJournal journal;
  private final MeterRegistry registry;
  private final String address;
  private final ArrayDeque<Pending> pending = new ArrayDeque<>();

  private volatile State state = State.RECOVERING;
  private volatile String failure = "";
  private PartitionCore core;
  private CommittedOffsets offsets = new CommittedOffsets();
  private Promise<Void> started;
  private long retryTimerId = -1;
  private long retryDelayMs = RETRY_MIN_MS;
  private long journalReopens;
  private RequestDecoder decoder;
  private PartitionMetrics metrics;
  private MessageConsumer<Object> consumer;
  private long timerId = -1;
  private Future<?> watched;
  private long badRequests;
  private long stateConflicts;
  private long unavailable;
  private long internalErrors;

  /**
   * @param options validated options
   * @param partition this partition's number, {@code 0 .. partitions - 1}
   * @param clock the clock of the window and the leases
   * @param journal the journal (e.g. {@link MemoryJournal#INSTANCE})
   * @param registry where to register the meters, or null for none
   */
  public PartitionVerticle(DedupOptions options, int partition, DedupClock clock, PartitionJournal journal,
      MeterRegistry registry) {
    this.options = new DedupOptions(options);
    this.partition = partition;
    this.clock = new RequestClock(Objects.requireNonNull(clock, "clock"));
    this.journal = Objects.requireNonNull(journal, "journal");
    this.registry = registry;
    this.address = options.getAddress() + "." + partition;
  }

  /** @return the state now; readable from any thread */
  public State state() {
    return state;
  }

  /** @return why the partition is {@link State#FAILED} or {@link State#RECOVERING} again, or "" */
  public String failure() {
    return failure;
  }

  /** @return the address it listens on */
  public String address() {
    return address;
  }

  /** @return its partition number */
  public int partition() {
    return partition;
  }

  /**
   * Journals a committed consumer offset of {@code topic}/{@code topicPartition} in this partition's journal, for
   * the Kafka integration: a restart restores the highest offset recorded per topic-partition
   * ({@link #committedOffset}). Thread-safe: runs on this partition's context.
   *
   * @param topic the topic; not empty, at most 255 bytes in UTF-8
   * @param topicPartition the topic's partition, {@code >= 0}
   * @param offset the committed offset (the next offset to consume), {@code >= 0}
   * @return completes once the offset is durable under the journal's policy; fails with
   *     {@link IllegalArgumentException} for an invalid argument, {@link IllegalStateException} while the partition
   *     is not ready, or the journal's failure (the partition then reopens its journal)
   */
  public Future<Void> commitOffset(String topic, int topicPartition, long offset) {
    final OffsetCommit commit;
    try {
      commit = new OffsetCommit(topic, topicPartition, offset);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
    Promise<Void> p = Promise.promise();
    context.runOnContext(v -> {
      if (state != State.READY) {
        p.fail(new IllegalStateException(unavailableMessage(state)));
        return;
      }
      journal.offsetsCommitted(commit.topic(), commit.partition(), commit.offset()).onComplete(ar ->
          context.runOnContext(w -> {
            if (ar.succeeded()) {
              offsets.record(commit);
              p.complete();
            } else {
              writeFailed(ar.cause());
              p.fail(ar.cause());
            }
          }));
    });
    return p.future();
  }

  /**
   * Releases every live claim held by {@code claimer} (see {@code PartitionCore.releaseClaimsOf}), for the Kafka
   * integration: a consumer that takes a partition over calls it with its own instance id before it claims anything,
   * so the claims its previous run left open when it was killed are released at once rather than after their leases.
   * Thread-safe: runs on this partition's context.
   *
   * @param claimer the claimer (a consumer's instance id); not null
   * @return the number of claims released, once their releases are durable under the journal's policy; fails with
   *     {@link IllegalStateException} while the partition is not ready, or the journal's failure (the partition then
   *     reopens its journal, and the claims come back from it)
   */
  public Future<Integer> releaseClaimsOf(String claimer) {
    Objects.requireNonNull(claimer, "claimer");
    Promise<Integer> p = Promise.promise();
    context.runOnContext(v -> {
      if (state != State.READY) {
        p.fail(new IllegalStateException(unavailableMessage(state)));
        return;
      }
      int n;
      try {
        n = core.releaseClaimsOf(claimer);
      } catch (RuntimeException e) {
        p.fail(e);
        return;
      }
      if (n == 0) {
        p.complete(0);
        return;
      }
      core.lastWrite().onComplete(ar -> context.runOnContext(w -> {
        if (ar.succeeded()) {
          publish();
          p.complete(n);
        } else {
          writeFailed(ar.cause());
          p.fail(ar.cause());
        }
      }));
    });
    return p.future();
  }

  /**
   * Returns the highest committed offset this partition has recorded for a topic-partition: journaled before and
   * recovered at start, or committed since. Thread-safe: runs on this partition's context.
   *
   * @param topic the topic
   * @param topicPartition the topic's partition
   * @return the offset, or -1 if none was recorded
   */
  public Future<Long> committedOffset(String topic, int topicPartition) {
    Promise<Long> p = Promise.promise();
    context.runOnContext(v -> p.complete(offsets.get(topic, topicPartition)));
    return p.future();
  }

  @Override
  public Future<?> start() {
    core = new PartitionCore(options, partition, clock, journal);
    decoder = new RequestDecoder(options, partition);
    if (registry != null) {
      metrics = new PartitionMetrics(registry, options.getAddress(), partition, options.getWindowMs());
      core.duplicateAges(metrics::recordDuplicateAge);
    }
    started = Promise.promise();
    // Listen first, so that requests during recovery are answered 503 rather than finding no handler.
    consumer = vertx.eventBus().consumer(address, this::handle);
    consumer.completion().onComplete(ar -> {
      if (ar.failed()) {
        started.tryFail(ar.cause());
      } else {
        recover(true);
      }
    });
    return started.future();
  }

  /**
   * Opens and replays the journal into a new core, then answers. On failure: a locked journal, or any failure after
   * the first start, is retried with a backoff; any other failure of the first start fails the deployment.
   */
  private void recover(boolean first) {
    if (state == State.STOPPING) {
      return;
    }
    PartitionCore fresh = new PartitionCore(options, partition, clock, journal);
    fresh.carryCountersFrom(core);
    CommittedOffsets freshOffsets = new CommittedOffsets();
    long startNanos = System.nanoTime();
    onContext(journal.open())
        .compose(v -> onContext(journal.recover(new Sink(fresh, freshOffsets))))
        .onComplete(ar -> {
          if (state == State.STOPPING) {
            return; // stop() closes the journal and completes the undeployment
          }
          if (ar.succeeded()) {
            core = fresh;
            offsets = freshOffsets;
            failure = "";
            retryDelayMs = RETRY_MIN_MS;
            state = State.READY;
            if (timerId == -1) {
              timerId = vertx.setPeriodic(TICK_MS, id -> tick());
            }
            LOG.log(System.Logger.Level.INFO, journal instanceof MemoryJournal
                    ? "partition {0}: ready in {1} ms, memory only (no journal), {2} entries held"
                    : "partition {0}: ready {1} ms after its journal began to open, {2} entries held",
                address, (System.nanoTime() - startNanos) / 1_000_000, fresh.windowStats().held());
            publish();
            started.tryComplete();
            return;
          }
          Throwable cause = ar.cause();
          boolean locked = isLocked(cause);
          if (first && !locked) {
            failure = "recovery failed: " + cause;
            state = State.FAILED;
            publish();
            journal.close().onComplete(v -> started.tryFail(cause));
            return;
          }
          failure = locked
              ? "journal locked by another process (" + cause.getMessage() + "); retrying"
              : "journal recovery failed (" + cause + "); retrying";
          LOG.log(locked ? System.Logger.Level.INFO : System.Logger.Level.WARNING, "partition " + address + ": "
              + failure + " in " + retryDelayMs + " ms", locked ? null : cause);
          publish();
          // The deployment completes while another owner holds the journal: this partition answers 503 until it can
          // take the journal over.
          started.tryComplete();
          journal.close().onComplete(v -> context.runOnContext(w -> scheduleRetry()));
        });
  }

  private void scheduleRetry() {
    if (state == State.STOPPING) {
      return;
    }
    long delay = retryDelayMs;
    retryDelayMs = Math.min(RETRY_MAX_MS, retryDelayMs * 2);
    retryTimerId = vertx.setTimer(delay, id -> {
      retryTimerId = -1;
      recover(false);
    });
  }

  private static boolean isLocked(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof JournalLockedException) {
        return true;
      }
    }
    return false;
  }

  @Override
  public Future<?> stop() {
    state = State.STOPPING;
    if (timerId != -1) {
      vertx.cancelTimer(timerId);
    }
    if (retryTimerId != -1) {
      vertx.cancelTimer(retryTimerId);
    }
    Promise<Void> drained = Promise.promise();
    journal.close().onComplete(ar -> context.runOnContext(v -> {
      if (ar.failed()) {
        LOG.log(System.Logger.Level.WARNING, "partition " + partition + ": journal close failed", ar.cause());
      }
      drainPending();
      // Writes that did not complete even after the flush: their outcome is unknown to us, never leave them hanging.
      Pending p;
      while ((p = pending.poll()) != null) {
        p.message.fail(DedupFailure.UNAVAILABLE, "partition " + partition + " is stopping and the journal write of"
            + " this decision did not complete; retry after it restarts");
      }
      publish();
      if (metrics != null) {
        metrics.close();
      }
      drained.complete();
    }));
    return drained.future().compose(v -> consumer.unregister());
  }

  // ---------------------------------------------------------------------------------------------------------------

  private void handle(Message<Object> msg) {
    serve(msg.body(), msg.headers().get(DedupAction.HEADER), new BusReply(msg));
  }

  /**
   * Answers a request of the local codec in this JVM without the event bus: the same decoding, decisions, journal
   * writes, reply ordering and failures as a request sent to {@link #address()} with the local codec, minus the
   * event bus's registration, timeout and codec lookup. The in-process shortcut of the Kafka integration
   * ({@link #inProcessClient()}). Called on this partition's context the request is decided before this method
   * returns, and its future is already complete unless its reply waits for a journal write; from another thread
   * it is handed to the context first.
   *
   * @param request the request
   * @return the reply body the local codec would carry ({@link DedupResult}, {@link BatchReply},
   *     {@link CommitBatchReply}, {@code DedupLookup} or the stats {@link JsonObject}); fails with a
   *     {@link ReplyException} of type {@link ReplyFailure#RECIPIENT_FAILURE} whose code is one of
   *     {@link DedupFailure}, exactly when the event-bus request would, and with {@link DedupFailure#UNAVAILABLE}
   *     before this verticle is deployed (it has no context to answer on yet)
   */
  <T> Future<T> serveLocal(LocalRequest request) {
    Promise<T> p = Promise.promise();
    if (context == null) {
      new PromiseReply<>(p).fail(DedupFailure.UNAVAILABLE, "partition " + partition + " is not deployed yet;"
          + " nothing accepted, retry once it is");
    } else if (Vertx.currentContext() == context) {
      serve(request, null, new PromiseReply<>(p));
    } else {
      context.runOnContext(v -> serve(request, null, new PromiseReply<>(p)));
    }
    return p.future();
  }

  /**
   * A client of this partition alone that calls it in-process ({@link #serveLocal}): same contract as a
   * {@link DedupClient} with the local codec addressed to this partition, no event bus.
   *
   * @return the client; thread-safe
   */
  public DedupClient inProcessClient() {
    return new InProcessClient(this);
  }

  /** @return the context this partition runs on (set once deployed) */
  public Context context() {
    return context;
  }

  private void serve(Object body, String actionHeader, ReplySink msg) {
    State s = state;
    if (s != State.READY) {
      unavailable++;
      msg.fail(DedupFailure.UNAVAILABLE, unavailableMessage(s));
      return;
    }
    if (pending.size() >= options.getMaxPending()) {
      unavailable++;
      msg.fail(DedupFailure.UNAVAILABLE, "partition " + partition + " pending queue full: maxPending="
          + options.getMaxPending() + " replies wait for their journal write; nothing recorded, retry later");
      return;
    }
    Object reply;
    try {
      reply = dispatch(body, actionHeader);
    } catch (RequestFailure f) {
      if (f.code() == DedupFailure.BAD_REQUEST) {
        badRequests++;
      } else if (f.code() == DedupFailure.STATE_CONFLICT) {
        stateConflicts++;
      } else {
        unavailable++;
      }
      msg.fail(f.code(), f.getMessage());
      return;
    } catch (WindowFullException e) {
      unavailable++;
      msg.fail(DedupFailure.UNAVAILABLE, "partition " + partition + " window full (maxIdsPerPartition="
          + options.getMaxIdsPerPartition() + "): " + e.getMessage() + "; nothing recorded, retry later");
      return;
    } catch (IllegalArgumentException e) {
      // The window's own checks; with the clock pinned per request they repeat the decoder's, so this is a backstop.
      badRequests++;
      msg.fail(DedupFailure.BAD_REQUEST, e.getMessage());
      return;
    } catch (RuntimeException e) {
      internalErrors++;
      LOG.log(System.Logger.Level.ERROR, "partition " + partition + ": internal error", e);
      msg.fail(DedupFailure.INTERNAL_ERROR, "partition " + partition + " internal error: " + e);
      return;
    }
    Future<?> write = core.lastWrite();
    if (pending.isEmpty() && write.isComplete() && write.succeeded()) {
      msg.reply(reply);
      return;
    }
    pending.add(new Pending(msg, reply, write));
    if (write.isComplete()) {
      if (write.failed()) {
        // Not in the journal: decide nothing more; the reopen drains the queue and refuses this reply.
        writeFailed(write.cause());
      }
      return;
    }
    if (write != watched) {
      watched = write;
      write.onComplete(ar -> context.runOnContext(v -> drainPending()));
    }
  }

  private Object dispatch(Object body, String actionHeader) {
    // One clock reading for the whole request: validation and every decision of a batch see the same instant.
    clock.pin();
    try {
      return dispatchPinned(body, actionHeader);
    } finally {
      clock.unpin();
    }
  }

  private Object dispatchPinned(Object body, String actionHeader) {
    if (body instanceof LocalRequest r) {
      long now = clock.nowMs();
      return switch (r.action) {
        case CHECK -> core.check(decoder.decode(r.event, DedupAction.CHECK, now, -1));
        case CLAIM -> core.claim(decoder.decode(r.event, DedupAction.CLAIM, now, -1));
        case COMMIT -> core.commit(decoder.decode(r.event, DedupAction.COMMIT, now, -1));
        case RELEASE -> core.release(decoder.decode(r.event, DedupAction.RELEASE, now, -1));
        case LOOKUP -> core.lookup(decoder.decode(r.event, DedupAction.LOOKUP, now, -1));
        case STATS -> stats();
        case CHECK_BATCH -> new BatchReply(countRefusals(
            core.batch(decoder.decodeBatch(r.events, DedupAction.CHECK, now), false)));
        case CLAIM_BATCH -> new BatchReply(countRefusals(
            core.batch(decoder.decodeBatch(r.events, DedupAction.CLAIM, now), true)));
        case COMMIT_BATCH -> new CommitBatchReply(countConflicts(
            core.commitBatch(decoder.decodeBatch(r.events, DedupAction.COMMIT, now))));
      };
    }
    DedupAction action = RequestDecoder.action(actionHeader);
    if (action == DedupAction.STATS) {
      RequestDecoder.requireStatsBody(body);
      return stats();
    }
    JsonObject json = RequestDecoder.requireObject(body);
    long now = clock.nowMs();
    return switch (action) {
      case CHECK -> core.check(decoder.decode(json, action, now, -1)).toJson();
      case CLAIM -> core.claim(decoder.decode(json, action, now, -1)).toJson();
      case COMMIT -> core.commit(decoder.decode(json, action, now, -1)).toJson();
      case RELEASE -> core.release(decoder.decode(json, action, now, -1)).toJson();
      case LOOKUP -> core.lookup(decoder.decode(json, action, now, -1)).toJson();
      case CHECK_BATCH -> batchJson(countRefusals(
          core.batch(decoder.decodeBatch(json, DedupAction.CHECK, now), false)));
      case CLAIM_BATCH -> batchJson(countRefusals(
          core.batch(decoder.decodeBatch(json, DedupAction.CLAIM, now), true)));
      case COMMIT_BATCH -> commitBatchJson(countConflicts(
          core.commitBatch(decoder.decodeBatch(json, DedupAction.COMMIT, now))));
      case STATS -> throw new IllegalStateException("unreachable");
    };
  }

  private static JsonObject batchJson(DedupBatchResult[] results) {
    JsonArray verdicts = new JsonArray(new java.util.ArrayList<>(results.length));
    for (DedupBatchResult r : results) {
      verdicts.add(r.toJson());
    }
    return new JsonObject().put("verdicts", verdicts);
  }

  /** Counts each failed element of a checkBatch or claimBatch as a single failed request would be counted. */
  private DedupBatchResult[] countRefusals(DedupBatchResult[] results) {
    for (DedupBatchResult r : results) {
      countFailure(r.failureCode());
    }
    return results;
  }

  /** Counts each failed element of a commitBatch as a single failed commit would be counted. */
  private DedupCommitResult[] countConflicts(DedupCommitResult[] results) {
    for (DedupCommitResult r : results) {
      countFailure(r.failureCode());
    }
    return results;
  }

  /** Counts the failure of one element of a batch by its code; 0 (no failure) counts nothing. */
  private void countFailure(int code) {
    if (code == DedupFailure.STATE_CONFLICT) {
      stateConflicts++;
    } else if (code == DedupFailure.BAD_REQUEST) {
      badRequests++;
    } else if (code != 0) {
      unavailable++;
    }
  }

  private static JsonObject commitBatchJson(DedupCommitResult[] results) {
    JsonArray array = new JsonArray(new java.util.ArrayList<>(results.length));
    for (DedupCommitResult r : results) {
      array.add(r.toJson());
    }
    return new JsonObject().put("results", array);
  }

  private JsonObject stats() {
    core.sweepExpiredLeases();
    JsonObject s = core.statsJson()
        .put("state", state.name())
        .put("pending", pending.size())
        .put("badRequests", badRequests)
        .put("stateConflicts", stateConflicts)
        .put("unavailable", unavailable)
        .put("internalErrors", internalErrors)
        .put("journalReopens", journalReopens);
    publish();
    return s;
  }

  private void tick() {
    core.sweepExpiredLeases();
    if (state == State.READY) {
      journal.retain();
    }
    publish();
  }

  private void publish() {
    if (metrics == null || core == null) {
      return;
    }
    WindowStats w = core.windowStats();
    metrics.publish(new PartitionMetrics.Snapshot(core.acceptedCount, core.duplicateCount, core.conflictCount,
        core.inFlightCount, core.unknownCount, core.unvouchedCount, core.lateDeliveries, core.expiredLeases,
        w.earlyEvictions(), w.rejected() + core.capacityRejects, w.held(), core.claimsHeld(), w.bytesPerHeldId(),
        pending.size(), state == State.READY));
  }

  /**
   * Sends every waiting reply whose journal write (and every earlier one) has completed, in order. A failed write
   * refuses its reply and every later one (decided after it, so possibly on top of it) and starts the reopen.
   */
  private void drainPending() {
    Pending p;
    while ((p = pending.peek()) != null && p.write.isComplete()) {
      if (p.write.failed()) {
        Throwable cause = p.write.cause();
        writeFailed(cause);
        failPending();
        return;
      }
      pending.poll();
      p.message.reply(p.reply);
    }
  }

  private void failPending() {
    Pending p;
    while ((p = pending.poll()) != null) {
      p.message.fail(DedupFailure.UNAVAILABLE, unavailableMessage(state) + ": the journal write of this decision "
          + "failed or follows one that failed; nothing of it is kept");
    }
  }

  /**
   * A journal write failed: its decision is in the window but not in the journal. Stop deciding, close the journal
   * (which settles the writes issued before the failed one), refuse what waits from the failed write on, then
   * reopen the journal and rebuild the window from it.
   */
  private void writeFailed(Throwable cause) {
    if (state != State.READY) {
      return;
    }
    state = State.RECOVERING;
    journalReopens++;
    failure = "journal write failed: " + cause.getMessage() + "; reopening the journal";
    LOG.log(System.Logger.Level.ERROR, "partition " + address + ": " + failure, cause);
    publish();
    journal.close().onComplete(ar -> context.runOnContext(v -> {
      if (ar.failed()) {
        LOG.log(System.Logger.Level.WARNING, "partition " + address + ": closing the failed journal failed",
            ar.cause());
      }
      drainPending();
      failPending();
      recover(false);
    }));
  }

  private String unavailableMessage(State s) {
    return switch (s) {
      case RECOVERING -> "partition " + partition + " is recovering its window" + (failure.isEmpty() ? ""
          : " (" + failure + ")") + "; nothing accepted yet, retry later";
      case STOPPING -> "partition " + partition + " is stopping; retry after it restarts";
      case FAILED -> "partition " + partition + " is unavailable: " + failure;
      case READY -> "partition " + partition + " is ready";
    };
  }

  /** The same outcome, delivered on this partition's context whatever thread completes the journal's future. */
  private <T> Future<T> onContext(Future<T> f) {
    Promise<T> p = Promise.promise();
    f.onComplete(ar -> context.runOnContext(v -> p.handle(ar)));
    return p.future();
  }

  /** A decided request whose reply waits for a journal write. */
  private record Pending(ReplySink message, Object reply, Future<?> write) {}

  /** Where a request's answer goes: its event-bus message, or the future of an in-process call. */
  private interface ReplySink {
    void reply(Object body);

    void fail(int code, String message);
  }

  private record BusReply(Message<Object> message) implements ReplySink {
    @Override
    public void reply(Object body) {
      message.reply(body);
    }

    @Override
    public void fail(int code, String text) {
      message.fail(code, text);
    }
  }

  private record PromiseReply<T>(Promise<T> promise) implements ReplySink {
    @Override
    @SuppressWarnings("unchecked")
    public void reply(Object body) {
      promise.complete((T) body);
    }

    @Override
    public void fail(int code, String text) {
      promise.fail(new ReplyException(ReplyFailure.RECIPIENT_FAILURE, code, text));
    }
  }

  /** Recovery calls, on this partition's context, into the core being rebuilt. */
  private static final class Sink implements PartitionJournal.RecoverySink {

    private final PartitionCore core;
    private final CommittedOffsets offsets;

    Sink(PartitionCore core, CommittedOffsets offsets) {
      this.core = core;
      this.offsets = offsets;
    }

    @Override
    public void restore(long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs) {
      core.restore(fingerprint, payloadHash, firstSeenMs, expiresAtMs);
    }

    @Override
    public void restoreBatch(long[] fingerprints, long[] payloadHashes, long[] firstSeenMs, long[] expiresAtMs,
        int length) {
      core.restoreBatch(fingerprints, payloadHashes, firstSeenMs, expiresAtMs, length);
    }

    @Override
    public void restoreClaim(long idFingerprint, long keyFingerprint, long payloadHash, String claimToken,
        long claimedAtMs, long leaseEndMs, long rememberUntilMs, String claimer) {
      core.restoreClaim(idFingerprint, keyFingerprint, payloadHash, claimToken, claimedAtMs, leaseEndMs,
          rememberUntilMs, claimer);
    }

    @Override
    public void memoryBegins(long memoryBeginsMs) {
      core.memoryBegins(memoryBeginsMs);
    }

    @Override
    public void restoreOffset(String topic, int partition, long offset) {
      offsets.record(topic, partition, offset);
    }
  }
}
