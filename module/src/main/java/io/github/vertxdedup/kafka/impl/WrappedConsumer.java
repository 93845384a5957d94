package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.time.DedupClock;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.common.errors.InvalidGroupIdException;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link DedupKafkaConsumer} of {@link DedupKafkaConsumer#wrap}: deduplication added to the application's Vert.x
 * {@link KafkaConsumer}. This class is its life: it installs the consumer's batch and rebalance handlers and
 * subscribes it, commits every {@code commitIntervalMs}, and closes it, on {@link #close} or on a failure that stops
 * it. The partitions and their fence are {@link WrappedAssignment}'s; the commits are {@link WrappedCommits}'.
 *
 * <h2>Why a batch handler</h2>
 * The consumer's record handler gets the records of a poll one at a time off an iterator, which a {@code seek} clears:
 * the rest of the poll, of every partition, would never be delivered, and later offsets would be committed past them.
 * Its batch handler gets each poll whole, so a seek (of a partition whose group offset is gone, see
 * {@link WrappedAssignment}) drops nothing, and each partition's records go to its owner as one list, as they do from
 * the poll thread of {@link DedupKafkaConsumerImpl}.
 *
 * <h2>Threads</h2>
 * The state lives on the context that called {@link #subscribe} ({@link WrappedContext}); the consumer's handlers,
 * which Vert.x calls on the context the consumer was created on, are moved there in order. Every call on the
 * consumer (pause, resume, seek, commit, close) goes through the Vert.x client, which runs it on its own thread after
 * the poll in progress; the consumer's {@code pollTimeout} is set to {@code pollTimeoutMs} so that such a call, a
 * resume included, waits at most that long.
 *
 * <p>The setters and {@link #close} are thread-safe (synchronized); {@link #assignment} reads a volatile snapshot.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
public final class WrappedConsumer<K, V> extends ConsumerSetup<K, V> {

  private static final Logger LOG = LoggerFactory.getLogger(WrappedConsumer.class);

  private final KafkaConsumer<K, V> consumer;
  /** Set at subscribe. */
  private WrappedContext context;
  private volatile WrappedAssignment<K, V> partitions;
  private WrappedCommits<K, V> commits;
  private long commitTimer = -1;
  /** An owner's wake is queued on the context; later ones are folded into it. */
  private final AtomicBoolean wakeQueued = new AtomicBoolean();
  /** Stopping (closing, or on a failure); the context only. */
  private boolean stopping;

  /**
   * @param vertx the Vert.x instance whose event loops run the windows and the handlers
   * @param consumer the application's Vert.x consumer, not subscribed yet
   * @param kafkaConfig the config the consumer was created with; its group is the consumer's
   * @param options the options (copied and validated)
   * @param clock the clock of the windows
   * @throws IllegalArgumentException if the options are invalid, the consumer has no {@code group.id}, the map names
   *     another group or instance id than the consumer's, {@code enable.auto.commit} is not {@code false}, or
   *     {@code changelog} is on
   * @throws IllegalStateException if the consumer is busy on its poll thread (subscribed already)
   */
  public WrappedConsumer(Vertx vertx, KafkaConsumer<K, V> consumer, Map<String, String> kafkaConfig,
      DedupKafkaOptions options, DedupClock clock) {
    super(vertx, groupOf(Objects.requireNonNull(consumer, "consumer"), kafkaConfig), options, clock);
    this.consumer = consumer;
    Object autoCommit = config.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
    if (autoCommit == null || !"false".equalsIgnoreCase(autoCommit.toString().trim())) {
      throw new IllegalArgumentException("kafkaConfig enable.auto.commit must be \"false\" for a wrapped consumer but "
          + (autoCommit == null ? "is absent, and Kafka's default is true" : "was " + autoCommit)
          + ": the consumer would commit the offsets of records not handled yet");
    }
    if (this.options.isChangelog()) {
      throw new IllegalArgumentException("changelog must be false for a wrapped consumer: its offsets are committed"
          + " by the Vert.x consumer, not in the changelog's transactions; use DedupKafkaConsumer.create");
    }
  }

  /**
   * The config with the consumer's own {@code group.id} and {@code group.instance.id}: the windows and journals are
   * named after the group the consumer is really in, whatever the map says. A key the map sets must agree with the
   * consumer; one it leaves out is taken from the consumer. The native consumer answers this before it subscribes,
   * from the config it was created with.
   *
   * @throws IllegalArgumentException if the consumer has no group, or the map names another group or instance id
   * @throws IllegalStateException if the consumer is in use on its poll thread (it was subscribed already)
   */
  private static Map<String, String> groupOf(KafkaConsumer<?, ?> consumer, Map<String, String> kafkaConfig) {
    Map<String, String> config = new HashMap<>(Objects.requireNonNull(kafkaConfig, "kafkaConfig"));
    ConsumerGroupMetadata group;
    try {
      group = consumer.unwrap().groupMetadata();
    } catch (InvalidGroupIdException e) {
      throw new IllegalArgumentException("the Vert.x consumer has no group.id: windows are kept per consumer group, "
          + "create it with one", e);
    } catch (ConcurrentModificationException e) {
      throw new IllegalStateException("the Vert.x consumer is in use by its poll thread: wrap it before it "
          + "subscribes", e);
    }
    agree(config, ConsumerConfig.GROUP_ID_CONFIG, group.groupId());
    group.groupInstanceId().ifPresentOrElse(id -> agree(config, ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, id), () -> {
      if (config.get(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG) != null) {
        throw new IllegalArgumentException("kafkaConfig group.instance.id is "
            + config.get(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG) + " but the Vert.x consumer has none: pass the "
            + "config the consumer was created with");
      }
    });
    return config;
  }

  /** Puts the consumer's {@code value} of {@code key} into {@code config}, refusing another value already there. */
  private static void agree(Map<String, String> config, String key, String value) {
    String given = config.get(key);
    if (given != null && !given.equals(value)) {
      throw new IllegalArgumentException("kafkaConfig " + key + " is " + given + " but the Vert.x consumer's is "
          + value + ": pass the config the consumer was created with");
    }
    config.put(key, value);
  }

  @Override
  public Set<TopicPartition> assignment() {
    WrappedAssignment<K, V> p = partitions;
    return p == null ? Set.of() : p.assignment();
  }

  @Override
  public Future<Void> subscribe(Set<String> topics) {
    RuntimeException refused = start(topics);
    if (refused != null) {
      return Future.failedFuture(refused);
    }
    Set<String> copy = Set.copyOf(topics);
    WrappedContext ctx = new WrappedContext(vertx.getOrCreateContext());
    synchronized (this) {
      context = ctx;
      PartitionWindows windows = windows();
      partitions = new WrappedAssignment<>(vertx, ctx, consumer, windows, config, ownerConfig(this::wake),
          partitionHealth(), groupId, instanceId, options, this::stop, f -> report(ctx.context(), f));
      commits = new WrappedCommits<>(consumer, partitions.owners, windows, ctx);
    }
    WrappedAssignment<K, V> p = partitions;
    // A bad inbox table fails the start, before the consumer joins the group; without an inbox, nothing to wait for.
    Future<Void> inboxChecked = inboxCheck();
    return (inboxChecked.succeeded() ? ctx.here(consumer.subscription())
        : ctx.here(inboxChecked).compose(v -> ctx.here(consumer.subscription()))).compose(subscribed -> {
      // On the context, as stop is: once close was called the Vert.x consumer is closed or closing, and a handler set
      // or a subscribe on it now would restart its poll thread, outside the group's and this consumer's life.
      if (stopping || closeCalled()) {
        return Future.failedFuture(new IllegalStateException("the consumer was closed while it subscribed"));
      }
      if (!subscribed.isEmpty()) {
        return Future.failedFuture(new IllegalStateException("the Vert.x consumer is already subscribed to "
            + subscribed + ": wrap it before it subscribes, so that every partition assigned to it gets a window"));
      }
      consumer.handler(null);
      consumer.batchHandler(batch -> ctx.execute(() -> p.records(batch.records())));
      consumer.partitionsAssignedHandler(tps -> ctx.execute(() -> p.assigned(WrappedContext.kafka(tps))));
      WrappedCommits<K, V> c = commits;
      consumer.partitionsRevokedHandler(tps -> ctx.execute(() -> p.revoked(WrappedContext.kafka(tps), c)));
      consumer.pollTimeout(Duration.ofMillis(options.getPollTimeoutMs()));
      return ctx.here(consumer.subscribe(copy));
    }).onSuccess(v -> {
      if (!stopping) {
        commitTimer = vertx.setPeriodic(options.getCommitIntervalMs(), id -> commits.commitMoved());
      }
    });
  }

  /**
   * Drains every partition (bounded by {@code revocationTimeoutMs}), commits the committable offsets, hands the
   * windows back to their store and closes the Vert.x consumer (it leaves the group). Idempotent.
   */
  @Override
  public Future<Void> close() {
    Promise<Void> p;
    WrappedContext ctx;
    synchronized (this) {
      p = beginClose();
      if (p == null) {
        return closeFuture();
      }
      ctx = context;
    }
    if (ctx == null) {
      consumer.close().onComplete(ar -> finish(ar.cause()));
    } else {
      ctx.execute(() -> stop(null));
    }
    return p.future();
  }

  /** Wakes the context: an owner may have its partition resumed. Any thread; folds wakes already queued. */
  private void wake() {
    if (wakeQueued.compareAndSet(false, true)) {
      context.context().runOnContext(v -> {
        wakeQueued.set(false);
        partitions.applyPauses();
        if (commits != null) {
          commits.commitWanted();
        }
      });
    }
  }

  /** Stops: on {@link #close} ({@code failure} null) or on a failure. On the context; the first call wins. */
  private void stop(RuntimeException failure) {
    if (stopping) {
      if (failure != null) {
        LOG.warn("dedup consumer {} of group {}, already stopping: {}", instanceId, groupId, failure.getMessage());
      }
      return;
    }
    stopping = true;
    if (failure != null) {
      LOG.error("dedup consumer {} of group {} stops and closes its Vert.x consumer, which leaves the group",
          instanceId, groupId, failure);
    }
    vertx.cancelTimer(commitTimer);
    partitions.retireAll(commits).transform(v -> consumer.close()).onComplete(ar -> {
      if (failure != null) {
        report(context.context(), failure);
      }
      finish(failure != null ? failure : ar.cause());
    });
  }

}
