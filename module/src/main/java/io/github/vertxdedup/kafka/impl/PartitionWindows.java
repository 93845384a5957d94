package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.time.DedupClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.apache.kafka.common.TopicPartition;

/**
 * Where the window of a (group, topic-partition) lives between owners, and the fence between them. This is the
 * seam where the journal plugs in: a journaled store deploys the partition over
 * {@code <journalDir>/<group.id>/<topic>-<partition>} (whose directory lock is the fence between two owners),
 * rebuilds the window before {@link #acquire} completes, reports the highest offset the journal recorded as
 * {@link Lease#resumeOffset()}, and journals {@link #offsetsCommitted} beside the accepted ids.
 * {@link JournaledPartitionWindows} is that store, chosen when {@code dedup.journalDir} is set; {@link MemoryPartitionWindows}
 * keeps windows in the Vert.x instance otherwise ({@link #create}).
 *
 * <p>Thread-safe; called from the poll thread.
 */
interface PartitionWindows {

  /**
   * The store for these options: journaled ({@link JournaledPartitionWindows}) when {@code dedup.journalDir} is set,
   * memory-only ({@link MemoryPartitionWindows}) otherwise.
   *
   * @param vertx the Vert.x instance the windows are deployed on
   * @param dedup validated dedup options
   * @param clock the clock of the windows
   * @param registry where the windows register their meters, or null for none
   * @param acquireTimeoutMs how long {@link #acquire} waits for another owner to let a window go, in milliseconds
   * @return the store
   */
  static PartitionWindows create(Vertx vertx, DedupOptions dedup, DedupClock clock, MeterRegistry registry,
      long acquireTimeoutMs) {
    return dedup.getJournalDir() != null
        ? new JournaledPartitionWindows(vertx, dedup, clock, registry, acquireTimeoutMs)
        : new MemoryPartitionWindows(vertx, dedup, clock, registry, acquireTimeoutMs);
  }

  /**
   * Takes ownership of the window of a topic-partition for a consumer group, starting it if needed. Completes
   * only once the window answers (rebuilt, if durable) and the claims it holds by {@code ownerId} (left open by
   * this consumer's previous run, killed before it committed or released them) are released, so their records are
   * claimed again at once instead of waiting out their leases ({@link Lease#releasedClaims()}).
   *
   * @param groupId the consumer group
   * @param tp the topic-partition
   * @param ownerId the instance id of the consumer taking it
   * @return the lease; fails if another owner does not hand it over in time
   */
  Future<Lease> acquire(String groupId, TopicPartition tp, String ownerId);

  /**
   * Records that {@code nextOffset} was committed to Kafka for the lease's partition.
   *
   * @param lease a lease this store gave
   * @param nextOffset the committed offset (the next record to read)
   */
  void offsetsCommitted(Lease lease, long nextOffset);

  /**
   * Gives the window back: the next owner may take it.
   *
   * @param lease a lease this store gave
   * @return completes when released
   */
  Future<Void> release(Lease lease);

  /**
   * A window held by one owner.
   *
   * @param partition the partition that holds the window, deployed and ready: the owner runs on its context and
   *     calls it in-process
   * @param resumeOffset the highest offset recorded as committed for this partition, or -1 if none
   * @param releasedClaims the orphaned claims of the taking owner's instance id released on acquisition
   * @param handle the store's own state of the lease
   */
  record Lease(LocalPartition partition, long resumeOffset, int releasedClaims, Object handle) {}
}
