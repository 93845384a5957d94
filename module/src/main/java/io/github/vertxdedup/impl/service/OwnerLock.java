package io.github.vertxdedup.impl.service;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.shareddata.Lock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's side of one partition's ownership, through Vert.x shared data (Hazelcast with vertx-hazelcast, the
 * JVM without a cluster): the owner's lock, the epoch counter whose values are the owners' fencing tokens, and the
 * map of clean releases. {@link PartitionOwnership} decides when to try, wait, confirm or let go; this class only
 * speaks to the cluster.
 *
 * <pre>
 *   lock     "io.github.vertxdedup.owner.&lt;address&gt;.&lt;p&gt;", tried with getLockWithTimeout(LOCK_ATTEMPT_MS)
 *            behind the JVM-local lock of the same name + ".local"
 *   epoch    counter "io.github.vertxdedup.epoch.&lt;address&gt;.&lt;p&gt;": incremented by each new owner
 *   release  AsyncMap RELEASES_MAP, key "&lt;address&gt;.&lt;p&gt;": the epoch an owner released cleanly
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

  /** How long one try for the lock waits, ms: short, since a try may hold a worker thread while it waits. */
  static final long LOCK_ATTEMPT_MS = 10;
  /** The cluster map of clean releases: partition name to the epoch released. */
  static final String RELEASES_MAP = "io.github.vertxdedup.owner.releases";

  private final Vertx vertx;
  /** {@code <address>.<p>}: the key of the partition's lock, epoch and release. */
  private final String name;
  private Lock lock;
  private Lock localLock;

  /**
   * @param vertx the Vert.x instance (clustered or not)
   * @param name the partition's name, {@code <address>.<p>}
   */
  OwnerLock(Vertx vertx, String name) {
    this.vertx = vertx;
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
    return vertx.sharedData().getLocalLockWithTimeout(lockName() + ".local", LOCK_ATTEMPT_MS).compose(local -> {
      localLock = local;
      return vertx.sharedData().getLockWithTimeout(lockName(), LOCK_ATTEMPT_MS).transform(ar -> {
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

  /** @return the next epoch, taken by a new owner (the counter incremented); fails if the cluster fails */
  Future<Long> nextEpoch() {
    return vertx.sharedData().getCounter(counterName()).compose(c -> c.incrementAndGet());
  }

  /** @return the counter's value: the epoch of the newest owner (0: none yet); fails if the cluster fails */
  Future<Long> epoch() {
    return vertx.sharedData().getCounter(counterName()).compose(c -> c.get());
  }

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

  private Future<AsyncMap<String, Long>> releases() {
    return vertx.sharedData().getAsyncMap(RELEASES_MAP);
  }

  private String lockName() {
    return "io.github.vertxdedup.owner." + name;
  }

  private String counterName() {
    return "io.github.vertxdedup.epoch." + name;
  }
}
