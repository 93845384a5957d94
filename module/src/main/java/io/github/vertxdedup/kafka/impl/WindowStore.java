package io.github.vertxdedup.kafka.impl;

import io.vertx.core.Future;
import org.apache.kafka.common.TopicPartition;

/**
 * Where the window of a (group, topic-partition) lives between owners, and the fence between them. This is the
 * seam where the journal plugs in: a journaled store deploys the partition verticle over
 * {@code <journalDir>/<group.id>/<topic>-<partition>} (whose directory lock is the fence between two owners),
 * rebuilds the window before {@link #acquire} completes, reports the highest offset the journal recorded as
 * {@link Lease#resumeOffset()}, and journals {@link #offsetsCommitted} beside the accepted ids.
 * {@link MemoryWindowStore} is the memory-only store of this version.
 *
 * <p>Thread-safe; called from the poll thread.
 */
interface WindowStore {

  /**
   * Takes ownership of the window of a topic-partition for a consumer group, starting it if needed. Completes
   * only once the window answers (rebuilt, if durable).
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
   * @param address the dedup address of the window (its partition verticle listens on {@code address + ".0"})
   * @param resumeOffset the highest offset recorded as committed for this partition, or -1 if none
   * @param handle the store's own state of the lease
   */
  record Lease(String address, long resumeOffset, Object handle) {}
}
