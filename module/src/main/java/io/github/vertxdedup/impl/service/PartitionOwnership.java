package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.time.DedupClock;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.SharedData;
import java.nio.file.Path;
import java.util.Objects;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owner or standby of one partition of the event-bus service, decided through the cluster manager's own facilities:
 * at most one deployment of the service in the whole cluster owns a partition (registers {@code <address>.<p>} and
 * opens its journal); every other deployment of the same address is its standby and takes over when the owner goes.
 *
 * <pre>
 * Ownership, after the cluster manager (Vert.x shared data; Hazelcast with vertx-hazelcast):
 *
 *   lock     getLockWithTimeout("io.github.vertxdedup.owner.<address>.<p>", 10 ms), polled every ownerLockPollMs
 *            (a waiting try holds a worker thread, so it is short, never one per partition for long). Hazelcast
 *            keeps it as a key lock of the map __vertx.map.lock, released when its member leaves the cluster; a
 *            non-clustered Vert.x keeps it in the JVM, so two deployments in one JVM behave alike.
 *   epoch    getCounter("io.github.vertxdedup.epoch.<address>.<p>").incrementAndGet() by each new owner: the
 *            fencing token (Hazelcast: map __vertx.map.counter). epoch - 1 is the previous owner's; 0 none.
 *   release  AsyncMap "io.github.vertxdedup.owner.releases": the epoch an owner released cleanly (undeploy), so the
 *            next owner need not wait out its lease.
 *   term     AsyncMap "io.github.vertxdedup.owner.terms": "&lt;epoch&gt;:&lt;term id&gt;" of the newest owner whose
 *            partition deployed (a term id is random, drawn at the takeover), recorded after its owner-epoch file.
 *   journal  &lt;journalDir&gt;/&lt;address&gt;/&lt;p&gt;/owner-epoch: the epoch of the last owner that opened this
 *            directory, written once its partition is deployed (its journal recovered), never at the takeover, so
 *            a term that never ran leaves no trace; on a second line, the instant before which new ids are
 *            unvouched if that owner took over without its predecessor's journal; on a third, its term id. Read at
 *            takeover: the previous epoch and the term the cluster recorded for it mean the journal is the previous
 *            owner's (handed over); the mark carries over, and the new owner's unvouched window ends at the later of
 *            it and its own (none if neither).
 *
 * Fence (Kleppmann, "How to do distributed locking", 2016: a lock alone is not a fence):
 *   an owner reads its epoch counter every ownerCheckMs from its takeover (each check due ownerCheckMs after the
 *   previous one was asked, however long its read took); asked at t and answered with its own epoch, its lease runs
 *   to t + ownerLeaseMs (OwnerTerm); a read that fails, times out (ownerCheckMs) or shows a larger epoch makes it
 *   step down at once (stop deciding, undeploy the partition, close its journal, release the lock, stand by).
 *   Each decision first checks the lease on the event loop, so an owner cut off from the cluster decides nothing
 *   after its lease. A new owner that follows an unclean loss waits one lease before it deploys, by which time its
 *   predecessor has stopped deciding, provided the cluster manager refuses the predecessor's reads once it is cut
 *   off (Hazelcast: split-brain protection with a majority quorum on those maps; docs/partitioning.md).
 * </pre>
 *
 * <p>The lock, the epoch counter, the release and deployed-term maps are spoken to through {@link OwnerLock}, the journal's
 * {@code owner-epoch} file through {@link OwnerEpochFile}; a takeover's term is decided by {@link OwnerTakeover}
 * (which also handles a counter that Hazelcast lost and that went back), the owner's checks run in
 * {@link OwnerChecks}; this class is the state machine over them:
 *
 * <pre>
 *   STANDBY      --lock taken--&gt;                                     TAKING_OVER  (takeOver: epoch, release, file)
 *   TAKING_OVER  --epoch not taken--&gt;                                STANDBY      (lock released, polls again)
 *   TAKING_OVER  --clean predecessor, or a lease waited out and the
 *                  epoch confirmed; partition deployed, file written--&gt; OWNER
 *   TAKING_OVER  --deployment failed--&gt;                              STANDBY      (start fails if still starting;
 *                                                                                  clean release if it may be)
 *   TAKING_OVER, OWNER --check failed or newer epoch--&gt;              STANDBY      (stepDown)
 *   any          --stop()--&gt;                                         STOPPED      (clean release marked if it may be)
 * </pre>
 *
 * <p>The partition itself is a {@link PartitionVerticle} deployed (as a child of the caller's deployment) when this
 * deployment becomes the owner and undeployed when it steps down or stops, with its lifecycle unchanged: it
 * recovers its journal before it answers, and flushes and closes it when undeployed.
 *
 * <p>Threads: every method is called on the context of the deployment that made it (the service's verticle), and
 * every continuation runs there; {@link #role()}, {@link #epoch()} and {@link #partition()} may be read from any
 * thread.
 */
public final class PartitionOwnership {

  private static final Logger LOG = LoggerFactory.getLogger(PartitionOwnership.class);

  /** What a deployment is to its partition now. */
  public enum Role {
    /** Another deployment owns the partition (or none does yet); this one polls for the lock. */
    STANDBY,
    /**
     * This deployment holds the lock and is taking over: it waits out a lease, deploys the partition, or writes the
     * journal's {@code owner-epoch} file; its partition answers only once deployed, and only while confirmed.
     */
    TAKING_OVER,
    /** This deployment owns the partition: its partition verticle is deployed. */
    OWNER,
    /** The deployment has stopped. */
    STOPPED
  }

  private final Vertx vertx;
  private final Context context;
  private final DedupOptions options;
  private final int partition;
  private final DedupClock clock;
  private final PartitionTimer timer;
  private final LongSupplier leaseClock;
  private final String owner;
  private final Path partitionDir;
  private final Supplier<PartitionVerticle> factory;
  /** {@code <address>.<p>}: the partition's address and the key of its lock, epoch, release and deployed term. */
  private final String name;
  /** The partition's lock, epoch counter, clean releases and deployed terms in the cluster. */
  private final OwnerLock lock;
  /** The journal directory's {@code owner-epoch} file. */
  private final OwnerEpochFile epochFile;
  /** The owner's periodic confirmation of its epoch. */
  private final OwnerChecks checks;

  private volatile Role role = Role.STANDBY;
  private volatile OwnerTerm term;
  private volatile PartitionVerticle verticle;
  private String deploymentId;
  private long timerId = -1;
  private boolean busy;
  private boolean stopping;
  private boolean loggedStandby;
  /** Whether the current term's predecessor released cleanly (or there was none). */
  private boolean predecessorClean;
  /** Why the term must step down once its partition's deployment ends (a check failed meanwhile), or null. */
  private String pendingStepDown;
  private boolean stopStarted;
  private final Promise<Void> started = Promise.promise();
  private final Promise<Void> stopped = Promise.promise();

  /**
   * @param vertx the Vert.x instance (clustered or not)
   * @param context the context of the service's deployment: every method is called there
   * @param options validated options
   * @param partition the partition's number
   * @param clock the service's (window's) clock: the takeover instant, from which new ids are unvouched for W
   * @param timer the timers of the lock polls, the checks and the wait after an unclean loss, firing on
   *     {@code context}
   * @param leaseClock the lease clock, monotonic ms ({@link OwnerTerm#MONOTONIC_MS} in production)
   * @param owner the name of this deployment, as {@code stats} reports the owner
   * @param partitionDir the partition's journal directory, or null without a journal
   * @param factory makes a new partition verticle (not deployed yet) for each owner's term
   */
  PartitionOwnership(Vertx vertx, Context context, DedupOptions options, int partition, DedupClock clock,
      PartitionTimer timer, LongSupplier leaseClock, String owner, Path partitionDir, Supplier<PartitionVerticle> factory) {
    this(vertx, context, options, partition, clock, timer, leaseClock, owner, partitionDir, factory,
        vertx.sharedData());
  }

  /**
   * As the constructor above, with the cluster's shared data given: a test's, which can hold a cluster call back.
   *
   * @param data where the partition's lock, epoch counter, release and deployed term live
   */
  PartitionOwnership(Vertx vertx, Context context, DedupOptions options, int partition, DedupClock clock,
      PartitionTimer timer, LongSupplier leaseClock, String owner, Path partitionDir,
      Supplier<PartitionVerticle> factory, SharedData data) {
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.context = Objects.requireNonNull(context, "context");
    this.options = Objects.requireNonNull(options, "options");
    this.partition = partition;
    this.clock = Objects.requireNonNull(clock, "clock");
    this.timer = Objects.requireNonNull(timer, "timer");
    this.leaseClock = Objects.requireNonNull(leaseClock, "leaseClock");
    this.owner = Objects.requireNonNull(owner, "owner");
    this.partitionDir = partitionDir;
    this.factory = Objects.requireNonNull(factory, "factory");
    this.name = options.getAddress() + "." + partition;
    this.lock = new OwnerLock(Objects.requireNonNull(data, "data"), name);
    this.epochFile = new OwnerEpochFile(vertx, partitionDir);
    this.checks = new OwnerChecks(name, options, timer, this.leaseClock, lock, new OwnerChecks.Owner() {
      @Override
      public boolean current(OwnerTerm t) {
        return !stopping && term == t && !t.revoked() && pendingStepDown == null;
      }

      @Override
      public void checkFailed(OwnerTerm t, String why) {
        PartitionOwnership.this.checkFailed(t, why);
      }

      @Override
      public void confirmed(OwnerTerm t) {
        if (role == Role.OWNER && !t.deploymentRecorded() && !busy) {
          lock.recordDeployed(t); // its write failed at deployment: tried again at each confirmation
        }
      }
    });
  }

  /**
   * Makes the ownership of a partition of the service with Vert.x timers of {@code vertx}.
   *
   * @param vertx the Vert.x instance
   * @param context the service deployment's context; the call must be made on it
   * @param options validated options
   * @param partition the partition's number
   * @param clock the service's clock
   * @param owner the name of this deployment
   * @param partitionDir the partition's journal directory, or null
   * @param factory makes a new partition verticle for each owner's term
   * @return a new ownership, not started
   */
  public static PartitionOwnership of(Vertx vertx, Context context, DedupOptions options, int partition,
      DedupClock clock, String owner, Path partitionDir, Supplier<PartitionVerticle> factory) {
    return new PartitionOwnership(vertx, context, options, partition, clock, PartitionTimer.of(vertx),
        OwnerTerm.MONOTONIC_MS, owner,
        partitionDir, factory);
  }

  /** @return the partition's number */
  public int partitionNumber() {
    return partition;
  }

  /** @return what this deployment is to its partition now; any thread */
  public Role role() {
    return role;
  }

  /** @return the epoch of this deployment's term while it takes over or owns the partition, else 0; any thread */
  public long epoch() {
    OwnerTerm t = term;
    return t == null ? 0 : t.epoch();
  }

  /** @return the partition verticle while this deployment owns the partition, else null; any thread */
  public PartitionVerticle partition() {
    return verticle;
  }

  /**
   * Tries once to take the partition; polls on as its standby if another owner holds it.
   *
   * @return completes once this deployment owns the partition and its partition verticle is deployed, or once it
   *     found the partition owned by another and stands by; fails if the partition verticle's deployment failed
   */
  public Future<Void> start() {
    attempt();
    return started.future();
  }

  /**
   * A try for the lock did not get it: stop if stopping, else read the counter (within {@code ownerCheckMs}), then
   * stand by and try again later. A later takeover that finds the counter at or below the newest epoch read knows
   * the counter was lost ({@link OwnerTakeover}); reading at every poll keeps that epoch at most one poll old.
   */
  private void attemptFailed(Throwable cause) {
    if (!stopping) {
      checks.read().onComplete(ar -> {
        if (ar.failed()) {
          LOG.debug("partition {}: standby could not read the epoch: {}", name, ar.cause().toString());
        }
        standByUnlessStopping(cause);
      });
      return;
    }
    standByUnlessStopping(cause);
  }

  private void standByUnlessStopping(Throwable cause) {
    busy = false;
    if (stopping) {
      stop();
      return;
    }
    standBy(cause);
  }

  /**
   * Stops: no more polls or checks; an owner ends its term (it decides nothing more), undeploys its partition if it
   * is still deployed, marks the release clean in the cluster (so the next owner need not wait out a lease) and
   * releases the lock. A step in flight (a try for the lock, the takeover's reads, the read after a lease wait, the
   * partition's deployment, a step-down) ends first; a partition not deployed yet is deployed no more.
   *
   * <p>The release is clean if this term answered (it was the owner), or if it decided nothing and its predecessor
   * had released cleanly (nobody can be deciding then); a term that waited out an unclean predecessor's lease and
   * stopped before it answered is not clean, so the next owner waits a lease in its stead.
   *
   * @return completes once the step in flight has ended and the lock is released (or there was none); never fails;
   *     every call returns the same future
   */
  public Future<Void> stop() {
    stopping = true;
    cancelTimer();
    checks.cancel();
    started.tryComplete();
    if (busy || stopStarted) {
      // A step in flight: its continuation sees stopping and calls this again, which completes the future.
      return stopped.future();
    }
    stopStarted = true;
    OwnerTerm t = term;
    if (t == null || !lock.held()) {
      lock.release();
      term = null;
      role = Role.STOPPED;
      stopped.tryComplete();
      return stopped.future();
    }
    t.revoke();
    boolean clean = role == Role.OWNER || predecessorClean;
    Future<Void> marked = undeployPartition();
    if (role == Role.OWNER && !t.deploymentRecorded()) {
      // Its record failed at deployment: the next owner on this journal hands it over only with the record.
      marked = marked.compose(v -> lock.recordDeployed(t));
    }
    if (clean) {
      marked = marked.compose(v -> markReleased(t));
    }
    boolean answered = role == Role.OWNER;
    marked.onComplete(v -> {
      lock.release();
      term = null;
      role = Role.STOPPED;
      LOG.info("partition {}: released by its {} (epoch {}{})", name, answered ? "owner" : "taking-over deployment",
          t.epoch(), clean ? "" : ", not clean");
      stopped.tryComplete();
    });
    return stopped.future();
  }

  // ------------------------------------------------------------------------------------------------------ standby

  private void attempt() {
    timerId = -1;
    if (stopping || busy || role != Role.STANDBY) {
      return;
    }
    busy = true;
    lock.tryAcquire().onComplete(ar -> {
      if (ar.failed()) {
        attemptFailed(ar.cause());
        return;
      }
      if (stopping) {
        busy = false;
        stop(); // no term yet: releases the lock
        return;
      }
      takeOver();
    });
  }

  /** Another owner holds the lock (or the try failed): stand by and try again after a poll interval. */
  private void standBy(Throwable why) {
    role = Role.STANDBY;
    if (!loggedStandby) {
      loggedStandby = true;
      LOG.info("partition {}: standby, another deployment owns it ({})", name, why.getMessage());
    }
    started.tryComplete();
    schedule(options.getOwnerLockPollMs(), this::attempt);
  }

  // ----------------------------------------------------------------------------------------------------- takeover

  /**
   * Holds the lock: takes the next epoch, learns whether the previous owner released cleanly, reads the journal's
   * {@code owner-epoch} file (written only once the partition is deployed, {@link #deploy}); then decides the term
   * ({@link OwnerTakeover}).
   */
  private void takeOver() {
    role = Role.TAKING_OVER;
    long askedMs = leaseClock.getAsLong();
    OwnerTakeover.learn(lock, epochFile).onComplete(ar -> {
      if (ar.failed()) {
        busy = false;
        LOG.warn("partition {}: took the lock but could not take an epoch: {}; standing by", name,
            ar.cause().toString());
        lock.release();
        if (stopping) {
          stop();
          return;
        }
        standBy(ar.cause());
        return;
      }
      OwnerTakeover k = ar.result();
      boolean journaled = partitionDir != null;
      OwnerTerm t = k.term(clock.nowMs(), options, journaled, owner, leaseClock);
      t.confirm(askedMs + options.getOwnerLeaseMs());
      term = t;
      predecessorClean = k.clean();
      pendingStepDown = null;
      busy = false;
      if (stopping) {
        stop();
        return;
      }
      k.log(name, t, options, journaled);
      if (k.clean()) {
        // The lease runs from the takeover: the checks start now, so a recovery longer than the lease does not
        // leave the owner unconfirmed when it starts to answer.
        checks.schedule(t, askedMs);
        busy = true;
        deploy(t);
      } else {
        schedule(options.getOwnerLeaseMs(), () -> confirmThenDeploy(t));
      }
    });
  }

  /** After waiting out the previous owner's lease: still ours? Then deploy. */
  private void confirmThenDeploy(OwnerTerm t) {
    timerId = -1;
    if (stopping || term != t) {
      return;
    }
    busy = true;
    long askedMs = leaseClock.getAsLong();
    checks.verify(t, askedMs).onComplete(ar -> {
      if (stopping) {
        busy = false;
        stop();
      } else if (ar.result() == null) {
        // The lost predecessor may have decided until now: the unvouched window W and the coverage start here.
        t.decidesFrom(clock.nowMs(), options.getWindowMs());
        checks.schedule(t, askedMs);
        deploy(t);
      } else {
        stepDown(t, ar.result());
      }
    });
  }

  /**
   * Deploys the partition of term {@code t} (it recovers its journal), then writes the journal's
   * {@code owner-epoch} file (this term opened it) and becomes the owner. Called with {@code busy} set.
   */
  private void deploy(OwnerTerm t) {
    if (stopping) {
      busy = false;
      stop();
      return;
    }
    PartitionVerticle v = factory.get().term(t);
    verticle = v;
    vertx.deployVerticle(v).compose(id -> {
      deploymentId = id;
      // The journal is this term's now: the next owner on this directory finds it handed over, with the mark, if
      // the cluster's record of the deployed term names this term too.
      return epochFile.write(t).otherwise(e -> {
        LOG.warn("partition {}: could not write {} in its journal directory: {}; the next owner on it treats the"
            + " journal as not handed over", name, OwnerEpochFile.NAME, e.toString());
        return null;
      }).compose(written -> lock.recordDeployed(t));
    }).compose(written -> confirmIfLapsed(t)).onComplete(ar -> {
      if (ar.failed()) {
        verticle = null;
        checks.cancel();
        t.revoke();
        if (stopping) {
          // The service is being undeployed: Vert.x refuses a child of a deployment that is going away.
          busy = false;
          LOG.info("partition {}: the partition of epoch {} was not deployed, its service is stopping: {}", name,
              t.epoch(), ar.cause().toString());
          stop();
          return;
        }
        LOG.error("partition " + name + ": the partition of epoch " + t.epoch() + " failed to deploy", ar.cause());
        leaveAfterFailedDeployment(t, ar.cause());
        return;
      }
      if (pendingStepDown != null) {
        // A check failed while the partition deployed.
        String why = pendingStepDown;
        pendingStepDown = null;
        if (stopping) {
          busy = false;
          stop();
          return;
        }
        stepDown(t, why);
        return;
      }
      busy = false;
      role = Role.OWNER;
      started.tryComplete();
      if (stopping) {
        stop();
      }
    });
  }

  /**
   * Ends term {@code t}, whose partition failed to deploy, and stands by again (or stops, if stopping meanwhile):
   * marks its release clean if its predecessor's was, then releases the lock. Called with {@code busy} set; clears
   * it.
   *
   * <p>The failure need not be the partition's own: Vert.x refuses the child of a deployment whose undeploy has
   * begun, and that failure can reach this context before the service's {@code stop()} does (the undeploy marks the
   * service's deployment as going away on the caller's thread, then runs {@code stop()} on this context). Then
   * {@code stopping} is not set yet, and the term is gone by the time {@link #stop()} runs, so the release must be
   * marked here, as {@link #stop()} would have marked it. Either way it may be: Vert.x has undeployed (or rolled
   * back) the partition before it fails the deployment, and the term is revoked, so nothing of this term decides any
   * more; with a clean predecessor, nobody does.
   */
  private void leaveAfterFailedDeployment(OwnerTerm t, Throwable cause) {
    Future<Void> marked = predecessorClean ? markReleased(t) : Future.succeededFuture();
    marked.onComplete(v -> {
      busy = false;
      term = null;
      lock.release();
      role = Role.STANDBY;
      if (stopping) {
        stop(); // no term any more: the lock is released already
        return;
      }
      if (started.tryFail(cause)) {
        return;
      }
      // After the service's start: leave the partition to another deployment, and try again later.
      schedule(options.getOwnerLockPollMs(), this::attempt);
    });
  }

  /**
   * Marks the release of term {@code t} clean in the cluster, so the next owner need not wait out a lease.
   *
   * @return completes once marked or failed (logged: the next owner then waits out a lease); never fails
   */
  private Future<Void> markReleased(OwnerTerm t) {
    return lock.markReleased(t.epoch()).otherwise(e -> {
      LOG.warn("partition {}: could not mark the release of epoch {} as clean: {}; the next owner waits out a"
          + " lease", name, t.epoch(), e.toString());
      return null;
    });
  }

  // -------------------------------------------------------------------------------------------------------- fence

  /**
   * Confirms term {@code t} once more if its lease ran out while its partition deployed (a recovery longer than the
   * lease, or a check that has not answered yet), so that the owner answers as soon as it is the owner. A read that
   * fails or shows a newer epoch makes the term step down once its deployment has ended.
   *
   * @return completes when the lease is confirmed or the step-down is pending; never fails
   */
  private Future<Void> confirmIfLapsed(OwnerTerm t) {
    if (t.confirmed() || pendingStepDown != null) {
      return Future.succeededFuture();
    }
    return checks.verify(t, leaseClock.getAsLong()).map(why -> {
      if (why != null && pendingStepDown == null) {
        t.revoke();
        pendingStepDown = why;
      }
      return null;
    });
  }

  /**
   * A check of the current term failed ({@link OwnerChecks}): the term steps down now, or, while its partition is
   * deploying, decides nothing from now and steps down once the deployment ends.
   */
  private void checkFailed(OwnerTerm t, String why) {
    if (busy) {
      t.revoke();
      pendingStepDown = why;
      return;
    }
    busy = true;
    stepDown(t, why);
  }

  /**
   * Ends the term at once, undeploys the partition, releases the lock and stands by again (or stops, if stopping
   * meanwhile). Called with {@code busy} set; clears it.
   */
  private void stepDown(OwnerTerm t, String why) {
    t.revoke();
    checks.cancel();
    LOG.warn("partition {}: stepping down as owner (epoch {}): {}", name, t.epoch(), why);
    undeployPartition().onComplete(v -> {
      busy = false;
      term = null;
      lock.release();
      loggedStandby = false;
      if (stopping) {
        stop();
        return;
      }
      role = Role.STANDBY;
      started.tryComplete();
      schedule(options.getOwnerLockPollMs(), this::attempt);
    });
  }

  // ---------------------------------------------------------------------------------------------------- internals

  private Future<Void> undeployPartition() {
    String id = deploymentId;
    deploymentId = null;
    verticle = null;
    if (id == null || !vertx.deploymentIDs().contains(id)) {
      // Never deployed, or undeployed already with the service (a child deployment goes first).
      return Future.succeededFuture();
    }
    return vertx.undeploy(id).otherwise(e -> {
      LOG.warn("partition {}: undeploying it failed: {}", name, e.toString());
      return null;
    });
  }

  private void schedule(long delayMs, Runnable task) {
    cancelTimer();
    if (!stopping) {
      timerId = timer.schedule(delayMs, task);
    }
  }

  private void cancelTimer() {
    if (timerId != -1) {
      timer.cancel(timerId);
      timerId = -1;
    }
  }
}
