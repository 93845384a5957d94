package io.github.vertxdedup.kafka.impl;

import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetCommitCallback;
import org.apache.kafka.common.TopicPartition;

/**
 * How the poll thread commits offsets for the consumer group: the one seam between {@link OffsetCommits} and the
 * Kafka client. The plain committer ({@link #of}) commits through the consumer; a transactional one would send the
 * offsets with {@code sendOffsetsToTransaction(offsets, consumer.groupMetadata())} inside a transaction that holds
 * other records too. Either way the group coordinator checks the member's generation, so a member that is no longer
 * in the group (its partitions moved on) has its commit refused: that refusal is the fence of a stale owner.
 *
 * <p>Poll thread only, like the consumer it commits for; the callbacks run on the poll thread too.
 */
interface GroupCommitter {

  /**
   * Commits without waiting. The callback runs on the poll thread, inside a later {@code poll} or commit call (or
   * within this call, if it fails at once), with {@code null} as its exception on success. The commits of one
   * committer complete in the order they were sent.
   *
   * @param offsets the offset to commit per partition (the next record to read)
   * @param callback told of the outcome, once, on the poll thread; its exception is a
   *     {@link org.apache.kafka.clients.consumer.RetriableCommitFailedException} for a failure a later commit may
   *     not meet, else the refusal (e.g. {@link org.apache.kafka.clients.consumer.CommitFailedException} once this
   *     member left the generation, {@link org.apache.kafka.common.errors.FencedInstanceIdException},
   *     {@link org.apache.kafka.common.errors.RebalanceInProgressException})
   */
  void commitAsync(Map<TopicPartition, OffsetAndMetadata> offsets, OffsetCommitCallback callback);

  /**
   * Commits and waits for the answer (bounded by the consumer's {@code default.api.timeout.ms}).
   *
   * @param offsets the offset to commit per partition (the next record to read)
   * @throws org.apache.kafka.clients.consumer.CommitFailedException if this member left the generation
   * @throws org.apache.kafka.common.errors.WakeupException if the consumer was woken up meanwhile
   * @throws RuntimeException any other refusal or timeout of the Kafka client
   */
  void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets);

  /**
   * Runs the callbacks of the async commits answered since the last call, for a committer whose commits are
   * answered outside the consumer's own calls (a transactional one: {@link ChangelogCommitter}). The plain committer
   * has none: the consumer runs its callbacks inside {@code poll} and its commit calls. Poll thread, before each
   * commit it considers.
   *
   * @throws IllegalStateException if the committer can commit no more (a transactional producer fenced or not
   *     authorized): the poll loop ends on it and the consumer stops
   */
  default void runCallbacks() {}

  /**
   * @param consumer the consumer whose group the offsets are committed for; used on the poll thread only
   * @return a committer that commits with the consumer's own {@code commitAsync} and {@code commitSync}
   */
  static GroupCommitter of(Consumer<?, ?> consumer) {
    Objects.requireNonNull(consumer, "consumer");
    return new GroupCommitter() {
      @Override
      public void commitAsync(Map<TopicPartition, OffsetAndMetadata> offsets, OffsetCommitCallback callback) {
        consumer.commitAsync(offsets, callback);
      }

      @Override
      public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
        consumer.commitSync(offsets);
      }
    };
  }
}
