package io.github.vertxdedup.impl;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.window.DedupClock;
import io.github.vertxdedup.window.WindowFullException;
import io.github.vertxdedup.window.WindowStats;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
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
 * {@link State#RECOVERING} from deployment until the journal has replayed (every request is answered 503 and
 * nothing is accepted: the partition cannot vouch for anything yet), then {@link State#READY}. A failed journal
 * write moves it to {@link State#FAILED} (503 "journal unavailable" from then on). Undeploying moves it to
 * {@link State#STOPPING}: new requests get 503 at once, the journal is flushed and closed, the replies that waited
 * for it are sent (or failed with 503 if their write did not complete), then the consumer is unregistered.
 *
 * <h2>Replies and the journal</h2>
 * A request is decided at once (window and claims updated on the event loop), its state change handed to the
 * journal, and its reply held until every journal write issued up to then has completed; replies go out in decision
 * order. With the memory-only journal every write is already complete and the reply goes out at once. At most
 * {@code maxPending} replies wait; a request that finds the queue full gets a 503 and records nothing.
 *
 * <h2>Leases</h2>
 * A periodic timer ({@value #TICK_MS} ms) forgets lapsed claims (counting them) and publishes the metrics snapshot;
 * a request that touches a lapsed claim forgets it at once, so correctness never waits for the timer.
 */
public final class PartitionVerticle extends VerticleBase {

  /** Period of the lease sweep and metrics publication, in milliseconds. */
  static final long TICK_MS = 1000;

  private static final System.Logger LOG = System.getLogger(PartitionVerticle.class.getName());

  /** Lifecycle of a partition. */
  public enum State {
    /** Replaying its journal: answers 503, never ACCEPTED. */
    RECOVERING,
    /** Answering. */
    READY,
    /** A journal write failed: answers 503. */
    FAILED,
    /** Undeploying: answers 503, drains its waiting replies. */
    STOPPING
  }

  private final DedupOptions options;
  private final int partition;
  private final DedupClock clock;
  private final PartitionJournal journal;
  private final MeterRegistry registry;
  private final String address;
  private final ArrayDeque<Pending> pending = new ArrayDeque<>();

  private volatile State state = State.RECOVERING;
  private volatile String failure = "";
  private PartitionCore core;
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
    this.clock = Objects.requireNonNull(clock, "clock");
    this.journal = Objects.requireNonNull(journal, "journal");
    this.registry = registry;
    this.address = options.getAddress() + "." + partition;
  }

  /** @return the state now; readable from any thread */
  public State state() {
    return state;
  }

  /** @return why the partition is {@link State#FAILED}, or "" */
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

  @Override
  public Future<?> start() {
    core = new PartitionCore(options, partition, clock, journal);
    decoder = new RequestDecoder(options, partition);
    if (registry != null) {
      metrics = new PartitionMetrics(registry, options.getAddress(), partition, options.getWindowMs());
      core.duplicateAges(metrics::recordDuplicateAge);
    }
    // Listen first, so that requests during recovery are answered 503 rather than finding no handler.
    consumer = vertx.eventBus().consumer(address, this::handle);
    return consumer.completion()
        .compose(v -> onContext(journal.open()))
        .compose(v -> onContext(journal.recover(new Sink())))
        .andThen(ar -> {
          if (ar.succeeded()) {
            state = State.READY;
            timerId = vertx.setPeriodic(TICK_MS, id -> tick());
          } else {
            failure = "recovery failed: " + ar.cause();
            state = State.FAILED;
          }
          publish();
        });
  }

  @Override
  public Future<?> stop() {
    state = State.STOPPING;
    if (timerId != -1) {
      vertx.cancelTimer(timerId);
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
      reply = dispatch(msg);
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
      // The window's own checks (e.g. rememberUntilMs that passed between validation and decision).
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
    if (pending.isEmpty() && write.isComplete()) {
      if (write.succeeded()) {
        msg.reply(reply);
      } else {
        journalFailed(write.cause());
        msg.fail(DedupFailure.UNAVAILABLE, unavailableMessage(state));
      }
      return;
    }
    pending.add(new Pending(msg, reply, write));
    if (!write.isComplete() && write != watched) {
      watched = write;
      write.onComplete(ar -> context.runOnContext(v -> drainPending()));
    }
  }

  private Object dispatch(Message<Object> msg) {
    Object body = msg.body();
    if (body instanceof LocalRequest r) {
      long now = clock.nowMs();
      return switch (r.action) {
        case CHECK -> core.check(decoder.decode(r.event, DedupAction.CHECK, now, -1));
        case CLAIM -> core.claim(decoder.decode(r.event, DedupAction.CLAIM, now, -1));
        case COMMIT -> core.commit(decoder.decode(r.event, DedupAction.COMMIT, now, -1));
        case RELEASE -> core.release(decoder.decode(r.event, DedupAction.RELEASE, now, -1));
        case LOOKUP -> core.lookup(decoder.decode(r.event, DedupAction.LOOKUP, now, -1));
        case STATS -> stats();
        case CHECK_BATCH -> new BatchReply(core.batch(decoder.decodeBatch(r.events, DedupAction.CHECK, now), false));
        case CLAIM_BATCH -> new BatchReply(core.batch(decoder.decodeBatch(r.events, DedupAction.CLAIM, now), true));
      };
    }
    DedupAction action = RequestDecoder.action(msg.headers().get(DedupAction.HEADER));
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
      case CHECK_BATCH -> batchJson(core.batch(decoder.decodeBatch(json, DedupAction.CHECK, now), false));
      case CLAIM_BATCH -> batchJson(core.batch(decoder.decodeBatch(json, DedupAction.CLAIM, now), true));
      case STATS -> throw new IllegalStateException("unreachable");
    };
  }

  private static JsonObject batchJson(DedupResult[] results) {
    JsonArray verdicts = new JsonArray(new java.util.ArrayList<>(results.length));
    for (DedupResult r : results) {
      verdicts.add(r.toJson());
    }
    return new JsonObject().put("verdicts", verdicts);
  }

  private JsonObject stats() {
    core.sweepExpiredLeases();
    JsonObject s = core.statsJson()
        .put("state", state.name())
        .put("pending", pending.size())
        .put("badRequests", badRequests)
        .put("stateConflicts", stateConflicts)
        .put("unavailable", unavailable)
        .put("internalErrors", internalErrors);
    publish();
    return s;
  }

  private void tick() {
    core.sweepExpiredLeases();
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

  /** Sends every waiting reply whose journal write (and every earlier one) has completed, in order. */
  private void drainPending() {
    Pending p;
    while ((p = pending.peek()) != null && p.write.isComplete()) {
      pending.poll();
      if (p.write.failed()) {
        journalFailed(p.write.cause());
        p.message.fail(DedupFailure.UNAVAILABLE, unavailableMessage(state));
      } else {
        p.message.reply(p.reply);
      }
    }
  }

  /** The window now holds decisions that may not be durable: stop answering, fail everything waiting. */
  private void journalFailed(Throwable cause) {
    if (state == State.READY) {
      failure = "journal unavailable: " + cause.getMessage();
      state = State.FAILED;
      LOG.log(System.Logger.Level.ERROR, "partition " + partition + ": " + failure, cause);
    }
    Pending p;
    while ((p = pending.poll()) != null) {
      p.message.fail(DedupFailure.UNAVAILABLE, unavailableMessage(state));
    }
  }

  private String unavailableMessage(State s) {
    return switch (s) {
      case RECOVERING -> "partition " + partition + " is recovering its window; nothing accepted yet, retry later";
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
  private record Pending(Message<Object> message, Object reply, Future<?> write) {}

  /** Recovery calls, on this partition's context. */
  private final class Sink implements PartitionJournal.RecoverySink {

    @Override
    public void restore(long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs) {
      core.restore(fingerprint, payloadHash, firstSeenMs, expiresAtMs);
    }

    @Override
    public void restoreClaim(long idFingerprint, long keyFingerprint, long payloadHash, String claimToken,
        long claimedAtMs, long leaseEndMs, long rememberUntilMs) {
      core.restoreClaim(idFingerprint, keyFingerprint, payloadHash, claimToken, claimedAtMs, leaseEndMs,
          rememberUntilMs);
    }

    @Override
    public void memoryBegins(long memoryBeginsMs) {
      core.memoryBegins(memoryBeginsMs);
    }
  }
}
