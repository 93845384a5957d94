package io.github.vertxdedup.impl.service;

import io.vertx.core.Future;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.shareddata.Lock;
import io.vertx.core.shareddata.SharedData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's side of one partition's ownership, through Vert.x shared data (Hazelcast with vertx-hazelcast, the
 * JVM without a cluster): the owner's lock, the epoch counter whose values are the owners' fencing tokens, the map
 * of clean releases and the map of deployed terms. {@link PartitionOwnership} decides when to try, wait, confirm or
 * let go; this class only speaks to the cluster.
 *
 * <pre>
 *   lock     "io.github.vertxdedup.owner.&lt;address&gt;.&lt;p&gt;", tried with getLockWithTimeout(LOCK_ATTEMPT_MS)
 *            behind the JVM-local lock of the same name + ".local"
 *   epoch    counter "io.github.vertxdedup.epoch.&lt;address&gt;.&lt;p&gt;": incremented by each new owner; the newest
 *            value read through this object is kept, so that a counter found at or below it is known to be lost
 *   release  AsyncMap RELEASES_MAP, key "&lt;address&gt;.&lt;p&gt;": the epoch an owner released cleanly
 *   term     AsyncMap TERMS_MAP, same key: "&lt;epoch&gt;:&lt;term id&gt;" of the newest owner whose partition deployed
 * </pre>
 *
 * <p>Threads: not thread-safe. Every method is called on the context of the ownership's deployment, and the futures
 * it returns complete there (Vert.x completes a shared-data call on its caller's context); the lock a try takes is
 * held in a plain field confined to that context.
 *
 * <p>Errors: the futures fail with the cluster manager's failure (a lock not free within {@link #LOCK_ATTEMPT_MS}, a
 * member cut off from the cluster, a refused read); {@link #release()} never throws, it logs a release that fails.
 * Its log lines keep the category of {@link PartitionOwnership}, where they were written before this class was split
 * from it.
 */
final class OwnerLock {

  private static final Logger LOG = LoggerFactory.getLogger(PartitionOwnership.class);

  /**
   * How far past the newest known epoch a counter that went back is moved: more than the takeovers that could have
   * taken an epoch between two reads of this deployment (one lock poll apart, each takeover at least a lock try and a
   * cluster write), so the epoch taken is one nobody holds.
   */
  static final long LOST_COUNTER_MARGIN = 1_000;
  /** How long one try for the lock waits, ms: short, since a try may hold a worker thread while it waits. */
  static final long LOCK_ATTEMPT_MS = 10;
  /** The cluster map of clean releases: partition name to the epoch released. */
  static final String RELEASES_MAP = "io.github.vertxdedup.owner.releases";
  /**
   * The cluster map of deployed terms: partition name to {@code "<epoch>:<term id>"} of the newest owner whose
   * partition deployed (its journal opened and its {@code owner-epoch} file written).
   */
  static final String TERMS_MAP = "io.github.vertxdedup.owner.terms";

  private final SharedData data;
  /** {@code <address>.<p>}: the key of the partition's lock, epoch, release and deployed term. */
  private final String name;
  private Lock lock;
  private Lock localLock;
  /** The newest epoch read or taken through this object: a counter found at or below it was lost. */
  private long newestSeen;

  /**
   * @param data the shared data of the Vert.x instance (clustered or not)
   * @param name the partition's name, {@code <address>.<p>}
   */
  OwnerLock(SharedData data, String name) {
    this.data = data;
    this.name = name;
  }

  /**
   * Tries once for the lock, waiting at most {@link #LOCK_ATTEMPT_MS} for each of its two parts. The JVM-local lock
   * comes first: Hazelcast's key lock is reentrant for the thread that holds it, and two deployments in one member
   * may try from the same worker thread; the local lock keeps the second out.
   *
   * @return completes once both parts are held ({@link #held()}); fails if either is not free in time (or the cluster
   *     fails), with the local part released again
   */
  Future<Void> tryAcquire() {
    return data.getLocalLockWithTimeout(lockName() + ".local", LOCK_ATTEMPT_MS).compose(local -> {
      localLock = local;
      return data.getLockWithTimeout(lockName(), LOCK_ATTEMPT_MS).transform(ar -> {
        if (ar.failed()) {
          release();
          return Future.failedFuture(ar.cause());
        }
        lock = ar.result();
        return Future.succeededFuture();
      });
    });
  }

  /** @return whether this deployment holds the partition's lock (since {@link #tryAcquire()}, until released) */
  boolean held() {
    return lock != null;
  }

  /** Releases whatever part of the lock is held (none: nothing happens). Never throws: a failure is logged. */
  void release() {
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

  /**
   * Takes the next epoch for a new owner: increments the counter. A counter found at or below {@code floor} or the
   * newest epoch this object has read was lost (Hazelcast lost the partition that held it, {@link OwnerTakeover}); it
   * is then moved {@link #LOST_COUNTER_MARGIN} past the larger of them, so that it stays above any epoch taken since
   * this deployment last read it (the reads are one lock poll apart), and the fence keeps ordering owners.
   *
   * @param floor another epoch known to have been taken (the last clean release's or deployed term's), or a smaller
   *     value
   * @return the epoch taken, with the epoch it was found at or below if the counter had gone back; fails if the
   *     cluster fails
   */
  Future<TakenEpoch> nextEpoch(long floor) {
    long known = Math.max(newestSeen, floor);
    return data.getCounter(counterName()).compose(c -> c.incrementAndGet().compose(e -> {
      if (e > known) {
        return Future.succeededFuture(new TakenEpoch(e, 0));
      }
      // Went back: adding the known epoch and the margin lands above both, whatever others added meanwhile.
      return c.addAndGet(known + LOST_COUNTER_MARGIN).map(moved -> new TakenEpoch(moved, known));
    })).onSuccess(t -> saw(t.epoch()));
  }

  /**
   * @return the counter's value: the epoch of the newest owner (0: none yet, or an entry the cluster lost); fails if
   *     the cluster fails
   */
  Future<Long> epoch() {
    return data.getCounter(counterName()).compose(c -> c.get())
        .map(v -> v == null ? 0L : v) // Hazelcast answers null for an entry lost after the counter was looked up
        .onSuccess(this::saw);
  }

  /**
   * Puts the counter back to the epoch of the owner that holds the lock after it was found lower (lost with its
   * cluster partition; {@link OwnerTakeover}), unless it changed meanwhile.
   *
   * @param found the value the owner's check read, below its epoch
   * @param ownEpoch the owner's epoch
   * @return true if the counter held {@code found} and now holds {@code ownEpoch}; false if it had changed; fails if
   *     the cluster fails
   */
  Future<Boolean> restoreEpoch(long found, long ownEpoch) {
    return data.getCounter(counterName()).compose(c -> c.compareAndSet(found, ownEpoch));
  }

  private void saw(long epoch) {
    newestSeen = Math.max(newestSeen, epoch);
  }

  /**
   * The epoch a new owner took.
   *
   * @param epoch the epoch taken
   * @param wentBackFrom the newest epoch read before, if the counter was found at or below it (it was lost and has
   *     been moved past it); else 0
   */
  record TakenEpoch(long epoch, long wentBackFrom) {}

  /** @return the epoch the last clean release recorded, or null if none did; fails if the cluster fails */
  Future<Long> releasedEpoch() {
    return releases().compose(m -> m.get(name));
  }

  /**
   * Records that the owner of {@code epoch} released the partition cleanly, so the next owner need not wait out its
   * lease.
   *
   * @param epoch the epoch released
   * @return completes once recorded; fails if the cluster fails
   */
  Future<Void> markReleased(long epoch) {
    return releases().compose(m -> m.put(name, epoch));
  }

  /**
   * The cluster's record of the newest owner whose partition deployed.
   *
   * @param epoch its epoch, or {@link OwnerEpochFile#NO_EPOCH}
   * @param termId its term id, or {@link OwnerEpochFile#NO_TERM}
   */
  record DeployedTerm(long epoch, long termId) {
    /** No record: none yet, a cluster restarted whole, an entry the cluster lost, or one that does not parse. */
    static final DeployedTerm NONE = new DeployedTerm(OwnerEpochFile.NO_EPOCH, OwnerEpochFile.NO_TERM);
  }

  /** @return the newest owner whose partition deployed, or {@link DeployedTerm#NONE}; fails if the cluster fails */
  Future<DeployedTerm> deployedTerm() {
    return data.<String, String>getAsyncMap(TERMS_MAP).compose(m -> m.get(name)).map(v -> {
      if (v == null) {
        return DeployedTerm.NONE;
      }
      int colon = v.indexOf(':');
      try {
        return new DeployedTerm(Long.parseLong(v.substring(0, colon)), Long.parseLong(v.substring(colon + 1)));
      } catch (RuntimeException e) {
        LOG.warn("partition {}: the cluster's record of its deployed term holds '{}'; ignored", name, v);
        return DeployedTerm.NONE;
      }
    });
  }

  /**
   * Records that term {@code t} deployed its partition (it opened its journal and wrote its {@code owner-epoch}
   * file): the next owner hands over that journal only if its file names this term. Marks {@code t} recorded
   * ({@link OwnerTerm#deploymentRecorded}) once written; a failure is logged, at WARN the first time for the term,
   * and is the caller's to try again.
   *
   * @return completes when recorded or failed; never fails
   */
  Future<Void> recordDeployed(OwnerTerm t) {
    return data.<String, String>getAsyncMap(TERMS_MAP)
        .compose(m -> m.put(name, t.epoch() + ":" + t.termId()))
        .map(v -> {
          t.deploymentRecorded(true);
          return (Void) null;
        }).otherwise(e -> {
          (t.deploymentRecordFailed() ? LOG.atDebug() : LOG.atWarn()).log("partition {}: could not record its"
              + " deployment of epoch {} in the cluster: {}; tried again at each check (until then the next owner"
              + " treats the journal as not handed over)", name, t.epoch(), e.toString());
          t.deploymentRecorded(false);
          return null;
        });
  }

  private Future<AsyncMap<String, Long>> releases() {
    return data.getAsyncMap(RELEASES_MAP);
  }

  private String lockName() {
    return "io.github.vertxdedup.owner." + name;
  }

  private String counterName() {
    return "io.github.vertxdedup.epoch." + name;
  }
}
