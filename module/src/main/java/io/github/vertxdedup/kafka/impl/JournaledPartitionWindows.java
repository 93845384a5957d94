package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.impl.service.PartitionState;
import io.github.vertxdedup.time.DedupClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.LocalMap;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The journaled window store, used when {@code dedup.journalDir} is set: the window of a (group, topic-partition) is
 * a partition verticle over a Chronicle Queue journal in {@code <journalDir>/<group.id>/<topic>-<partition>}, deployed
 * when an owner acquires it and undeployed (its journal flushed and closed) when the owner releases it.
 *
 * <p>The fence between owners is the journal's directory lock (an OS file lock, dropped by the kernel when its holder
 * closes it or dies). A taker whose partition verticle finds the journal locked by another process (or another Vert.x
 * instance of this one) stays recovering and retries (the partition verticle's own backoff,
 * 50 ms doubling to 2 s); this store waits for it to become ready for at most {@code acquireTimeoutMs} and then fails
 * the acquisition, undeploying the verticle. A SIGKILLed owner's lock is gone at once, so a restarted consumer takes
 * its window over without waiting; a live owner in another process holds it until it releases the partition.
 * Within one Vert.x instance a taker first waits, the same way, for the earlier owner's release: the window's address
 * ({@code <dedup.address>.<group.id>.<topic>-<partition>}) is the same for every owner, because it is also the scope
 * of the id fingerprints the journal holds, and two verticles must not listen on it at once.
 *
 * <p>{@link #acquire} completes after the journal was replayed into the window, so no record of the partition is
 * decided before the window is whole, and after the claims the journal holds for the taker's instance id were
 * released (journaled as releases): they are what the taker's previous run left open when it was killed, and its
 * records would otherwise wait out their leases. {@link Lease#resumeOffset()} is then the highest offset commit the
 * journal recorded for the partition. {@link #offsetsCommitted} journals each Kafka offset commit beside the accepted ids.
 *
 * <p>Thread-safe: its only shared state is a Vert.x local map; each lease's verticle runs on its own event loop.
 */
final class JournaledPartitionWindows implements PartitionWindows {

  private static final Logger LOG = LoggerFactory.getLogger(JournaledPartitionWindows.class);
  private static final AtomicLong GENERATION = new AtomicLong();
  /** Local map of the window addresses held in this Vert.x instance, to the token of their holder. */
  private static final String SLOTS = "io.github.vertxdedup.kafka.journaled-windows";
  /** How often a taker looks again at a window whose journal another owner still holds, in milliseconds. */
  private static final long POLL_MS = 20;

  private final Vertx vertx;
  private final DedupOptions dedup;
  private final Path journalDir;
  private final DedupClock clock;
  private final MeterRegistry registry;
  private final long acquireTimeoutMs;
  /** The journal directories this store is acquiring, holding or releasing, with how many uses of each. */
  private final Map<Path, Integer> inUse = new ConcurrentHashMap<>();

  /**
   * @param vertx the Vert.x instance the partition verticles are deployed on
   * @param dedup validated dedup options; {@code journalDir} must be set
   * @param clock the clock of the windows (the journal records its instants)
   * @param registry where the partition verticles register their meters, or null for none
   * @param acquireTimeoutMs how long {@link #acquire} waits for another owner to let the journal go, in milliseconds
   * @throws IllegalArgumentException if {@code dedup.journalDir} is not set
   */
  JournaledPartitionWindows(Vertx vertx, DedupOptions dedup, DedupClock clock, MeterRegistry registry,
      long acquireTimeoutMs) {
    if (dedup.getJournalDir() == null) {
      throw new IllegalArgumentException("dedup.journalDir must be set for a journaled window store");
    }
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.dedup = dedup;
    this.journalDir = Path.of(dedup.getJournalDir());
    this.clock = Objects.requireNonNull(clock, "clock");
    this.registry = registry;
    this.acquireTimeoutMs = acquireTimeoutMs;
  }

  /**
   * The journal directory of a (group, topic-partition): {@code <journalDir>/<group.id>/<topic>-<partition>}.
   *
   * @param journalDir the root
   * @param groupId the consumer group; must be usable as one path segment
   * @param tp the topic-partition (Kafka topic names are {@code [a-zA-Z0-9._-]}, safe in a path)
   * @return the directory
   * @throws IllegalArgumentException if the group id is empty, {@code .} or {@code ..}, or holds a path separator
   */
  static Path directory(Path journalDir, String groupId, TopicPartition tp) {
    return groupDirectory(journalDir, groupId).resolve(tp.topic() + "-" + tp.partition());
  }

  /**
   * The directory of a group's journals: {@code <journalDir>/<group.id>}.
   *
   * @param journalDir the root
   * @param groupId the consumer group; must be usable as one path segment
   * @return the directory
   * @throws IllegalArgumentException if the group id is empty, {@code .} or {@code ..}, or holds a path separator
   */
  static Path groupDirectory(Path journalDir, String groupId) {
    if (groupId.isEmpty() || groupId.equals(".") || groupId.equals("..") || groupId.indexOf('/') >= 0
        || groupId.indexOf('\\') >= 0 || groupId.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("group.id must be usable as a directory name under journalDir (not empty,"
          + " '.' or '..', no '/', '\\' or NUL) but was '" + groupId + "'");
    }
    return journalDir.resolve(groupId);
  }

  /** @return the root of the journal directories, {@code dedup.journalDir} */
  Path journalDir() {
    return journalDir;
  }

  /**
   * Whether this store holds the journal in {@code dir}: a lease of it is being acquired, is held, or is being
   * released. Any thread.
   *
   * @param dir a partition's journal directory, as {@link #directory} names it
   * @return true if in use by this store
   */
  boolean inUse(Path dir) {
    return inUse.containsKey(dir);
  }

  /** Counts a use of {@code dir} by this store: an acquisition begins. */
  private void use(Path dir) {
    inUse.merge(dir, 1, Integer::sum);
  }

  /** Ends a use of {@code dir}: an acquisition failed, or a release finished. */
  private void unuse(Path dir) {
    inUse.computeIfPresent(dir, (d, n) -> n == 1 ? null : n - 1);
  }

  @Override
  public Future<Lease> acquire(String groupId, TopicPartition tp, String ownerId) {
    final Path dir;
    try {
      dir = directory(journalDir, groupId, tp);
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(e);
    }
    // The address is also the scope of the id fingerprints in the journal, so it must be the same for every owner.
    String address = dedup.getAddress() + "." + groupId + "." + tp.topic() + "-" + tp.partition();
    String token = ownerId + "#" + GENERATION.incrementAndGet();
    use(dir);
    long deadlineNs = System.nanoTime() + acquireTimeoutMs * 1_000_000L;
    Promise<Void> slot = Promise.promise();
    takeSlot(address, token, dir, deadlineNs, slot);
    return slot.future().compose(s -> {
      DedupOptions o = new DedupOptions(dedup).setAddress(address).setPartitions(1)
          .setRouteByKey(false);
      return LocalPartition.deployJournaled(vertx, o, clock, dir, registry).compose(partition -> {
        Promise<Void> ready = Promise.promise();
        awaitReady(partition, dir, ownerId, deadlineNs, ready);
        return ready.future()
            .compose(v -> partition.releaseClaimsOf(ownerId))
            .compose(released -> partition.committedOffset(tp.topic(), tp.partition()).map(offset -> {
              if (released > 0) {
                // DEBUG: the consumer's window-ready line (INFO) says it too.
                LOG.debug("window {} of {}: released {} claims that {} left open when its previous run stopped",
                    dir, tp, released, ownerId);
              }
              LOG.debug("window {} of {} acquired by {}, journal offset {}", dir, tp, ownerId, offset);
              return new Lease(partition, offset, released, new Handle(partition, tp, address, token, dir));
            }))
            .recover(e -> partition.undeploy().transform(u -> Future.<Lease>failedFuture(e)));
      }).onFailure(e -> slots().removeIfPresent(address, token));
    }).onFailure(e -> unuse(dir));
  }

  private LocalMap<String, String> slots() {
    return vertx.sharedData().getLocalMap(SLOTS);
  }

  /**
   * Within one Vert.x instance, one verticle at a time per window address (two consumers on one address would share
   * its requests): waits, retrying, for an earlier owner in this instance to release it. Across instances and
   * processes the journal's lock is the fence.
   */
  private void takeSlot(String address, String token, Path dir, long deadlineNs, Promise<Void> slot) {
    String holder = slots().putIfAbsent(address, token);
    if (holder == null) {
      slot.complete();
      return;
    }
    if (System.nanoTime() - deadlineNs > 0) {
      slot.fail(new IllegalStateException("window " + dir + " was not handed over within assignmentTimeoutMs="
          + acquireTimeoutMs + " ms: still held in this Vert.x instance by " + holder));
      return;
    }
    vertx.setTimer(POLL_MS, id -> takeSlot(address, token, dir, deadlineNs, slot));
  }

  /** Completes {@code ready} once the partition answers, or fails it when the deadline passes first. */
  private void awaitReady(LocalPartition partition, Path dir, String ownerId, long deadlineNs,
      Promise<Void> ready) {
    PartitionState s = partition.state();
    if (s == PartitionState.READY) {
      ready.complete();
      return;
    }
    if (s == PartitionState.FAILED || s == PartitionState.STOPPING) {
      ready.fail(new IllegalStateException("window " + dir + " cannot start: " + partition.failure()));
      return;
    }
    if (System.nanoTime() - deadlineNs > 0) {
      ready.fail(new IllegalStateException("window " + dir + " was not handed over to " + ownerId + " within "
          + "assignmentTimeoutMs=" + acquireTimeoutMs + " ms: " + partition.failure()));
      return;
    }
    vertx.setTimer(POLL_MS, id -> awaitReady(partition, dir, ownerId, deadlineNs, ready));
  }

  @Override
  public void offsetsCommitted(Lease lease, long nextOffset) {
    Handle h = (Handle) lease.handle();
    h.partition.commitOffset(h.tp.topic(), h.tp.partition(), nextOffset).onFailure(e ->
        // Kafka has the offset; the journal's copy only matters where Kafka has none, and the next commit repeats it.
        LOG.warn("{}: offset {} was committed to Kafka but not journaled: {}", h.tp, nextOffset, e.toString()));
  }

  @Override
  public Future<Void> release(Lease lease) {
    Handle h = (Handle) lease.handle();
    return h.partition.undeploy().eventually(() -> {
      slots().removeIfPresent(h.address, h.token);
      unuse(h.dir);
      return Future.succeededFuture();
    });
  }

  private record Handle(LocalPartition partition, TopicPartition tp, String address, String token, Path dir) {}
}
