package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.impl.protocol.ParsedEvent;
import io.github.vertxdedup.impl.protocol.RequestDecoder;
import io.github.vertxdedup.impl.protocol.RequestFailure;
import io.github.vertxdedup.journal.OffsetCommit;
import io.github.vertxdedup.window.WindowFullException;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every request of one partition enters, whichever way it came: in-process through {@link LocalPartition}
 * (which this class is), or over the event bus through {@link BusRequests}. Each request takes one path,
 * {@link #serve}: refused with 503 unless the partition is {@link PartitionState#READY} and fewer than
 * {@code maxPending} replies wait, and while the owner's term ({@link OwnerTerm}) is confirmed; decided on the core
 * with the clock pinned to one reading (so validation and every
 * decision of a batch see the same instant); a refusal answered with its failure code and counted; and the reply
 * held in {@link PendingReplies} until its journal write, and every earlier one, has completed. A failed write is
 * handed to the partition's lifecycle ({@link PartitionVerticle}), which stops deciding and reopens the journal.
 *
 * <p>An in-process call is a {@link Decision} straight on the core: its event is validated by the same
 * {@link RequestDecoder} as an event-bus request's, and nothing is encoded or dispatched on an action.
 *
 * <p>{@link #serve} and the decisions run on the partition's event loop (not thread-safe); the {@link LocalPartition}
 * methods may be called from any thread and hand their work to the partition's context.
 */
final class PartitionRequests implements LocalPartition {

  private static final Logger LOG = LoggerFactory.getLogger(PartitionVerticle.class);

  /** What {@link #decide} returns for a request it refused (its sink has the failure). */
  private static final Object REFUSED = new Object();

  /** What a request asks of the partition: runs on its event loop, with the clock pinned. */
  @FunctionalInterface
  interface Decision {

    /**
     * @param core the partition's core
     * @param nowMs the pinned clock reading
     * @return the reply body
     * @throws RequestFailure for a refused request (400, 409), with its code and message
     * @throws WindowFullException for a new event the full window refuses (503)
     */
    Object decide(PartitionCore core, long nowMs);
  }

  private final PartitionVerticle lifecycle;
  private final int partition;
  private final int maxPending;
  private final long maxIds;
  private final RequestClock clock;
  private final RequestDecoder decoder;
  private final PartitionCounters counters;

  /**
   * @param lifecycle the partition's lifecycle: its state, core, waiting replies and journal
   * @param options validated options
   * @param partition the partition's number
   * @param clock the partition's clock, pinned for each request
   * @param counters where refusals are counted
   */
  PartitionRequests(PartitionVerticle lifecycle, DedupOptions options, int partition, RequestClock clock,
      PartitionCounters counters) {
    this.lifecycle = lifecycle;
    this.partition = partition;
    this.maxPending = options.getMaxPending();
    this.maxIds = options.getMaxIdsPerPartition();
    this.clock = clock;
    this.decoder = new RequestDecoder(options, partition);
    this.counters = counters;
  }

  /**
   * Deploys a partition verticle: the one way {@link LocalPartition}'s factories deploy a partition.
   *
   * @param vertx the Vert.x instance
   * @param verticle the partition, not deployed yet
   * @return completes with its {@link LocalPartition} once the deployment completes
   */
  static Future<LocalPartition> deploy(Vertx vertx, PartitionVerticle verticle) {
    return vertx.deployVerticle(verticle).map(id -> verticle.local());
  }

  /** @return the validation shared by both transports */
  RequestDecoder decoder() {
    return decoder;
  }

  // ------------------------------------------------------------------------------------------------ the one path

  /**
   * Serves one request on the partition's event loop: refuses it (503) unless the partition is ready and has room
   * for one more waiting reply, decides it, and sends the reply to {@code sink} once its journal write has
   * completed.
   *
   * @param sink where the reply or the refusal goes
   * @param decision what the request asks
   */
  void serve(ReplySink sink, Decision decision) {
    PartitionState s = lifecycle.state();
    if (s != PartitionState.READY) {
      counters.unavailable++;
      sink.fail(DedupFailure.UNAVAILABLE, lifecycle.unavailableMessage(s));
      return;
    }
    OwnerTerm term = lifecycle.term();
    if (term != null && !term.confirmed()) {
      // The fence: an owner that has not confirmed its epoch within its lease may have been replaced.
      counters.unavailable++;
      sink.fail(DedupFailure.UNAVAILABLE, "partition " + partition + ": its owner (epoch " + term.epoch()
          + ") has not confirmed its ownership within ownerLeaseMs and decides nothing until it does or another"
          + " owner takes over; nothing recorded, retry later");
      return;
    }
    PendingReplies pending = lifecycle.pending();
    if (pending.isFull()) {
      counters.unavailable++;
      sink.fail(DedupFailure.UNAVAILABLE, "partition " + partition + " pending queue full: maxPending="
          + maxPending + " replies wait for their journal write; nothing recorded, retry later");
      return;
    }
    PartitionCore core = lifecycle.core();
    Object reply = decide(core, decision, sink);
    if (reply == REFUSED) {
      return;
    }
    Throwable failed = pending.send(sink, reply, core.lastWrite());
    if (failed != null) {
      // Not in the journal: decide nothing more; the reopen drains the queue and refuses this reply.
      lifecycle.writeFailed(failed);
    }
  }

  /**
   * Decides one request with the clock pinned, or refuses it: a bad request (400), a state conflict (409), a refusal
   * such as a full window (503), or an internal error (500, logged) fails {@code sink} and is counted.
   *
   * @return the reply body, or {@link #REFUSED} once {@code sink} has the refusal
   */
  private Object decide(PartitionCore core, Decision decision, ReplySink sink) {
    try {
      return decidePinned(core, decision);
    } catch (RequestFailure f) {
      counters.failure(f.code());
      sink.fail(f.code(), f.getMessage());
    } catch (WindowFullException e) {
      counters.unavailable++;
      sink.fail(DedupFailure.UNAVAILABLE, WindowRoom.windowFullMessage(partition, maxIds, e));
    } catch (IllegalArgumentException e) {
      // The window's own checks; with the clock pinned per request they repeat the decoder's, so this is a backstop.
      counters.badRequests++;
      sink.fail(DedupFailure.BAD_REQUEST, e.getMessage());
    } catch (RuntimeException e) {
      counters.internalErrors++;
      LOG.error("partition " + partition + ": internal error", e);
      sink.fail(DedupFailure.INTERNAL_ERROR, "partition " + partition + " internal error: " + e);
    }
    return REFUSED;
  }

  private Object decidePinned(PartitionCore core, Decision decision) {
    // One clock reading for the whole request: validation and every decision of a batch see the same instant.
    clock.pin();
    try {
      return decision.decide(core, clock.nowMs());
    } finally {
      clock.unpin();
    }
  }

  /**
   * Decides a checkBatch or claimBatch, counting each failed element as a single failed request would be counted.
   */
  DedupBatchResult[] batch(PartitionCore core, ParsedEvent[] events, boolean claims) {
    DedupBatchResult[] results = core.batch(events, claims);
    for (DedupBatchResult r : results) {
      counters.failure(r.failureCode());
    }
    return results;
  }

  /** Decides a commitBatch, counting each failed element as a single failed commit would be counted. */
  DedupCommitResult[] commitBatch(PartitionCore core, ParsedEvent[] events) {
    DedupCommitResult[] results = core.commitBatch(events);
    for (DedupCommitResult r : results) {
      counters.failure(r.failureCode());
    }
    return results;
  }

  /**
   * Serves an in-process call: at once on the partition's context, else handed to it; before deployment, a 503.
   *
   * @return the reply body, or the refusal as a {@link io.vertx.core.eventbus.ReplyException}
   */
  private <T> Future<T> call(Decision decision) {
    Promise<T> p = Promise.promise();
    Context context = lifecycle.context();
    if (context == null) {
      ReplySink.of(p).fail(DedupFailure.UNAVAILABLE, "partition " + partition + " is not deployed yet;"
          + " nothing accepted, retry once it is");
    } else if (Vertx.currentContext() == context) {
      serve(ReplySink.of(p), decision);
    } else {
      context.runOnContext(v -> serve(ReplySink.of(p), decision));
    }
    return p.future();
  }

  // -------------------------------------------------------------------------------------------- LocalPartition

  @Override
  public Future<DedupResult> check(DedupEvent event) {
    return call((core, now) -> core.check(decoder.decode(event, DedupAction.CHECK, now, -1)));
  }

  @Override
  public Future<DedupResult> claim(DedupEvent event) {
    return call((core, now) -> core.claim(decoder.decode(event, DedupAction.CLAIM, now, -1)));
  }

  @Override
  public Future<DedupResult> commit(DedupEvent event) {
    return call((core, now) -> core.commit(decoder.decode(event, DedupAction.COMMIT, now, -1)));
  }

  @Override
  public Future<DedupResult> release(DedupEvent event) {
    return call((core, now) -> core.release(decoder.decode(event, DedupAction.RELEASE, now, -1)));
  }

  @Override
  public Future<List<DedupBatchResult>> checkBatch(List<DedupEvent> events) {
    return call((core, now) -> list(batch(core, decoder.decodeBatch(events, DedupAction.CHECK, now), false)));
  }

  @Override
  public Future<List<DedupBatchResult>> claimBatch(List<DedupEvent> events) {
    return call((core, now) -> list(batch(core, decoder.decodeBatch(events, DedupAction.CLAIM, now), true)));
  }

  @Override
  public Future<List<DedupCommitResult>> commitBatch(List<DedupEvent> events) {
    return call((core, now) -> list(commitBatch(core, decoder.decodeBatch(events, DedupAction.COMMIT, now))));
  }

  private static <T> List<T> list(T[] results) {
    return Collections.unmodifiableList(Arrays.asList(results));
  }

  @Override
  public String address() {
    return lifecycle.address();
  }

  @Override
  public Context context() {
    return lifecycle.context();
  }

  @Override
  public PartitionState state() {
    return lifecycle.state();
  }

  @Override
  public String failure() {
    return lifecycle.failure();
  }

  @Override
  public Future<Void> commitOffset(String topic, int topicPartition, long offset) {
    final OffsetCommit commit;
    try {
      commit = new OffsetCommit(topic, topicPartition, offset);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
    Promise<Void> p = Promise.promise();
    lifecycle.context().runOnContext(v -> {
      if (ready(p)) {
        afterWrite(lifecycle.journal().offsetsCommitted(commit.topic(), commit.partition(), commit.offset()), p,
            () -> lifecycle.offsets().record(commit), null);
      }
    });
    return p.future();
  }

  @Override
  public Future<Long> committedOffset(String topic, int topicPartition) {
    Promise<Long> p = Promise.promise();
    lifecycle.context().runOnContext(v -> p.complete(lifecycle.offsets().get(topic, topicPartition)));
    return p.future();
  }

  @Override
  public Future<Long> heldEntries() {
    Promise<Long> p = Promise.promise();
    lifecycle.context().runOnContext(v -> {
      if (ready(p)) {
        p.complete(lifecycle.core().windowStats().held());
      }
    });
    return p.future();
  }

  @Override
  public Future<Long> coverFrom(long fromMs) {
    Promise<Long> p = Promise.promise();
    Context context = lifecycle.context();
    context.runOnContext(v -> {
      if (!ready(p)) {
        return;
      }
      long now = lifecycle.core().nowMs();
      if (fromMs < 0 || fromMs > now) {
        p.fail(new IllegalArgumentException("fromMs must be in 0.." + now + " (now) but was " + fromMs));
        return;
      }
      // Durable first: the partition is told only what a restart on this machine will recover.
      lifecycle.journal().memoryBegins(fromMs).onComplete(ar -> context.runOnContext(w -> {
        if (ar.failed()) {
          p.fail(ar.cause());
          return;
        }
        PartitionCore core = lifecycle.core();
        core.memoryBegins(fromMs);
        p.complete(core.coveredFromMs());
      }));
    });
    return p.future();
  }

  @Override
  public Future<Integer> releaseClaimsOf(String claimer) {
    Objects.requireNonNull(claimer, "claimer");
    Promise<Integer> p = Promise.promise();
    lifecycle.context().runOnContext(v -> {
      if (!ready(p)) {
        return;
      }
      PartitionCore core = lifecycle.core();
      int n;
      try {
        n = core.releaseClaimsOf(claimer);
      } catch (RuntimeException e) {
        p.fail(e);
        return;
      }
      if (n == 0) {
        p.complete(0);
      } else {
        afterWrite(core.lastWrite(), p, lifecycle::publish, n);
      }
    });
    return p.future();
  }

  /** Fails {@code p} with an {@link IllegalStateException} unless the partition is ready; on its context. */
  private boolean ready(Promise<?> p) {
    PartitionState s = lifecycle.state();
    if (s != PartitionState.READY) {
      p.fail(new IllegalStateException(lifecycle.unavailableMessage(s)));
      return false;
    }
    return true;
  }

  /**
   * Completes {@code p} with {@code result} once {@code write} has succeeded (after {@code written}), or fails it
   * with the write's failure, which the partition's lifecycle handles (it reopens the journal).
   */
  private <T> void afterWrite(Future<?> write, Promise<T> p, Runnable written, T result) {
    Context context = lifecycle.context();
    write.onComplete(ar -> context.runOnContext(w -> {
      if (ar.succeeded()) {
        written.run();
        p.complete(result);
      } else {
        lifecycle.writeFailed(ar.cause());
        p.fail(ar.cause());
      }
    }));
  }

  @Override
  public Future<Void> undeploy() {
    return lifecycle.undeploy();
  }
}
