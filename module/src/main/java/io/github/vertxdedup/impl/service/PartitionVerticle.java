package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.impl.journal.NoJournal;
import io.github.vertxdedup.impl.journal.PartitionJournal;
import io.github.vertxdedup.impl.protocol.LocalRequest;
import io.github.vertxdedup.journal.CommittedOffsets;
import io.github.vertxdedup.journal.OffsetCommit;
import io.github.vertxdedup.window.DedupClock;
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
import io.vertx.core.json.JsonObject;
import java.util.Objects;

/**
 * The lifecycle of one partition of the dedup service: owns one window (in a {@link PartitionCore}) and one journal,
 * listens on {@code <address>.<partition>}, and answers every request on its own event loop, so nothing needs a lock.
 * Deployed by {@link io.github.vertxdedup.DedupVerticle}; internal. It moves the partition through its states and
 * hands the work to its parts: {@link PartitionRequests} decodes and decides a request, {@link PendingReplies} holds
 * replies until their journal write completes, {@link PartitionRecovery} rebuilds the partition from its journal (with
 * a backoff on the injected {@link PartitionTimer}), and {@link PartitionCounters} counts.
 *
 * <h2>States</h2>
 * {@link State#RECOVERING} from deployment until the journal has opened and replayed (every request is answered 503
 * and nothing is accepted: the partition cannot vouch for anything yet), then {@link State#READY}. If another owner
 * holds the journal, the partition stays {@link State#RECOVERING} (503 "journal locked by another process") and
 * tries again with a backoff ({@value PartitionRecovery#RETRY_MIN_MS} ms doubling to
 * {@value PartitionRecovery#RETRY_MAX_MS} ms); its deployment completes meanwhile. Any other failure of the first
 * recovery fails the deployment ({@link State#FAILED}).
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
 * journal, and its reply held until every journal write issued up to then has completed ({@link PendingReplies});
 * replies go out in decision order. At most {@code maxPending} replies wait; a request that finds the queue full gets
 * a 503 and records nothing.
 *
 * <h2>Leases and retention</h2>
 * A periodic timer ({@value #TICK_MS} ms) forgets lapsed claims (counting them), asks the journal to run its
 * retention if due ({@link PartitionJournal#retain()}, off the event loop; so an idle partition's expired journal
 * files are deleted too) and publishes the metrics snapshot; a request that touches a lapsed claim forgets it at
 * once, so correctness never waits for the timer.
 *
 * <h2>Threads</h2>
 * Everything runs on the partition's event loop, except {@link #state()}, {@link #failure()}, {@link #address()} and
 * {@link #partition()}, which any thread may read, and the public operations that return a future, which any thread
 * may call: they hand their work to the partition's context.
 */
public final class PartitionVerticle extends VerticleBase {

  /** Period of the lease sweep, the journal retention check and metrics publication, in milliseconds. */
  static final long TICK_MS = 1000;

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
  /** The partition's counters, for its whole deployment: every core rebuilt from the journal counts into them. */
  private final PartitionCounters counters = new PartitionCounters();

  private volatile State state = State.RECOVERING;
  private volatile String failure = "";
  private PartitionTimer timer;
  private PartitionCore core;
  private CommittedOffsets offsets = new CommittedOffsets();
  private Promise<Void> started;
  private PartitionRequests requests;
  private PendingReplies pending;
  private PartitionRecovery recovery;
  private PartitionMetrics metrics;
  private MessageConsumer<Object> consumer;
  private long timerId = -1;

  /**
   * @param options validated options
   * @param partition this partition's number, {@code 0 .. partitions - 1}
   * @param clock the clock of the window and the leases
   * @param journal the journal (e.g. {@link NoJournal#INSTANCE})
   * @param registry where to register the meters, or null for none
   */
  public PartitionVerticle(DedupOptions options, int partition, DedupClock clock, PartitionJournal journal,
      MeterRegistry registry) {
    this(options, partition, clock, journal, registry, null);
  }

  /**
   * @param options validated options
   * @param partition this partition's number, {@code 0 .. partitions - 1}
   * @param clock the clock of the window and the leases
   * @param journal the journal (e.g. {@link NoJournal#INSTANCE})
   * @param registry where to register the meters, or null for none
   * @param timer the timers of the tick and of the recovery's backoff, or null for Vert.x timers
   */
  PartitionVerticle(DedupOptions options, int partition, DedupClock clock, PartitionJournal journal,
      MeterRegistry registry, PartitionTimer timer) {
    this.timer = timer;
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
    if (timer == null) {
      timer = PartitionTimer.of(vertx);
    }
    core = newCore();
    requests = new PartitionRequests(options, partition, clock, counters, this::stats);
    pending = new PendingReplies(options.getMaxPending(), context, this::drainPending);
    recovery = new PartitionRecovery(journal, timer, context, this::newCore, new Recovery());
    if (registry != null) {
      metrics = new PartitionMetrics(registry, options.getAddress(), partition, options.getWindowMs());
      counters.duplicateAges(metrics::recordDuplicateAge);
    }
    started = Promise.promise();
    // Listen first, so that requests during recovery are answered 503 rather than finding no handler.
    consumer = vertx.eventBus().consumer(address, this::handle);
    consumer.completion().onComplete(ar -> {
      if (ar.failed()) {
        started.tryFail(ar.cause());
      } else {
        recovery.recover(true);
      }
    });
    return started.future();
  }

  private PartitionCore newCore() {
    return new PartitionCore(options, partition, clock, journal, counters);
  }

  @Override
  public Future<?> stop() {
    state = State.STOPPING;
    if (timerId != -1) {
      timer.cancel(timerId);
    }
    recovery.cancel();
    Promise<Void> drained = Promise.promise();
    journal.close().onComplete(ar -> context.runOnContext(v -> {
      if (ar.failed()) {
        LOG.log(System.Logger.Level.WARNING, "partition " + partition + ": journal close failed", ar.cause());
      }
      drainPending();
      // Writes that did not complete even after the flush: their outcome is unknown to us, never leave them hanging.
      pending.failAll(DedupFailure.UNAVAILABLE, "partition " + partition + " is stopping and the journal write of"
          + " this decision did not complete; retry after it restarts");
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
    serve(msg.body(), msg.headers().get(DedupAction.HEADER), ReplySink.of(msg));
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
   * @return the reply body the local codec would carry ({@link DedupResult}, {@code BatchReply},
   *     {@code CommitBatchReply}, {@code DedupLookup} or the stats {@link JsonObject}); fails with a
   *     {@link ReplyException} of type {@link ReplyFailure#RECIPIENT_FAILURE} whose code is one of
   *     {@link DedupFailure}, exactly when the event-bus request would, and with {@link DedupFailure#UNAVAILABLE}
   *     before this verticle is deployed (it has no context to answer on yet)
   */
  <T> Future<T> serveLocal(LocalRequest request) {
    Promise<T> p = Promise.promise();
    if (context == null) {
      ReplySink.of(p).fail(DedupFailure.UNAVAILABLE, "partition " + partition + " is not deployed yet;"
          + " nothing accepted, retry once it is");
    } else if (Vertx.currentContext() == context) {
      serve(request, null, ReplySink.of(p));
    } else {
      context.runOnContext(v -> serve(request, null, ReplySink.of(p)));
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
      counters.unavailable++;
      msg.fail(DedupFailure.UNAVAILABLE, unavailableMessage(s));
      return;
    }
    if (pending.isFull()) {
      counters.unavailable++;
      msg.fail(DedupFailure.UNAVAILABLE, "partition " + partition + " pending queue full: maxPending="
          + options.getMaxPending() + " replies wait for their journal write; nothing recorded, retry later");
      return;
    }
    Object reply = requests.decide(core, body, actionHeader, msg);
    if (reply == PartitionRequests.REFUSED) {
      return;
    }
    Throwable failed = pending.send(msg, reply, core.lastWrite());
    if (failed != null) {
      // Not in the journal: decide nothing more; the reopen drains the queue and refuses this reply.
      writeFailed(failed);
    }
  }

  private JsonObject stats() {
    core.sweepExpiredLeases();
    JsonObject s = core.statsJson()
        .put("state", state.name())
        .put("pending", pending.size())
        .put("badRequests", counters.badRequests)
        .put("stateConflicts", counters.stateConflicts)
        .put("unavailable", counters.unavailable)
        .put("internalErrors", counters.internalErrors)
        .put("journalReopens", counters.journalReopens);
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
    metrics.publish(counters.snapshot(core.windowStats(), core.claimsHeld(), pending.size(), state == State.READY));
  }

  /**
   * Sends every waiting reply whose journal write (and every earlier one) has completed, in order. A failed write
   * refuses its reply and every later one (decided after it, so possibly on top of it) and starts the reopen.
   */
  private void drainPending() {
    Throwable failed = pending.drain();
    if (failed != null) {
      writeFailed(failed);
      failPending();
    }
  }

  private void failPending() {
    pending.failAll(DedupFailure.UNAVAILABLE, unavailableMessage(state) + ": the journal write of this decision "
        + "failed or follows one that failed; nothing of it is kept");
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
    counters.journalReopens++;
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
      recovery.recover(false);
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

  /** What this partition does with the outcomes of {@link PartitionRecovery}; on its context. */
  private final class Recovery implements PartitionRecovery.Owner {

    @Override
    public boolean stopping() {
      return state == State.STOPPING;
    }

    @Override
    public void recovered(PartitionCore fresh, CommittedOffsets freshOffsets, long startNanos) {
      core = fresh;
      offsets = freshOffsets;
      failure = "";
      state = State.READY;
      if (timerId == -1) {
        timerId = timer.periodic(TICK_MS, PartitionVerticle.this::tick);
      }
      LOG.log(System.Logger.Level.INFO, journal instanceof NoJournal
              ? "partition {0}: ready in {1} ms, memory only (no journal), {2} entries held"
              : "partition {0}: ready {1} ms after its journal began to open, {2} entries held",
          address, (System.nanoTime() - startNanos) / 1_000_000, fresh.windowStats().held());
      publish();
      started.tryComplete();
    }

    @Override
    public void failed(Throwable cause) {
      failure = "recovery failed: " + cause;
      state = State.FAILED;
      publish();
      journal.close().onComplete(v -> started.tryFail(cause));
    }

    @Override
    public void retrying(String why, boolean locked, Throwable cause, long delayMs) {
      failure = why;
      LOG.log(locked ? System.Logger.Level.INFO : System.Logger.Level.WARNING, "partition " + address + ": "
          + failure + " in " + delayMs + " ms", locked ? null : cause);
      publish();
      // The deployment completes while another owner holds the journal: this partition answers 503 until it can
      // take the journal over.
      started.tryComplete();
    }
  }
}
