package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.impl.journal.NoJournal;
import io.github.vertxdedup.impl.journal.PartitionJournal;
import io.github.vertxdedup.journal.internal.CommittedOffsets;
import io.github.vertxdedup.time.DedupClock;
import io.github.vertxdedup.window.WindowStats;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle of one partition of the dedup service: owns one window (in a {@link PartitionCore}) and one journal,
 * listens on {@code <address>.<partition>}, and answers every request on its own event loop, so nothing needs a lock.
 * Deployed by {@link io.github.vertxdedup.DedupVerticle}, or alone through {@link LocalPartition}'s factories;
 * internal. It moves the partition through its states and hands the work to its parts: {@link PartitionRequests}
 * serves every request (in-process, as the partition's {@link LocalPartition}, or from the event bus through
 * {@link BusRequests}), {@link PendingReplies} holds replies until their journal write completes,
 * {@link PartitionRecovery} rebuilds the partition from its journal (with a backoff on the injected
 * {@link PartitionTimer}), and {@link PartitionCounters} counts.
 *
 * <h2>States</h2>
 * {@link PartitionState#RECOVERING} from deployment until the journal has opened and replayed (every request is
 * answered 503 and nothing is accepted: the partition does not cover anything yet), then
 * {@link PartitionState#READY}. If another owner holds the journal, the partition stays
 * {@link PartitionState#RECOVERING} (503 "journal locked by another process") and tries again with a backoff
 * ({@value PartitionRecovery#RETRY_MIN_MS} ms doubling to {@value PartitionRecovery#RETRY_MAX_MS} ms); its deployment
 * completes meanwhile. Any other failure of the first recovery fails the deployment ({@link PartitionState#FAILED}).
 *
 * <p>A failed journal write means the decision is not in the journal. The partition goes back to
 * {@link PartitionState#RECOVERING} at once (it decides nothing more), fails that reply and every later waiting one
 * with 503, closes the journal, and reopens and replays it into a new, empty window (retrying with the backoff while
 * that fails), then answers again. So the window never keeps a decision that the journal lacks: the refused id is
 * absent and its redelivery is accepted once the journal works again (fail closed, nothing half-kept).
 *
 * <p>Undeploying moves it to {@link PartitionState#STOPPING}: new requests get 503 at once, the journal is flushed and
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
 * once, so correctness never waits for the timer. The window's upkeep ({@link WindowUpkeep}: the sweep of expired
 * entries and the table's growth) runs between requests every quarter bucket, on a second timer, or on the tick for
 * buckets of 4 s or more. The second timer stops while the partition is idle (no id accepted since the upkeep's
 * previous look, no sweep owed), and the tick sets it again once there is work.
 *
 * <h2>Threads</h2>
 * Everything runs on the partition's event loop, except {@link #state()}, {@link #failure()}, {@link #address()} and
 * {@link #partition()}, which any thread may read, and the operations that return a future, which any thread may
 * call: they hand their work to the partition's context. Its window is built on a worker instead, once per recovery
 * ({@link PartitionRecovery}): a presized table is up to 1.5 GiB to allocate and zero. So there is no core until the
 * first recovery has completed, and no table is built for the 503 answers meanwhile. The window's doublings are
 * built on {@value #GROWTH_POOL}, a shared worker pool of one thread (at most one doubled table is being built at a
 * time in a Vert.x instance, and the journal's workers never wait behind one), and installed by an upkeep run on the
 * event loop once built.
 */
public final class PartitionVerticle extends VerticleBase {

  /** Period of the lease sweep, the journal retention check and metrics publication, in milliseconds. */
  static final long TICK_MS = 1000;

  private static final Logger LOG = LoggerFactory.getLogger(PartitionVerticle.class);

  /** The shared worker pool, of one thread, on which the partitions of a Vert.x instance build their doublings. */
  static final String GROWTH_POOL = "vertx-dedup-window-growth";
  /** What the meters read before the first recovery has built the window: nothing held, no table. */
  private static final WindowStats NO_WINDOW = new WindowStats(0, 0, 0, 0, 0, 0, 0, 0, 0);

  private final DedupOptions options;
  private final int partition;
  private final RequestClock clock;
  private final PartitionJournal journal;
  private final MeterRegistry registry;
  private final String address;
  /** The partition's counters, for its whole deployment: every core rebuilt from the journal counts into them. */
  private final PartitionCounters counters = new PartitionCounters();
  /** Every request's way in. */
  private final PartitionRequests requests;

  private volatile PartitionState state = PartitionState.RECOVERING;
  private volatile String failure = "";
  private PartitionTimer timer;
  /** Where the window's doublings are built ({@link #GROWTH_POOL}). */
  private WorkerExecutor growthPool;
  private PartitionCore core;
  private CommittedOffsets offsets = new CommittedOffsets();
  private Promise<Void> started;
  private PendingReplies pending;
  private PartitionRecovery recovery;
  private PartitionMetrics metrics;
  private MessageConsumer<Object> consumer;
  private long timerId = -1;
  private long upkeepTimerId = -1;
  /** The window's upkeep, on a timer of its own ({@link #upkeepTimerId}) or on the tick; null before ready. */
  private WindowUpkeep upkeep;
  /**
   * The period of the upkeep's own timer, or 0 when the tick runs the upkeep (buckets of 4 s or more). The timer is
   * cancelled while the partition is idle ({@link WindowUpkeep#runTimed()}) and set again by the tick.
   */
  private long upkeepPeriodMs;
  /** Its owner logs the partition's readiness at INFO (the Kafka consumer does), so its own line goes to DEBUG. */
  private boolean ownerLogsReadiness;
  /** The tags its meters carry: its identity, stable across restarts. */
  private Tags meterTags;
  /** The owner's term of a partition of the event-bus service, or null (a Kafka consumer's window: no fence). */
  private OwnerTerm term;

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
    this.meterTags = PartitionMetrics.serviceTags(options.getAddress(), partition);
    this.requests = new PartitionRequests(this, this.options, partition, this.clock, counters);
  }

  /**
   * Logs the partition's readiness at DEBUG instead of INFO: for a partition whose owner logs it itself, with what
   * it knows besides (the Kafka consumer's window of a topic-partition, deployed through {@link LocalPartition}), so
   * that one event is one INFO line. Before deployment.
   *
   * @return this verticle
   */
  PartitionVerticle ownerLogsReadiness() {
    this.ownerLogsReadiness = true;
    return this;
  }

  /**
   * Tags the partition's meters with {@code tags} instead of the service's {@code address} and {@code partition}:
   * for a window whose identity is another (the Kafka consumer's window of a topic-partition is tagged {@code group},
   * {@code topic} and {@code partition}, as its consumer's meters are). Before deployment.
   *
   * @param tags the identity; null keeps the service's
   * @return this verticle
   */
  PartitionVerticle meterTags(Tags tags) {
    if (tags != null) {
      this.meterTags = tags;
    }
    return this;
  }

  /**
   * Makes this partition the owner of {@code term}: it decides only while the term is confirmed (else 503), reports
   * its epoch and role in {@code stats}, and applies the term's takeover to every core it builds. Before
   * deployment.
   *
   * @param term the owner's term
   * @return this verticle
   */
  PartitionVerticle term(OwnerTerm term) {
    this.term = term;
    return this;
  }

  /** @return the owner's term, or null if this partition is not fenced */
  OwnerTerm term() {
    return term;
  }

  /** @return the state now; readable from any thread */
  public PartitionState state() {
    return state;
  }

  /** @return why the partition is {@link PartitionState#FAILED} or {@link PartitionState#RECOVERING} again, or "" */
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

  /** @return the partition as called in-process: every request's way in, whether deployed yet or not */
  LocalPartition local() {
    return requests;
  }

  /** @return the context this partition runs on, or null until it is deployed */
  Context context() {
    return context;
  }

  /** @return its journal */
  PartitionJournal journal() {
    return journal;
  }

  /** @return the committed offsets it holds now (replaced by each recovery); on its context */
  CommittedOffsets offsets() {
    return offsets;
  }

  /** @return its core now (replaced by each recovery), or null until the first recovery completes; on its context */
  PartitionCore core() {
    return core;
  }

  /** @return its replies waiting for their journal write; on its context, once deployed */
  PendingReplies pending() {
    return pending;
  }

  /**
   * Undeploys this partition ({@link #stop()}).
   *
   * @return completes once undeployed; fails with {@link IllegalStateException} if it was never deployed
   */
  Future<Void> undeploy() {
    if (context == null) {
      return Future.failedFuture(new IllegalStateException("partition " + address + " is not deployed"));
    }
    return vertx.undeploy(context.deploymentID());
  }

  @Override
  public Future<?> start() {
    if (timer == null) {
      timer = PartitionTimer.of(vertx);
    }
    pending = new PendingReplies(options.getMaxPending(), context, this::drainPending);
    // No core until the first recovery has built one: its window is built once, on a worker (a presized table is too
    // large to allocate and zero on the event loop), and the partition answers 503 until then.
    // The window's table doubles on a worker (upkeep hands it over; see DedupWindow.Builder.growthExecutor), so that
    // growing takes no O(table) pause on this event loop. One thread, shared by the instance's partitions: at most
    // one doubled table is being built at a time (its memory), and the journal's workers never wait behind one. Once
    // built, an upkeep run installs it at once (its pause grows with the ids accepted until then) and pays the sweep
    // that waited for it.
    growthPool = vertx.createSharedWorkerExecutor(GROWTH_POOL, 1);
    Executor growth = task -> growthPool.executeBlocking(() -> {
      task.run();
      return null;
    }, false).onComplete(ar -> {
      if (ar.failed() && state == PartitionState.READY) {
        // A doubling's build, or the build of a snapshot restored in place (the window then keeps answering from the
        // snapshot's entries).
        LOG.warn("partition " + partition + ": building a table of the window on " + GROWTH_POOL + " failed; a "
            + "doubling is made by the checks on the event loop when they need room, a restored snapshot is read in "
            + "place", ar.cause());
      }
      if (upkeep != null) {
        upkeep.run();
      }
    });
    recovery = new PartitionRecovery(journal, timer, context, () -> PartitionCore.newWindow(options, clock, growth),
        window -> new PartitionCore(options, partition, clock, journal, counters, window), new Recovery());
    if (registry != null) {
      metrics = new PartitionMetrics(registry, meterTags, options.getWindowMs());
      counters.duplicateAges(metrics::recordDuplicateAge);
    }
    started = Promise.promise();
    // Listen first, so that requests during recovery are answered 503 rather than finding no handler.
    consumer = vertx.eventBus().consumer(address, new BusRequests(requests, this::stats)::handle);
    consumer.completion().onComplete(ar -> {
      if (ar.failed()) {
        started.tryFail(ar.cause());
      } else {
        recovery.recover(true);
      }
    });
    return started.future();
  }

  @Override
  public Future<?> stop() {
    state = PartitionState.STOPPING;
    if (timerId != -1) {
      timer.cancel(timerId);
    }
    if (upkeepTimerId != -1) {
      timer.cancel(upkeepTimerId);
    }
    recovery.cancel();
    Promise<Void> drained = Promise.promise();
    journal.close().onComplete(ar -> context.runOnContext(v -> {
      if (ar.failed()) {
        LOG.warn("partition " + partition + ": journal close failed", ar.cause());
      }
      drainPending();
      // Writes that did not complete even after the flush: their outcome is unknown to us, never leave them hanging.
      pending.failAll(DedupFailure.UNAVAILABLE, "partition " + partition + " is stopping and the journal write of"
          + " this decision did not complete; retry after it restarts");
      publish();
      if (metrics != null) {
        metrics.close();
      }
      if (growthPool != null) {
        growthPool.close(); // this partition's share of the pool: the last one closes it
      }
      drained.complete();
    }));
    return drained.future().compose(v -> consumer.unregister());
  }

  // ---------------------------------------------------------------------------------------------------------------

  /** Sets the upkeep's own timer, which cancels itself once a run finds the partition idle. On its context. */
  private void armUpkeep() {
    upkeepTimerId = timer.periodic(upkeepPeriodMs, () -> {
      if (!upkeep.runTimed() && upkeepTimerId != -1) {
        timer.cancel(upkeepTimerId);
        upkeepTimerId = -1;
      }
    });
  }

  /** The {@code stats} reply; only while it is ready (refused 503 otherwise, like every request), so with a core. */
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
    if (term != null) {
      s.put("role", "OWNER").put("epoch", term.epoch()).put("owner", term.owner())
          .put("journalHandedOver", term.journalHandedOver());
      if (core.unvouchedUntilMs() != Long.MIN_VALUE) {
        s.put("unvouchedUntilMs", core.unvouchedUntilMs());
      }
    }
    publish();
    return s;
  }

  private void tick() {
    if (upkeepPeriodMs == 0) {
      upkeep.run(); // its period is the tick's
    } else if (upkeepTimerId == -1 && upkeep.wanted()) {
      armUpkeep();
    }
    core.sweepExpiredLeases();
    if (state == PartitionState.READY) {
      journal.retain();
    }
    publish();
  }

  /** Publishes the metrics snapshot; on its context. */
  void publish() {
    if (metrics == null) {
      return;
    }
    metrics.publish(counters.snapshot(core == null ? NO_WINDOW : core.windowStats(),
        core == null ? 0 : core.claimsHeld(), pending.size(), state == PartitionState.READY));
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
   * reopen the journal and rebuild the window from it. On its context; ignored unless it is ready.
   *
   * @param cause why the write failed
   */
  void writeFailed(Throwable cause) {
    if (state != PartitionState.READY) {
      return;
    }
    state = PartitionState.RECOVERING;
    counters.journalReopens++;
    failure = "journal write failed: " + cause.getMessage() + "; reopening the journal";
    LOG.error("partition " + address + ": " + failure, cause);
    publish();
    journal.close().onComplete(ar -> context.runOnContext(v -> {
      if (ar.failed()) {
        LOG.warn("partition " + address + ": closing the failed journal failed",
            ar.cause());
      }
      drainPending();
      failPending();
      recovery.recover(false);
    }));
  }

  /**
   * @param s the state it was found in
   * @return why a request is refused in that state
   */
  String unavailableMessage(PartitionState s) {
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
      return state == PartitionState.STOPPING;
    }

    @Override
    public void recovered(PartitionCore fresh, CommittedOffsets freshOffsets, long startNanos) {
      if (term != null) {
        term.applyTo(fresh);
      }
      core = fresh;
      offsets = freshOffsets;
      failure = "";
      state = PartitionState.READY;
      if (timerId == -1) {
        timerId = timer.periodic(TICK_MS, PartitionVerticle.this::tick);
        upkeep = new WindowUpkeep(context, () -> state == PartitionState.READY ? core : null);
        long upkeepMs = WindowUpkeep.periodMs(options.getEffectiveBucketMs());
        if (upkeepMs < TICK_MS) {
          upkeepPeriodMs = upkeepMs;
          armUpkeep();
        }
      }
      (ownerLogsReadiness ? LOG.atDebug() : LOG.atInfo()).log(journal instanceof NoJournal
              ? "partition {}: ready in {} ms, memory only (no journal), {} entries held"
              : "partition {}: ready {} ms after its journal began to open, {} entries held",
          address, (System.nanoTime() - startNanos) / 1_000_000, fresh.windowStats().held());
      publish();
      started.tryComplete();
    }

    @Override
    public void failed(Throwable cause) {
      failure = "recovery failed: " + cause;
      state = PartitionState.FAILED;
      publish();
      journal.close().onComplete(v -> started.tryFail(cause));
    }

    @Override
    public void retrying(String why, boolean locked, Throwable cause, long delayMs) {
      failure = why;
      if (locked) {
        // Another owner holds the journal: the wait is part of its readiness, which an owner that logs it times.
        (ownerLogsReadiness ? LOG.atDebug() : LOG.atInfo()).log("partition {}: {} in {} ms", address, failure,
            delayMs);
      } else {
        LOG.warn("partition {}: {} in {} ms", address, failure, delayMs, cause);
      }
      publish();
      // The deployment completes while another owner holds the journal: this partition answers 503 until it can
      // take the journal over.
      started.tryComplete();
    }
  }
}
