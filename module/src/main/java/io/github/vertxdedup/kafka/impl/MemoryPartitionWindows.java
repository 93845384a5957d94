package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.time.DedupClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.shareddata.Shareable;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The memory-only window store: the window of a (group, topic-partition) is a partition verticle that stays
 * deployed in this Vert.x instance after its owner lets it go, so a consumer restarted in the same JVM, or another
 * consumer of the group in the same JVM that takes the partition over, finds the ids of the previous owner. It
 * plays the role of the journal's directory and lock within one JVM; nothing survives the JVM, and windows are not
 * shared across machines.
 *
 * <p>A window lives until the Vert.x instance closes; the first consumer of the group that takes the partition
 * sets its options. Thread-safe: the slots live in a Vert.x local map shared by every consumer of the instance.
 */
final class MemoryPartitionWindows implements PartitionWindows {

  private static final Logger LOG = LoggerFactory.getLogger(MemoryPartitionWindows.class);
  private static final String MAP = "io.github.vertxdedup.kafka.windows";
  /** How often a taker looks again at a window that another owner still holds, in milliseconds. */
  private static final long RETRY_MS = 20;

  private final Vertx vertx;
  private final DedupOptions dedup;
  private final DedupClock clock;
  private final MeterRegistry registry;
  private final long acquireTimeoutMs;

  MemoryPartitionWindows(Vertx vertx, DedupOptions dedup, DedupClock clock, MeterRegistry registry,
      long acquireTimeoutMs) {
    this.vertx = vertx;
    this.dedup = dedup;
    this.clock = clock;
    this.registry = registry;
    this.acquireTimeoutMs = acquireTimeoutMs;
  }

  @Override
  public Future<Lease> acquire(String groupId, TopicPartition tp, String ownerId) {
    LocalMap<String, Slot> slots = vertx.sharedData().getLocalMap(MAP);
    String name = groupId + "/" + tp.topic() + "-" + tp.partition();
    // The same address as a journaled window's: stable across restarts, as are the meters' tags (group, topic,
    // partition), which name the window in the registry.
    Slot slot = slots.computeIfAbsent(name, n -> new Slot(dedup.getAddress() + "." + groupId + "." + tp.topic()
        + "-" + tp.partition(), registry == null ? null
        : LocalPartition.Meters.kafkaWindow(registry, dedup.getAddress(), groupId, tp.topic(), tp.partition())));
    Promise<Long> committed = Promise.promise();
    take(slot, ownerId, System.nanoTime() + acquireTimeoutMs * 1_000_000L, committed);
    return committed.future().compose(offset -> slot.deployed(this)
        .compose(partition -> partition.releaseClaimsOf(ownerId)
            .map(released -> new Lease(partition, offset, released, new Handle(slot, ownerId)))));
  }

  /** Takes the slot for {@code ownerId}, retrying until the deadline; completes with its last committed offset. */
  private void take(Slot slot, String ownerId, long deadlineNs, Promise<Long> committed) {
    synchronized (slot) {
      if (slot.owner == null || slot.owner.equals(ownerId)) {
        if (slot.owner != null) {
          // DEBUG: the consumer logs the assignment and the window's readiness at INFO.
          LOG.debug("window {} taken over by its restarted owner {}", slot.address, ownerId);
        }
        slot.owner = ownerId;
        committed.complete(slot.committed);
        return;
      }
      if (System.nanoTime() - deadlineNs > 0) {
        committed.fail(new IllegalStateException("window " + slot.address + " is still held by " + slot.owner
            + " after " + acquireTimeoutMs + " ms"));
        return;
      }
    }
    vertx.setTimer(RETRY_MS, id -> take(slot, ownerId, deadlineNs, committed));
  }

  @Override
  public void offsetsCommitted(Lease lease, long nextOffset) {
    Handle h = (Handle) lease.handle();
    synchronized (h.slot) {
      if (ownerId(h).equals(h.slot.owner) && nextOffset > h.slot.committed) {
        h.slot.committed = nextOffset;
      }
    }
  }

  @Override
  public Future<Void> release(Lease lease) {
    Handle h = (Handle) lease.handle();
    synchronized (h.slot) {
      if (ownerId(h).equals(h.slot.owner)) {
        h.slot.owner = null;
      }
    }
    return Future.succeededFuture();
  }

  private static String ownerId(Handle h) {
    return h.ownerId;
  }

  private record Handle(Slot slot, String ownerId) {}

  /** One window: its address, its meters, its owner now, and the last committed offset any owner reported. */
  private static final class Slot implements Shareable {
    final String address;
    final LocalPartition.Meters meters;
    String owner;
    long committed = -1;
    private Future<LocalPartition> deployment;

    Slot(String address, LocalPartition.Meters meters) {
      this.address = address;
      this.meters = meters;
    }

    synchronized Future<LocalPartition> deployed(MemoryPartitionWindows store) {
      if (deployment == null || deployment.failed()) {
        DedupOptions o = new DedupOptions(store.dedup).setAddress(address).setPartitions(1)
            .setRouteByKey(false);
        deployment = LocalPartition.deployInMemory(store.vertx, o, store.clock, meters);
      }
      return deployment;
    }

    @Override
    public Shareable copy() {
      return this;
    }
  }
}
