package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.time.DedupClock;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.shareddata.Lock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
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
 *   journal  &lt;journalDir&gt;/&lt;address&gt;/&lt;p&gt;/owner-epoch: the epoch of the last owner that opened this
 *            directory. Read at takeover: previous epoch means the journal is the previous owner's (handed over).
 *
 * Fence (Kleppmann, "How to do distributed locking", 2016: a lock alone is not a fence):
 *   an owner reads its epoch counter every ownerCheckMs; asked at t and answered with its own epoch, its lease runs
 *   to t + ownerLeaseMs (OwnerTerm); a read that fails, times out (ownerCheckMs) or shows a larger epoch makes it
 *   step down at once (stop deciding, undeploy the partition, close its journal, release the lock, stand by).
 *   Each decision first checks the lease on the event loop, so an owner cut off from the cluster decides nothing
 *   after its lease. A new owner that follows an unclean loss waits one lease before it deploys, by which time its
 *   predecessor has stopped deciding, provided the cluster manager refuses the predecessor's reads once it is cut
 *   off (Hazelcast: split-brain protection with a majority quorum on those maps; docs/partitioning.md).
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

  /** How long one try for the lock waits, ms: short, since a try may hold a worker thread while it waits. */
  static final long LOCK_ATTEMPT_MS = 10;
  /** The cluster map of clean releases: partition name to the epoch released. */
  static final String RELEASES_MAP = "io.github.vertxdedup.owner.releases";
  /** The file in a partition's journal directory that names the epoch of the last owner that opened it. */
  static final String EPOCH_FILE = "owner-epoch";

  /** What a deployment is to its partition now. */
  public enum Role {
    /** Another deployment owns the partition (or none does yet); this one polls for the lock. */
    STANDBY,
    /** This deployment holds the lock and is taking over: it has not deployed the partition yet. */
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
  /** {@code <address>.<p>}: the partition's address and the key of its lock, epoch and release. */
  private final String name;

  private volatile Role role = Role.STANDBY;
  private volatile OwnerTerm term;
  private volatile PartitionVerticle verticle;
  private String deploymentId;
  private Lock lock;
  private Lock localLock;
  private long timerId = -1;
  private boolean busy;
  private boolean stopping;
  private boolean loggedStandby;
  private final Promise<Void> started = Promise.promise();

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
   * Stops: no more polls or checks; an owner ends its term (it decides nothing more), undeploys its partition if it
   * is still deployed, marks the release clean in the cluster (so the next owner need not wait out a lease) and
   * releases the lock.
   *
   * @return completes once the lock is released (or there was none); never fails
   */
  public Future<Void> stop() {
    stopping = true;
    cancelTimer();
    started.tryComplete();
    OwnerTerm t = term;
    if (busy) {
      // An acquisition or deployment in flight: its continuation sees stopping and calls this again.
      return Future.succeededFuture();
    }
    if (t == null || lock == null) {
      releaseLock();
      role = Role.STOPPED;
      return Future.succeededFuture();
    }
    t.revoke();
    // Clean only if this term ever answered: one still waiting out an unclean predecessor's lease has not, and the
    // next owner must wait in its stead.
    boolean clean = role == Role.OWNER;
    Future<Void> marked = undeployPartition();
    if (clean) {
      marked = marked.compose(v -> releases()).compose(m -> m.put(name, t.epoch())).otherwise(e -> {
        LOG.warn("partition {}: could not mark the release of epoch {} as clean: {}; the next owner waits out a"
            + " lease", name, t.epoch(), e.toString());
        return null;
      });
    }
    return marked.onComplete(v -> {
      releaseLock();
      term = null;
      role = Role.STOPPED;
      LOG.info("partition {}: released by its owner (epoch {}{})", name, t.epoch(), clean ? "" : ", not clean");
    }).mapEmpty();
  }

  // ------------------------------------------------------------------------------------------------------ standby

  private void attempt() {
    timerId = -1;
    if (stopping || busy || role != Role.STANDBY) {
      return;
    }
    busy = true;
    // The JVM-local lock first: Hazelcast's key lock is reentrant for the thread that holds it, and two deployments
    // in one member may try from the same worker thread; the local lock keeps the second out.
    vertx.sharedData().getLocalLockWithTimeout(lockName() + ".local", LOCK_ATTEMPT_MS).onComplete(local -> {
      if (local.failed()) {
        busy = false;
        standBy(local.cause());
        return;
      }
      localLock = local.result();
      vertx.sharedData().getLockWithTimeout(lockName(), LOCK_ATTEMPT_MS).onComplete(ar -> {
        if (ar.failed()) {
          busy = false;
          releaseLock();
          standBy(ar.cause());
          return;
        }
        lock = ar.result();
        if (stopping) {
          busy = false;
          releaseLock();
          role = Role.STOPPED;
          return;
        }
        takeOver();
      });
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

  /** Holds the lock: takes the next epoch, learns whether the previous owner released cleanly, reads the journal's. */
  private void takeOver() {
    role = Role.TAKING_OVER;
    long askedMs = leaseClock.getAsLong();
    vertx.sharedData().getCounter(counterName()).compose(c -> c.incrementAndGet()).compose(epoch ->
        releases().compose(m -> m.get(name)).compose(released -> journalEpoch(epoch).map(journal ->
            new long[] {epoch, released == null ? -1 : released, journal})))
        .onComplete(ar -> {
          if (ar.failed()) {
            busy = false;
            LOG.warn("partition {}: took the lock but could not take an epoch: {}; standing by", name,
                ar.cause().toString());
            releaseLock();
            standBy(ar.cause());
            return;
          }
          long epoch = ar.result()[0];
          long previous = epoch - 1;
          boolean clean = previous == 0 || ar.result()[1] == previous;
          boolean handedOver = previous == 0 || (partitionDir != null && ar.result()[2] == previous);
          OwnerTerm t = new OwnerTerm(epoch, previous, handedOver, clock.nowMs(), owner, leaseClock);
          t.confirm(askedMs + options.getOwnerLeaseMs());
          term = t;
          busy = false;
          if (stopping) {
            stop();
            return;
          }
          if (previous == 0) {
            LOG.info("partition {}: owner, epoch 1 (first owner)", name);
          } else if (clean) {
            log(t).log("partition {}: taking over, epoch {} after a clean release of epoch {}; journal {}", name,
                epoch, previous, journalWords(t));
          } else {
            log(t).log("partition {}: taking over, epoch {} after epoch {} was lost without a clean release; waiting"
                + " out its lease ({} ms) before answering; journal {}", name, epoch, previous,
                options.getOwnerLeaseMs(), journalWords(t));
          }
          if (clean) {
            busy = true;
            deploy(t);
          } else {
            schedule(options.getOwnerLeaseMs(), () -> confirmThenDeploy(t));
          }
        });
  }

  private static org.slf4j.spi.LoggingEventBuilder log(OwnerTerm t) {
    return t.journalHandedOver() ? LOG.atInfo() : LOG.atWarn();
  }

  private String journalWords(OwnerTerm t) {
    if (t.journalHandedOver()) {
      return "handed over (the previous owner's): rebuilding the window from it";
    }
    return (partitionDir == null ? "none" : "not the previous owner's") + ": new ids are unvouched for "
        + options.getWindowMs() + " ms (unvouchedPolicy=" + options.getUnvouchedPolicy() + ")";
  }

  /** After waiting out the previous owner's lease: still ours? Then deploy. */
  private void confirmThenDeploy(OwnerTerm t) {
    timerId = -1;
    if (stopping || term != t) {
      return;
    }
    busy = true;
    long askedMs = leaseClock.getAsLong();
    readEpoch().onComplete(ar -> {
      if (ar.succeeded() && ar.result() == t.epoch()) {
        t.confirm(askedMs + options.getOwnerLeaseMs());
        // The lost predecessor may have decided until now: the unvouched window W and the coverage start here.
        t.decidesFrom(clock.nowMs());
        deploy(t);
      } else {
        busy = false;
        stepDown(t, ar.failed() ? "its epoch could not be read: " + ar.cause() : "epoch " + ar.result()
            + " is newer");
      }
    });
  }

  private void deploy(OwnerTerm t) {
    PartitionVerticle v = factory.get().term(t);
    verticle = v;
    vertx.deployVerticle(v).onComplete(ar -> {
      busy = false;
      if (ar.failed()) {
        verticle = null;
        LOG.error("partition " + name + ": the partition of epoch " + t.epoch() + " failed to deploy", ar.cause());
        t.revoke();
        term = null;
        releaseLock();
        role = Role.STANDBY;
        if (started.tryFail(ar.cause())) {
          return;
        }
        // After the service's start: leave the partition to another deployment, and try again later.
        schedule(options.getOwnerLockPollMs(), this::attempt);
        return;
      }
      deploymentId = ar.result();
      role = Role.OWNER;
      started.tryComplete();
      if (stopping) {
        stop();
        return;
      }
      schedule(options.getOwnerCheckMs(), () -> check(t));
    });
  }

  // -------------------------------------------------------------------------------------------------------- fence

  /** Confirms the owner's epoch through the cluster: extends its lease, or steps down. */
  private void check(OwnerTerm t) {
    timerId = -1;
    if (stopping || term != t) {
      return;
    }
    long askedMs = leaseClock.getAsLong();
    readEpoch().onComplete(ar -> {
      if (stopping || term != t) {
        return;
      }
      if (ar.succeeded() && ar.result() == t.epoch()) {
        t.confirm(askedMs + options.getOwnerLeaseMs());
        schedule(options.getOwnerCheckMs(), () -> check(t));
      } else {
        stepDown(t, ar.failed() ? "its epoch could not be confirmed: " + ar.cause() : "the partition's epoch is "
            + ar.result() + ", another owner took over");
      }
    });
  }

  /** The epoch counter's value, or a failure if the read fails or takes longer than {@code ownerCheckMs}. */
  private Future<Long> readEpoch() {
    return vertx.sharedData().getCounter(counterName()).compose(c -> c.get())
        .timeout(options.getOwnerCheckMs(), TimeUnit.MILLISECONDS);
  }

  /** Ends the term at once, undeploys the partition, releases the lock and stands by again. */
  private void stepDown(OwnerTerm t, String why) {
    t.revoke();
    LOG.warn("partition {}: stepping down as owner (epoch {}): {}", name, t.epoch(), why);
    undeployPartition().onComplete(v -> {
      term = null;
      releaseLock();
      role = Role.STANDBY;
      loggedStandby = false;
      started.tryComplete();
      if (!stopping) {
        schedule(options.getOwnerLockPollMs(), this::attempt);
      }
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

  private void releaseLock() {
    release(lock);
    lock = null;
    release(localLock);
    localLock = null;
  }

  private void release(Lock l) {
    if (l != null) {
      try {
        l.release();
      } catch (RuntimeException e) {
        LOG.warn("partition {}: releasing its lock failed: {}", name, e.toString());
      }
    }
  }

  private Future<AsyncMap<String, Long>> releases() {
    return vertx.sharedData().getAsyncMap(RELEASES_MAP);
  }

  /**
   * Reads the epoch of the last owner that opened the partition's journal directory and writes {@code epoch} in its
   * place, off the event loop.
   *
   * @return the epoch read; -1 without a journal or file
   */
  private Future<Long> journalEpoch(long epoch) {
    if (partitionDir == null) {
      return Future.succeededFuture(-1L);
    }
    Path dir = partitionDir;
    return vertx.executeBlocking(() -> swapEpochFile(dir, epoch), false);
  }

  /**
   * Reads {@code <dir>/owner-epoch} and replaces it with {@code epoch} (written to a temporary file and moved into
   * place, so a reader sees the old or the new number, never part of one).
   *
   * @param dir the partition's journal directory; created if absent
   * @param epoch the new owner's epoch
   * @return the epoch the file held; -1 if there was none or it held no number
   * @throws UncheckedIOException if the directory or the file cannot be read or written
   */
  static long swapEpochFile(Path dir, long epoch) {
    Path file = dir.resolve(EPOCH_FILE);
    try {
      Files.createDirectories(dir);
      long previous = -1;
      if (Files.exists(file)) {
        String text = Files.readString(file, StandardCharsets.UTF_8).trim();
        try {
          previous = Long.parseLong(text);
        } catch (NumberFormatException e) {
          LOG.warn("{} holds '{}', not an epoch: the journal is treated as not handed over", file, text);
        }
      }
      Path tmp = dir.resolve(EPOCH_FILE + ".tmp");
      Files.writeString(tmp, epoch + "\n", StandardCharsets.UTF_8);
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      return previous;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read or write " + file, e);
    }
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

  private String lockName() {
    return "io.github.vertxdedup.owner." + name;
  }

  private String counterName() {
    return "io.github.vertxdedup.epoch." + name;
  }
}
