package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.kafka.client.consumer.impl.KafkaConsumerRecordImpl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer's poll thread: the native {@link KafkaConsumer}, and the loop that feeds the partition owners. Every
 * call on the Kafka consumer (poll, commit, seek, pause, resume, close) happens on this thread, which is what the
 * client requires (it is not thread-safe); the rebalance callbacks ({@link PartitionAssignment}) run inside
 * {@code poll}, on it too.
 *
 * <h2>Loop</h2>
 * Apply pauses and resumes ({@link Pauses}); {@code poll}; hand each partition's records to its owner's event loop,
 * each wrapped once as the {@link KafkaConsumerRecord} the application sees ({@link #wrap});
 * commit the offsets that became committable since the last commit, at most once per {@code commitIntervalMs}, and at
 * once when a record-first owner waits for a commit before its handlers run ({@link OffsetCommits}); repeat. While a
 * record-first owner holds records, the loop polls for at most {@value #PAUSED_POLL_MS} ms, so that a commit it asks
 * for is sent, and its acknowledgement (handed over inside a poll) comes back, within that. Before each poll it ends
 * the rebuilds of newly assigned partitions that finished ({@link Rebuilds}), so their partitions are resumed. It ends when the consumer is closed ({@link #stop}) or a window failed to open,
 * revoking every partition (with a final commit, unless it ends on an error) and closing the Kafka consumer.
 *
 * <p>A paused partition must not wait out a poll timeout once its owner has caught up: with every partition paused, a
 * blocking {@code poll} sleeps its full timeout while the owners sit idle, and under load that would be most of the
 * loop's time (docs/results/README.md, "Kafka consumer"). So an owner signals {@code wake} when it drops back to the
 * resume mark or stops waiting for a lease; while every partition is paused the loop waits on that signal (bounded by
 * {@code pollTimeoutMs}) and then polls without blocking, and while only some are paused it polls for at most
 * {@value #PAUSED_POLL_MS} ms.
 *
 * <p>{@link #subscribe} and {@link #run} on the poll thread; {@link #stop} and {@link #assignment} from any thread.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class PollLoop<K, V> {

  private static final Logger LOG = LoggerFactory.getLogger(DedupKafkaConsumerImpl.class);
  /** Longest {@code poll} while some partitions are paused and others not, in milliseconds. */
  static final long PAUSED_POLL_MS = 5;

  private final Map<String, Object> kafkaConfig;
  private final long pollTimeoutMs;
  private final long commitIntervalMs;
  private final int maxBufferedPerPartition;
  private final long assignmentTimeoutMs;
  private final long revocationTimeoutMs;
  private final long lookBackMs;
  private final PartitionWindows windows;
  private final OwnerConfig<K, V> ownerConfig;
  private final ConsumerHealth health;
  private final String groupId;
  private final String instanceId;
  /** Released by an owner that may be resumed; the loop waits on it while every partition is paused. */
  private final Semaphore wake;
  private final Consumer<Throwable> report;
  private final long rebuildRetryMs;
  /** Where the Kafka client's own metrics are bound: the registry of the consumer's meters. */
  private final MeterRegistry registry;
  /** The assigned partitions; poll thread only. */
  private final Map<TopicPartition, AssignedPartition<K, V>> owners = new HashMap<>();

  private volatile boolean running = true;
  private KafkaConsumer<K, V> consumer;
  /** The Kafka client's metrics in {@link #registry}, from {@link #subscribe} until the client is closed. */
  private KafkaClientMetrics clientMetrics;
  private volatile PartitionAssignment<K, V> assignment;
  private OffsetCommits<K, V> commits;
  private Pauses<K, V> pauses;
  private Rebuilds<K, V> rebuilds;
  /** The transactional committer with the changelog on, else null. */
  private ChangelogCommitter changelog;

  /**
   * @param kafkaConfig the Kafka consumer config, {@code enable.auto.commit} off
   * @param options validated consumer options
   * @param windows where the partitions' windows live
   * @param ownerConfig what every partition owner shares; its {@code wakePoll} releases {@code wake}
   * @param health makes the partitions' meters and tracks their health
   * @param registry the registry of the consumer's meters, where the Kafka client's metrics are bound too
   * @param groupId the consumer group
   * @param instanceId this consumer's instance id
   * @param wake released by an owner that may be resumed
   * @param report receives the failures that do not stop the loop (a partition whose window could not be rebuilt
   *     from its topic); poll thread
   */
  PollLoop(Map<String, Object> kafkaConfig, DedupKafkaOptions options, PartitionWindows windows,
      OwnerConfig<K, V> ownerConfig, ConsumerHealth health, MeterRegistry registry, String groupId,
      String instanceId, Semaphore wake, Consumer<Throwable> report) {
    this.kafkaConfig = kafkaConfig;
    this.pollTimeoutMs = options.getPollTimeoutMs();
    this.commitIntervalMs = options.getCommitIntervalMs();
    this.maxBufferedPerPartition = options.getMaxBufferedPerPartition();
    this.assignmentTimeoutMs = options.getAssignmentTimeoutMs();
    this.revocationTimeoutMs = options.getRevocationTimeoutMs();
    this.lookBackMs = options.getLookBackMs();
    this.windows = windows;
    this.ownerConfig = ownerConfig;
    this.health = health;
    this.registry = registry;
    this.groupId = groupId;
    this.instanceId = instanceId;
    this.wake = wake;
    this.report = report;
    this.rebuildRetryMs = options.getBackoffMaxMs();
  }

  /**
   * Creates the Kafka consumer, subscribes it and binds its metrics (Micrometer's {@link KafkaClientMetrics}: lag,
   * fetch rate, ..., tagged {@code client.id}) to the consumer's registry, as an application binds those of a client
   * it holds; {@link #run} removes them when it closes the client. Poll thread.
   *
   * @param topics the topics
   * @throws RuntimeException if the Kafka consumer cannot be created or subscribed, after closing what it had opened
   *     ({@link #closeOpened}); the loop must not run then
   */
  void subscribe(Set<String> topics) {
    try {
      if (ownerConfig.changelog) {
        // Before the consumer exists: a changelog topic that cannot be used ends the subscribe with nothing to close.
        ChangelogTopics.ensure(kafkaConfig, groupId, topics, ownerConfig.windowMs);
      }
      consumer = new KafkaConsumer<>(kafkaConfig);
      GroupCommitter committer = GroupCommitter.of(consumer);
      if (ownerConfig.changelog) {
        // Each commit is a transaction with the accepted ids' changelog entries (docs/kafka.md, "Changelog topic").
        changelog = new ChangelogCommitter(new ChangelogWriter(kafkaConfig,
            ChangelogWriter.transactionalId(groupId, instanceId)), consumer, groupId, tp -> {
              AssignedPartition<K, V> o = owners.get(tp);
              return o == null || o.owner.changelog() == null ? null
                  : new ChangelogCommitter.Partition(o.owner.changelog(), o.committed);
            }, ownerConfig.wakePoll);
        committer = changelog;
      }
      commits = new OffsetCommits<>(committer, owners, windows, commitIntervalMs);
      pauses = new Pauses<>(consumer::pause, consumer::resume, owners, maxBufferedPerPartition);
      rebuilds = new Rebuilds<>(kafkaConfig, ownerConfig, lookBackMs, pauses, rebuildRetryMs, report);
      assignment = new PartitionAssignment<>(consumer, owners, windows, ownerConfig, commits, pauses, rebuilds,
          health, groupId, instanceId, assignmentTimeoutMs, revocationTimeoutMs);
      consumer.subscribe(topics, assignment);
      // The client's metrics() is safe from any thread (it does not take the client's lock): the binder reads it on a
      // scheduler of its own, every minute for the meters of new topics and partitions.
      clientMetrics = new KafkaClientMetrics(consumer);
      clientMetrics.bindTo(registry);
    } catch (RuntimeException e) {
      running = false;
      closeOpened(e);
      throw e;
    }
  }

  /**
   * Closes what a {@link #subscribe} that failed had opened: the client's metrics binding, the changelog producer
   * and the Kafka consumer (its network client, its JMX beans and, with {@code group.protocol=consumer}, its
   * background thread), so a refused subscribe leaves nothing of the client behind. A failure to close is added to
   * {@code cause} as suppressed: the subscribe fails with its own cause. Poll thread.
   *
   * @param cause why the subscribe failed
   */
  private void closeOpened(RuntimeException cause) {
    if (clientMetrics != null) {
      try {
        clientMetrics.close();
      } catch (RuntimeException e) {
        cause.addSuppressed(e);
      }
    }
    if (changelog != null) {
      try {
        changelog.close();
      } catch (RuntimeException e) {
        cause.addSuppressed(e);
      }
    }
    if (consumer != null) {
      try {
        // Nothing was assigned or fetched: no offset to commit. The timeout bounds the wait for its threads.
        consumer.close(Duration.ofSeconds(5));
      } catch (RuntimeException e) {
        cause.addSuppressed(e);
      }
    }
  }

  /**
   * Runs the loop until {@link #stop} or a window that fails to open, then revokes every partition and closes the
   * Kafka consumer. Poll thread, after {@link #subscribe}.
   *
   * @return the error that ended the loop, or null if it was stopped
   */
  Throwable run() {
    Throwable failure = null;
    try {
      while (running && assignment.windowFailure() == null) {
        try {
          pollOnce();
        } catch (WakeupException e) {
          // stop() wakes the poll; the loop condition decides.
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          running = false;
        }
      }
      assignment.revokeAll(true);
      failure = assignment.windowFailure();
    } catch (RuntimeException e) {
      failure = assignment.windowFailure() != null ? assignment.windowFailure() : e;
      assignment.revokeAll(false);
    } finally {
      if (changelog != null) {
        changelog.close();
      }
      try {
        consumer.close(Duration.ofSeconds(5));
      } catch (RuntimeException e) {
        LOG.warn("closing the Kafka consumer failed", e);
      }
      clientMetrics.close(); // stops its scheduler and removes its meters from the registry
    }
    return failure;
  }

  private void pollOnce() throws InterruptedException {
    assignment.collectRebuilds();
    if (assignment.windowFailure() != null) {
      return;
    }
    pauses.apply();
    commits.commitWanted();
    long timeoutMs = pollTimeoutMs;
    if (!ownerConfig.effectFirst && recordFirstBusy()) {
      // A record-first owner waits for a commit before its handlers run, or may soon: a commit it asks for is sent
      // between two polls, and the acknowledgement is handed over inside a poll, so poll briefly.
      timeoutMs = Math.min(timeoutMs, PAUSED_POLL_MS);
    }
    if (!pauses.none()) {
      if (pauses.all()) {
        // Nothing to fetch: wait for an owner to catch up (or to ask for a commit), then poll only to serve the group.
        wake.tryAcquire(timeoutMs, TimeUnit.MILLISECONDS);
        wake.drainPermits();
        assignment.collectRebuilds();
        pauses.apply();
        commits.commitWanted();
        timeoutMs = 0;
      } else {
        timeoutMs = Math.min(timeoutMs, PAUSED_POLL_MS);
      }
    }
    ConsumerRecords<K, V> records = consumer.poll(Duration.ofMillis(timeoutMs));
    for (TopicPartition tp : records.partitions()) {
      AssignedPartition<K, V> o = owners.get(tp);
      if (o != null && rebuilds.rebuilding(tp)) {
        // Paused inside onPartitionsAssigned, so none should come; if one did, read it again once the window is whole.
        consumer.seek(tp, records.records(tp).get(0).offset());
      } else if (o != null) {
        o.owner.offer(wrap(records.records(tp)));
      }
    }
    commits.commitWanted();
    commits.commitAsyncIfDue();
  }

  /**
   * @return true if a record-first owner waits for a commit's acknowledgement or holds records it has not finished
   *     (it may ask for a commit at any moment)
   */
  private boolean recordFirstBusy() {
    if (commits.awaitingAck()) {
      return true;
    }
    for (AssignedPartition<K, V> o : owners.values()) {
      if (o.owner.buffered() > 0) {
        return true;
      }
    }
    return false;
  }

  /**
   * Wraps each Kafka record of one partition, once, as the {@link KafkaConsumerRecord} its owner hands to the identity
   * extractor, the handler and the dead-letter handler. The wrapper is vertx-kafka-client's own
   * {@link KafkaConsumerRecordImpl}, the class its {@code KafkaConsumer} hands out (the client has no public factory
   * for it): a field store per record, headers converted to {@code KafkaHeader}s only when first asked for. Stateless:
   * the poll thread calls it, and so does a wrapped Vert.x consumer ({@link WrappedAssignment}).
   *
   * @param records the records of one partition from one poll, in offset order
   * @return the wrapped records, in the same order
   */
  static <K, V> List<KafkaConsumerRecord<K, V>> wrap(List<ConsumerRecord<K, V>> records) {
    List<KafkaConsumerRecord<K, V>> wrapped = new ArrayList<>(records.size());
    for (ConsumerRecord<K, V> r : records) {
      wrapped.add(new KafkaConsumerRecordImpl<>(r));
    }
    return wrapped;
  }

  /** Ends the loop: wakes a blocked {@code poll} and a wait for an owner. Any thread. */
  void stop() {
    running = false;
    if (consumer != null) {
      consumer.wakeup();
    }
    wake.release();
  }

  /** @return the partitions this consumer owns now; any thread */
  Set<TopicPartition> assignment() {
    PartitionAssignment<K, V> a = assignment;
    return a == null ? Set.of() : a.assignment();
  }
}
