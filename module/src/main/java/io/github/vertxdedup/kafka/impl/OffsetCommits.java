package io.github.vertxdedup.kafka.impl;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.IllegalGenerationException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The offset commits to Kafka of the assigned partitions: each commits the offset after the last record of its
 * owner's committable prefix ({@link PartitionOwner#committableNext}), never past a record that is not done with (in
 * record-first mode, not decided), through the {@link GroupCommitter}. The poll loop commits with {@code commitAsync}
 * at most once per {@code commitIntervalMs} ({@link #commitAsyncIfDue}), and at once when a record-first owner waits
 * for a commit before its handlers run ({@link #commitWanted}; the commits of every partition that moved go together
 * in one request); a failed async commit is sent again with the next one, no sooner than {@code commitIntervalMs}
 * later. Revocation and close commit with {@code commitSync} ({@link #commitSync}). Every offset Kafka accepted is
 * handed to the owner ({@link PartitionOwner#committed}: the record-first handlers it covers may run) and to the
 * window store ({@link PartitionWindows#offsetsCommitted}), which journals it beside the accepted ids.
 *
 * <p>The group coordinator refuses a commit from a member that is no longer in the group's generation
 * ({@link CommitFailedException}, {@link FencedInstanceIdException}): the records a record-first owner decided since
 * its last commit are then never handled by it, and the partition is reported lost at the next {@code poll}.
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
  /** A commit failed: wanted commits wait until then (System.nanoTime), so a failure is not retried in a spin. */
  private long retryNotBeforeNs;

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
   * Commits without waiting ({@link #commitAsync}) if a record-first owner waits for a commit that is not sent yet,
   * unless a commit failed less than {@code commitIntervalMs} ago. The offsets of every other partition that moved
   * go with it.
   */
  void commitWanted() {
    long now = System.nanoTime();
    if (now - retryNotBeforeNs < 0) {
      return;
    }
    for (AssignedPartition<K, V> o : owners.values()) {
      long wanted = o.owner.wantedNext();
      if (wanted > o.committed && wanted > o.sent) {
        lastCommitNs = now;
        commitAsync();
        return;
      }
    }
  }

  /**
   * @return true while a record-first owner waits for a commit Kafka has not acknowledged: the poll loop then polls
   *     briefly, since the acknowledgement is handed over inside a {@code poll}
   */
  boolean awaitingAck() {
    for (AssignedPartition<K, V> o : owners.values()) {
      if (o.owner.wantedNext() > o.committed) {
        return true;
      }
    }
    return false;
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
          accepted(o, offset);
        } else if (o.sent == offset) {
          o.sent = o.committed; // send it again with the next commit
        }
      }
      if (failure != null) {
        failed(offsets.keySet(), failure);
      }
    });
  }

  /**
   * Commits, synchronously, the offsets that became committable since the last commit of the given partitions. A
   * refused commit (other than a wake-up, after which the caller commits again) shuts the record-first gates of the
   * partitions: their decided records are left to the next owner ({@link PartitionOwner#refuseCommits}).
   *
   * @param tps the partitions, each assigned
   */
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
      // owner, and a record-first owner's decided records that no commit covers are the next owner's to handle.
      LOG.warn("{}: offset commit failed; the next owner reads the records since the last commit again: {}",
          offsets.keySet(), e.toString());
      for (TopicPartition tp : offsets.keySet()) {
        owners.get(tp).owner.refuseCommits();
      }
      return;
    }
    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
      accepted(owners.get(e.getKey()), e.getValue().offset());
    }
  }

  /**
   * Commits, synchronously, the partitions among {@code tps} whose record-first owner waits for a commit (a drain on
   * revocation: the poll thread waits for the owners, so it commits for them).
   *
   * @param tps the partitions, each assigned
   */
  void commitWantedSync(Collection<TopicPartition> tps) {
    for (TopicPartition tp : tps) {
      AssignedPartition<K, V> o = owners.get(tp);
      if (o.owner.wantedNext() > o.committed) {
        commitSync(tps);
        return;
      }
    }
  }

  /** Kafka accepted {@code offset} for the partition of {@code o}: the owner and the window store are told. */
  private void accepted(AssignedPartition<K, V> o, long offset) {
    if (offset > o.committed) {
      o.committed = offset;
      o.owner.committed(offset);
      windows.offsetsCommitted(o.lease, offset);
    }
  }

  /**
   * An async commit failed: it is sent again no sooner than {@code commitIntervalMs} later. A refusal because this
   * member left the group's generation is a WARN line (the partitions are reported lost at the next poll); other
   * failures (a rebalance in progress, a coordinator moving) are retried and logged at DEBUG.
   */
  private void failed(Collection<TopicPartition> tps, Exception failure) {
    retryNotBeforeNs = System.nanoTime() + commitIntervalNs;
    if (refusedMember(failure)) {
      LOG.warn("{}: offset commit refused, this consumer is no longer a member of the group's generation; the"
          + " records decided since the last commit are left to the partitions' next owner: {}", tps,
          failure.toString());
    } else {
      LOG.debug("{}: async offset commit failed, sent again with the next one: {}", tps, failure.toString());
    }
  }

  /** @return true if {@code failure} says this member is no longer in the group's generation */
  static boolean refusedMember(Throwable failure) {
    return failure instanceof CommitFailedException || failure instanceof FencedInstanceIdException
        || failure instanceof UnknownMemberIdException || failure instanceof IllegalGenerationException;
  }
}
