package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.time.DedupClock;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Semaphore;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link DedupKafkaConsumer} of {@link DedupKafkaConsumer#create}: a native Kafka consumer driven by a thread of
 * its own. This class is its life: the start of the poll thread, and the end, on {@link #close} or on an error that
 * stops the consumer; the setup before {@code subscribe} is {@link ConsumerSetup}'s. The thread runs a
 * {@link PollLoop}; the rebalance callbacks are its {@link PartitionAssignment}; its offset commits are
 * {@link OffsetCommits}.
 *
 * <h2>Why a thread of its own</h2>
 * In vertx-kafka-client 5.0.7 the partition assign and revoke handlers are scheduled on a context and return at
 * once, so they cannot hold a rebalance back. Here {@link KafkaConsumer#poll} runs on a dedicated thread and the
 * {@link ConsumerRebalanceListener} runs inside it, synchronously: {@code onPartitionsAssigned} blocks that thread
 * (never an event loop) until each new partition's window is ready and its owner created, then seeks;
 * {@code onPartitionsRevoked} fences the owners, waits (bounded) for the records they already decided, commits the
 * committable offsets and hands the windows back, all before the group moves the partitions. Every call on the
 * {@link KafkaConsumer} happens on this thread, which is what the client requires (it is not thread-safe).
 *
 * <h2>Rebalances</h2>
 * Unless the Kafka config sets {@code partition.assignment.strategy}, the consumer uses Kafka's
 * {@link CooperativeStickyAssignor}: a rebalance revokes only the partitions that move, and
 * {@code onPartitionsAssigned} receives only the partitions new to this member, so a member that joins or leaves
 * does not take every partition of the group through a revocation, a drain and a window hand-over (or a rebuild).
 * {@link PartitionAssignment} acts on exactly the partitions each callback names, which holds for eager rebalances
 * (everything revoked, then everything assigned) as for cooperative ones.
 *
 * <h2>An error that stops the consumer</h2>
 * A window that does not open ({@link PartitionAssignment}), or any other error that ends the poll thread, stops the
 * consumer: the loop commits what is committable, leaves the group, and the first failure goes to the exception
 * handler on the subscriber's context; {@link #close} then fails with it.
 *
 * <p>The setters and {@link #close} are thread-safe (synchronized); {@link #assignment} reads a volatile snapshot.
 */
public final class DedupKafkaConsumerImpl<K, V> extends ConsumerSetup<K, V> {

  private static final Logger LOG = LoggerFactory.getLogger(DedupKafkaConsumerImpl.class);
  /** The {@code partition.assignment.strategy} used when the Kafka config sets none. */
  static final String DEFAULT_ASSIGNOR = CooperativeStickyAssignor.class.getName();

  /** The poll thread's loop, once subscribed. */
  private volatile PollLoop<K, V> poll;
  private Thread pollThread;

  /**
   * @param vertx the Vert.x instance
   * @param kafkaConfig the Kafka consumer config
   * @param options the options (copied and validated)
   * @param clock the clock of the windows
   * @throws IllegalArgumentException if the options or the config are invalid
   */
  public DedupKafkaConsumerImpl(Vertx vertx, Map<String, String> kafkaConfig, DedupKafkaOptions options,
      DedupClock clock) {
    super(vertx, kafkaConfig, options, clock);
    Object autoCommit = config.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
    if (autoCommit != null && !"false".equalsIgnoreCase(autoCommit.toString())) {
      throw new IllegalArgumentException("kafkaConfig enable.auto.commit must be false or absent but was "
          + autoCommit + ": offsets are committed after each record is done with");
    }
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    // Cooperative rebalances: a member that joins or leaves moves only the partitions it must, and the others keep
    // their owners, windows and rebuilds (docs/partitioning.md, "Rebalances"). A setting of the user's wins.
    config.putIfAbsent(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, DEFAULT_ASSIGNOR);
  }

  @Override
  public Set<TopicPartition> assignment() {
    PollLoop<K, V> p = poll;
    return p == null ? Set.of() : p.assignment();
  }

  @Override
  public synchronized Future<Void> subscribe(Set<String> topics) {
    RuntimeException refused = start(topics);
    if (refused != null) {
      return Future.failedFuture(refused);
    }
    PartitionWindows windows = windows();
    Semaphore wake = new Semaphore(0);
    Context caller = vertx.getOrCreateContext();
    poll = new PollLoop<>(config, options, windows, ownerConfig(wake::release), partitionHealth(), registry(), groupId,
        instanceId, wake, failure -> report(caller, failure));
    Promise<Void> subscribed = Promise.promise();
    Set<String> copy = Set.copyOf(topics);
    PollLoop<K, V> loop = poll;
    pollThread = new Thread(() -> run(loop, copy, caller, subscribed),
        "dedup-kafka-poll-" + groupId + "-" + instanceId);
    pollThread.setDaemon(true);
    pollThread.start();
    return subscribed.future();
  }

  @Override
  public synchronized Future<Void> close() {
    Promise<Void> p = beginClose();
    if (p != null) {
      if (pollThread == null) {
        p.complete();
      } else {
        poll.stop();
      }
    }
    return closeFuture();
  }

  // --- the poll thread ---------------------------------------------------------------------------------------------

  private void run(PollLoop<K, V> loop, Set<String> topics, Context caller, Promise<Void> subscribed) {
    RuntimeException badInbox = awaitInboxCheck();
    if (badInbox != null) {
      // Bad configuration fails the start, before the consumer joins the group.
      caller.runOnContext(v -> subscribed.fail(badInbox));
      finish(badInbox);
      return;
    }
    try {
      loop.subscribe(topics);
    } catch (RuntimeException e) {
      caller.runOnContext(v -> subscribed.fail(e));
      finish(e);
      return;
    }
    caller.runOnContext(v -> subscribed.complete());
    Throwable failure = null;
    try {
      failure = loop.run();
    } finally {
      if (failure != null) {
        LOG.error("dedup consumer {} of group {} stopped on an error and left the group", instanceId, groupId,
            failure);
        report(caller, failure);
      }
      finish(failure);
    }
  }

}
