package io.github.vertxdedup.kafka.impl;

/**
 * A partition this consumer is assigned: its owner, its window's lease, and the offsets committed and sent for it.
 * Poll thread only.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class AssignedPartition<K, V> {

  final PartitionOwner<K, V> owner;
  final PartitionWindows.Lease lease;
  /** The offset last committed to Kafka (the next record to read), or -1. */
  long committed = -1;
  /** The offset of the latest async commit sent, or -1. */
  long sent = -1;

  AssignedPartition(PartitionOwner<K, V> owner, PartitionWindows.Lease lease) {
    this.owner = owner;
    this.lease = lease;
  }
}
