package io.github.vertxdedup.kafka.impl;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The offset commits to Kafka of the assigned partitions: each commits the offset after the last record of its
 * owner's committable prefix ({@link PartitionOwner#committableNext}), never past a record that is not done with,
 * through the {@link GroupCommitter}. The poll loop commits with {@code commitAsync} at most once per
 * {@code commitIntervalMs} ({@link #commitAsyncIfDue}); a failed async commit is sent again with the next one. Revocation and close commit with {@code commitSync}
 * ({@link #commitSync}). Every offset Kafka accepted is handed to the window store
 * ({@link PartitionWindows#offsetsCommitted}), which journals it beside the accepted ids.
 *
 * <p>Poll thread only: the async commits' callbacks run on it too, inside a later {@code poll} or commit.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class OffsetCommits<K, V> {

  private static final Logger LOG = LoggerFactory.getLogger(DedupKafkaConsumerImpl.class);

  private final GroupCommitter committer;
  /** The assigned partitions, shared with the rest of the poll loop. */
  private final Map<TopicPartition, AssignedPartition<K, V>> owners;
  private final PartitionWindows windows;
  private final long commitIntervalNs;
  private long lastCommitNs;

  /**
   * @param committer commits for the consumer's group
   * @param owners the assigned partitions, kept by the poll loop
   * @param windows the window store, told of every offset committed
   * @param commitIntervalMs the least time between two async commits, in milliseconds
   */
  OffsetCommits(GroupCommitter committer, Map<TopicPartition, AssignedPartition<K, V>> owners,
      PartitionWindows windows, long commitIntervalMs) {
    this.committer = committer;
    this.owners = owners;
    this.windows = windows;
    this.commitIntervalNs = TimeUnit.MILLISECONDS.toNanos(commitIntervalMs);
  }

  /** Commits without waiting ({@link #commitAsync}) if {@code commitIntervalMs} has passed since the last time. */
  void commitAsyncIfDue() {
    committer.runCallbacks();
    long now = System.nanoTime();
    if (now - lastCommitNs >= commitIntervalNs) {
      lastCommitNs = now;
      commitAsync();
    }
  }

  /**
   * Commits, without waiting, the offsets that became committable since the last commit (or the last one sent) of
   * every assigned partition. The callback runs on this thread, inside a later {@code poll} or commit; Kafka completes
   * the async commits of one consumer in the order they were sent.
   */
  private void commitAsync() {
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    for (Map.Entry<TopicPartition, AssignedPartition<K, V>> e : owners.entrySet()) {
      AssignedPartition<K, V> o = e.getValue();
      long next = o.owner.committableNext();
      if (next > o.committed && next > o.sent) {
        offsets.put(e.getKey(), new OffsetAndMetadata(next));
        o.sent = next;
      }
    }
    if (offsets.isEmpty()) {
      return;
    }
    Map<TopicPartition, AssignedPartition<K, V>> sentTo = new HashMap<>();
    for (TopicPartition tp : offsets.keySet()) {
      sentTo.put(tp, owners.get(tp));
    }
    committer.commitAsync(offsets, (done, failure) -> {
      for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
        AssignedPartition<K, V> o = sentTo.get(e.getKey());
        if (owners.get(e.getKey()) != o) {
          continue; // revoked meanwhile: its owner is gone
        }
        long offset = e.getValue().offset();
        if (failure == null) {
          if (offset > o.committed) {
            o.committed = offset;
            windows.offsetsCommitted(o.lease, offset);
          }
        } else if (o.sent == offset) {
          o.sent = o.committed; // send it again with the next commit
        }
      }
      if (failure != null) {
        LOG.debug("{}: async offset commit failed, sent again with the next one: {}", offsets.keySet(),
            failure.toString());
      }
    });
  }

  /** Commits, synchronously, the offsets that became committable since the last commit of the given partitions. */
  void commitSync(Collection<TopicPartition> tps) {
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    for (TopicPartition tp : tps) {
      AssignedPartition<K, V> o = owners.get(tp);
      long next = o.owner.committableNext();
      if (next > o.committed) {
        offsets.put(tp, new OffsetAndMetadata(next));
      }
    }
    if (offsets.isEmpty()) {
      return;
    }
    try {
      committer.commitSync(offsets);
    } catch (WakeupException e) {
      // Closing: the final revocation commits again.
      return;
    } catch (RuntimeException e) {
      // A rebalance in progress or a lost generation: the records committable since are duplicates for the next
      // owner.
      LOG.warn("{}: offset commit failed; the next owner reads the records since the last commit again: {}",
          offsets.keySet(), e.toString());
      return;
    }
    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
      AssignedPartition<K, V> o = owners.get(e.getKey());
      o.committed = e.getValue().offset();
      windows.offsetsCommitted(o.lease, o.committed);
    }
  }
}
