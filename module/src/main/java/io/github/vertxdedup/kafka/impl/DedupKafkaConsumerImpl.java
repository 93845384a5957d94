package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.UnvouchedPolicy;
import io.github.vertxdedup.kafka.DeadLetterHandler;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.RecordHandler;
import io.github.vertxdedup.window.DedupClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.micrometer.backends.BackendRegistries;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;

/**
 * The {@link DedupKafkaConsumer}: a native Kafka consumer driven by a thread of its own.
 *
 * <h2>Why a thread of its own</h2>
 * In vertx-kafka-client 5.0.7 the partition assign and revoke handlers are scheduled on a context and return at
 * once, so they cannot hold a rebalance back. Here {@link KafkaConsumer#poll} runs on a dedicated thread and the
 * {@link ConsumerRebalanceListener} runs inside it, synchronously: {@code onPartitionsAssigned} blocks that thread
 * (never an event loop) until each new partition's window is ready and its owner created, then seeks;
 * {@code onPartitionsRevoked} fences the owners, waits (bounded) for the records they already decided, commits the
 * committable offsets and hands the windows back, all before the group moves the partitions. Every call on the
 * {@link KafkaConsumer} (poll, commit, seek, pause, resume, close) happens on this thread, which is what the
 * client requires (it is not thread-safe).
 *
 * <h2>Loop</h2>
 * Apply pauses (a partition whose owner holds {@code maxBufferedPerPartition} records not yet committable, or waits
 * for a lease or a 503 backoff) and resumes (an owner back to half of it); {@code poll}; hand each partition's records
 * to its owner's event loop; commit the offsets that became committable since the last commit with
 * {@code commitAsync}, at most once per {@code commitIntervalMs}; repeat. Revocation and close commit with
 * {@code commitSync}.
 *
 * <p>A paused partition must not wait out a poll timeout once its owner has caught up: with every partition paused, a
 * blocking {@code poll} sleeps its full timeout while the owners sit idle, and under load that would be most of the
 * loop's time (docs/results/README.md, "Kafka consumer"). So an owner signals {@link #wake} when it drops back to the
 * resume mark or stops waiting for a lease; while every partition is paused the loop waits on that signal (bounded by
 * {@code pollTimeoutMs}) and then polls without blocking, and while only some are paused it polls for at most
 * {@value #PAUSED_POLL_MS} ms.
 *
 * <h2>A window that does not open</h2>
 * The consumer stops rather than retrying: the window store already waits up to {@code assignmentTimeoutMs} for a
 * journal another owner holds, so what fails here is a journal that cannot be read or a directory that cannot be
 * used, which no retry mends, while the partition's records would wait unread for as long as the consumer lived. The
 * assignment finishes normally (the owners that did start are kept, so they are drained and handed back like the
 * others); the loop then ends, commits what is committable, leaves the group and reports the first failure to the
 * exception handler. Throwing from {@code onPartitionsAssigned} instead would leave it to the Kafka client whether
 * and where the error surfaces.
 */
public final class DedupKafkaConsumerImpl<K, V> implements DedupKafkaConsumer<K, V> {

  private static final System.Logger LOG = System.getLogger(DedupKafkaConsumerImpl.class.getName());
  /** Longest {@code poll} while some partitions are paused and others not, in milliseconds. */
  static final long PAUSED_POLL_MS = 5;

  private final Vertx vertx;
  private final Map<String, Object> config;
  private final DedupKafkaOptions options;
  private final DedupClock clock;
  private final String groupId;
  private final String instanceId;

  private IdentityExtractor<K, V> identity;
  private RecordHandler<K, V> handler;
  private DeadLetterHandler<K, V> deadLetters;
  /** What every partition owner shares; built at subscribe. */
  private OwnerConfig<K, V> ownerConfig;
  private MeterRegistry registry;
  private Handler<Throwable> exceptionHandler;
  /** The first window that failed to open; ends the poll loop. Poll thread only. */
  private RuntimeException windowFailure;

  /** Owners by partition; poll thread only. */
  private final Map<TopicPartition, Owned<K, V>> owners = new HashMap<>();
  private final Set<TopicPartition> paused = new HashSet<>();
  /** Released by an owner that may be resumed; the poll loop waits on it while every partition is paused. */
  private final Semaphore wake = new Semaphore(0);
  private long lastCommitNs;
  private volatile Set<TopicPartition> assignment = Set.of();
  private WindowStore windows;
  private KafkaConsumer<K, V> consumer;
  private Thread pollThread;
  private volatile boolean running;
  private boolean started;
  private Promise<Void> closed;
  private Context closeContext;

  /**
   * @param vertx the Vert.x instance
   * @param kafkaConfig the Kafka consumer config
   * @param options the options (copied and validated)
   * @param clock the clock of the windows
   * @throws IllegalArgumentException if the options or the config are invalid
   */
  public DedupKafkaConsumerImpl(Vertx vertx, Map<String, String> kafkaConfig, DedupKafkaOptions options,
      DedupClock clock) {
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.options = new DedupKafkaOptions(Objects.requireNonNull(options, "options")).validate();
    Objects.requireNonNull(kafkaConfig, "kafkaConfig");
    this.config = new HashMap<>(kafkaConfig);
    Object group = config.get(ConsumerConfig.GROUP_ID_CONFIG);
    if (group == null || group.toString().isBlank()) {
      throw new IllegalArgumentException("kafkaConfig group.id is required: windows are kept per consumer group");
    }
    Object autoCommit = config.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
    if (autoCommit != null && !"false".equalsIgnoreCase(autoCommit.toString())) {
      throw new IllegalArgumentException("kafkaConfig enable.auto.commit must be false or absent but was "
          + autoCommit + ": offsets are committed after each record is settled");
    }
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    this.groupId = group.toString();
    Object staticId = config.get(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
    this.instanceId = this.options.getInstanceId() != null ? this.options.getInstanceId()
        : staticId != null ? staticId.toString() : UUID.randomUUID().toString();
  }

  @Override
  public synchronized DedupKafkaConsumer<K, V> identity(IdentityExtractor<K, V> identity) {
    requireNotStarted();
    this.identity = Objects.requireNonNull(identity, "identity");
    return this;
  }

  @Override
  public synchronized DedupKafkaConsumer<K, V> handler(RecordHandler<K, V> handler) {
    requireNotStarted();
    this.handler = Objects.requireNonNull(handler, "handler");
    return this;
  }

  @Override
  public synchronized DedupKafkaConsumer<K, V> deadLetterHandler(DeadLetterHandler<K, V> deadLetterHandler) {
    requireNotStarted();
    this.deadLetters = Objects.requireNonNull(deadLetterHandler, "deadLetterHandler");
    return this;
  }

  @Override
  public synchronized DedupKafkaConsumer<K, V> meterRegistry(MeterRegistry registry) {
    requireNotStarted();
    this.registry = Objects.requireNonNull(registry, "registry");
    return this;
  }

  @Override
  public synchronized DedupKafkaConsumer<K, V> exceptionHandler(Handler<Throwable> handler) {
    requireNotStarted();
    this.exceptionHandler = Objects.requireNonNull(handler, "handler");
    return this;
  }

  @Override
  public Set<TopicPartition> assignment() {
    return assignment;
  }

  @Override
  public String instanceId() {
    return instanceId;
  }

  @Override
  public synchronized Future<Void> subscribe(Set<String> topics) {
    if (started) {
      return Future.failedFuture(new IllegalStateException("subscribe was already called on this consumer"));
    }
    if (identity == null || handler == null) {
      return Future.failedFuture(new IllegalStateException("identity and handler must be set before subscribe"));
    }
    if (topics == null || topics.isEmpty()) {
      return Future.failedFuture(new IllegalArgumentException("topics must not be empty"));
    }
    started = true;
    if (registry == null) {
      MeterRegistry r = BackendRegistries.getDefaultNow();
      registry = r != null ? r : Metrics.globalRegistry;
    }
    // The windows accept what they cannot vouch for (recording the id) and mark it unvouched; the owner applies
    // unvouchedRecords. One behaviour for every window, whichever consumer of the group opened it first.
    DedupOptions dedup = options.getDedup().setUnvouchedPolicy(UnvouchedPolicy.ACCEPT);
    windows = WindowStore.create(vertx, dedup, clock, registry, options.getAssignmentTimeoutMs());
    ownerConfig = new OwnerConfig<>(vertx, options, identity, handler, deadLetters, clock, instanceId, wake::release);
    Context caller = vertx.getOrCreateContext();
    Promise<Void> subscribed = Promise.promise();
    Set<String> copy = Set.copyOf(topics);
    running = true;
    pollThread = new Thread(() -> run(copy, caller, subscribed), "dedup-kafka-poll-" + groupId + "-" + instanceId);
    pollThread.setDaemon(true);
    pollThread.start();
    return subscribed.future();
  }

  @Override
  public synchronized Future<Void> close() {
    if (closed != null) {
      return closed.future();
    }
    closed = Promise.promise();
    closeContext = vertx.getOrCreateContext();
    running = false;
    if (pollThread == null) {
      closed.complete();
    } else if (consumer != null) {
      consumer.wakeup();
    }
    wake.release();
    return closed.future();
  }

  private void requireNotStarted() {
    if (started) {
      throw new IllegalStateException("the consumer is already subscribed: set it up before subscribe");
    }
  }

  // --- the poll thread ---------------------------------------------------------------------------------------------

  private void run(Set<String> topics, Context caller, Promise<Void> subscribed) {
    try {
      consumer = new KafkaConsumer<>(config);
      consumer.subscribe(topics, new Listener());
    } catch (RuntimeException e) {
      running = false;
      caller.runOnContext(v -> subscribed.fail(e));
      finish(e);
      return;
    }
    caller.runOnContext(v -> subscribed.complete());
    Throwable failure = null;
    try {
      while (running && windowFailure == null) {
        try {
          applyPauses();
          long timeoutMs = options.getPollTimeoutMs();
          if (!paused.isEmpty()) {
            if (paused.size() == owners.size()) {
              // Nothing to fetch: wait for an owner to catch up, then poll only to serve the group.
              wake.tryAcquire(timeoutMs, TimeUnit.MILLISECONDS);
              wake.drainPermits();
              applyPauses();
              timeoutMs = 0;
            } else {
              timeoutMs = Math.min(timeoutMs, PAUSED_POLL_MS);
            }
          }
          ConsumerRecords<K, V> records = consumer.poll(Duration.ofMillis(timeoutMs));
          for (TopicPartition tp : records.partitions()) {
            Owned<K, V> o = owners.get(tp);
            if (o != null) {
              o.owner.offer(records.records(tp));
            }
          }
          long now = System.nanoTime();
          if (now - lastCommitNs >= TimeUnit.MILLISECONDS.toNanos(options.getCommitIntervalMs())) {
            lastCommitNs = now;
            commitCommittableAsync();
          }
        } catch (WakeupException e) {
          // close() wakes the poll; the loop condition decides.
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          running = false;
        }
      }
      revoke(new ArrayList<>(owners.keySet()), true);
      failure = windowFailure;
    } catch (RuntimeException e) {
      failure = windowFailure != null ? windowFailure : e;
      revoke(new ArrayList<>(owners.keySet()), false);
    } finally {
      try {
        consumer.close(Duration.ofSeconds(5));
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "closing the Kafka consumer failed", e);
      }
      if (failure != null) {
        LOG.log(System.Logger.Level.ERROR, "dedup consumer " + instanceId + " of group " + groupId
            + " stopped on an error and left the group", failure);
        report(caller, failure);
      }
      finish(failure);
    }
  }

  /** Hands a failure that stopped the consumer to the exception handler, on the subscriber's context. */
  private void report(Context caller, Throwable failure) {
    Handler<Throwable> h;
    synchronized (this) {
      h = exceptionHandler;
    }
    if (h != null) {
      caller.runOnContext(v -> h.handle(failure));
    }
  }

  private void finish(Throwable failure) {
    Promise<Void> p;
    Context ctx;
    synchronized (this) {
      if (closed == null) {
        closed = Promise.promise();
        closeContext = vertx.getOrCreateContext();
      }
      p = closed;
      ctx = closeContext;
    }
    ctx.runOnContext(v -> {
      if (failure == null) {
        p.tryComplete();
      } else {
        p.tryFail(failure);
      }
    });
  }

  private void applyPauses() {
    List<TopicPartition> pause = new ArrayList<>();
    List<TopicPartition> resume = new ArrayList<>();
    int max = options.getMaxBufferedPerPartition();
    for (Map.Entry<TopicPartition, Owned<K, V>> e : owners.entrySet()) {
      PartitionOwner<K, V> o = e.getValue().owner;
      int buffered = o.buffered();
      // Hysteresis: pause at max, resume at half of it, so a busy partition is not paused and resumed every poll.
      boolean hold = o.wantsPause() || buffered >= max
          || (paused.contains(e.getKey()) && buffered > OwnerConfig.resumeMark(max));
      if (hold && paused.add(e.getKey())) {
        pause.add(e.getKey());
      } else if (!hold && paused.remove(e.getKey())) {
        resume.add(e.getKey());
      }
    }
    if (!pause.isEmpty()) {
      consumer.pause(pause);
    }
    if (!resume.isEmpty()) {
      consumer.resume(resume);
    }
  }

  /**
   * Commits, without waiting, the offsets that became committable since the last commit (or the last one sent) of
   * every owned partition. The callback runs on this thread, inside a later {@code poll} or commit; Kafka completes
   * the async commits of one consumer in the order they were sent.
   */
  private void commitCommittableAsync() {
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    for (Map.Entry<TopicPartition, Owned<K, V>> e : owners.entrySet()) {
      Owned<K, V> o = e.getValue();
      long next = o.owner.committableNext();
      if (next > o.committed && next > o.sent) {
        offsets.put(e.getKey(), new OffsetAndMetadata(next));
        o.sent = next;
      }
    }
    if (offsets.isEmpty()) {
      return;
    }
    Map<TopicPartition, Owned<K, V>> sentTo = new HashMap<>();
    for (TopicPartition tp : offsets.keySet()) {
      sentTo.put(tp, owners.get(tp));
    }
    consumer.commitAsync(offsets, (done, failure) -> {
      for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
        Owned<K, V> o = sentTo.get(e.getKey());
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
        LOG.log(System.Logger.Level.DEBUG, "async offset commit failed for " + offsets.keySet() + ": " + failure);
      }
    });
  }

  /** Commits, synchronously, the offsets that became committable since the last commit of the given partitions. */
  private void commitCommittable(Collection<TopicPartition> tps) {
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    for (TopicPartition tp : tps) {
      Owned<K, V> o = owners.get(tp);
      long next = o.owner.committableNext();
      if (next > o.committed) {
        offsets.put(tp, new OffsetAndMetadata(next));
      }
    }
    if (offsets.isEmpty()) {
      return;
    }
    try {
      consumer.commitSync(offsets);
    } catch (WakeupException e) {
      // Closing: the final revocation commits again.
      return;
    } catch (RuntimeException e) {
      // A rebalance in progress or a lost generation: the records committable since are duplicates for the next
      // owner.
      LOG.log(System.Logger.Level.WARNING, "offset commit failed for " + offsets.keySet() + ": " + e);
      return;
    }
    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
      Owned<K, V> o = owners.get(e.getKey());
      o.committed = e.getValue().offset();
      windows.offsetsCommitted(o.lease, o.committed);
    }
  }

  private void assign(Collection<TopicPartition> tps) {
    List<TopicPartition> fresh = new ArrayList<>();
    for (TopicPartition tp : tps) {
      if (!owners.containsKey(tp)) {
        fresh.add(tp);
      }
    }
    if (fresh.isEmpty()) {
      return;
    }
    Map<TopicPartition, Future<Owned<K, V>>> starting = new HashMap<>();
    Map<TopicPartition, KafkaMetrics> meters = new HashMap<>();
    for (TopicPartition tp : fresh) {
      KafkaMetrics metrics = new KafkaMetrics(registry, groupId, tp.topic(), tp.partition());
      meters.put(tp, metrics);
      starting.put(tp, windows.acquire(groupId, tp, instanceId).compose(lease -> {
        metrics.orphanedClaims.increment(lease.releasedClaims());
        // The owner runs on its window's event loop and calls the window in-process: no event-bus round trip
        // per decision or commit (docs/kafka.md, "The in-process shortcut").
        PartitionOwner<K, V> owner = new PartitionOwner<>(ownerConfig, tp, lease.partition().context(),
            lease.partition(), metrics);
        return Future.succeededFuture(new Owned<>(owner, lease));
      }));
    }
    Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new HashSet<>(fresh));
    for (TopicPartition tp : fresh) {
      Owned<K, V> o;
      try {
        o = await(starting.get(tp), options.getAssignmentTimeoutMs(), "start the window of " + tp);
      } catch (RuntimeException e) {
        // Keep waiting for the others, so that every owner that did start is known and handed back on the way out.
        // A window that opens after the wait gave up is handed back as soon as it does: nobody else would.
        starting.get(tp).onSuccess(late -> late.owner.stop().eventually(() -> windows.release(late.lease)));
        meters.get(tp).windowOpenFailures.increment();
        LOG.log(System.Logger.Level.ERROR, "dedup consumer " + instanceId + ": " + e.getMessage()
            + "; the consumer stops and leaves the group", e.getCause());
        if (windowFailure == null) {
          windowFailure = e;
        }
        continue;
      }
      owners.put(tp, o);
      OffsetAndMetadata c = committed.get(tp);
      if (c != null) {
        o.committed = c.offset();
        consumer.seek(tp, c.offset());
      } else if (o.lease.resumeOffset() >= 0) {
        consumer.seek(tp, o.lease.resumeOffset());
      }
    }
    assignment = Set.copyOf(owners.keySet());
  }

  private void revoke(Collection<TopicPartition> tps, boolean commit) {
    List<TopicPartition> mine = new ArrayList<>();
    for (TopicPartition tp : tps) {
      if (owners.containsKey(tp)) {
        mine.add(tp);
      }
    }
    if (mine.isEmpty()) {
      return;
    }
    List<Future<Void>> fences = new ArrayList<>();
    for (TopicPartition tp : mine) {
      fences.add(owners.get(tp).owner.fence());
    }
    try {
      await(Future.all(fences).mapEmpty(), options.getRevocationTimeoutMs(), "drain " + mine);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "revoked partitions " + mine + " did not drain within "
          + options.getRevocationTimeoutMs() + " ms; what is unfinished is left to the next owner");
    }
    if (commit) {
      commitCommittable(mine);
    }
    List<Future<?>> stopping = new ArrayList<>();
    for (TopicPartition tp : mine) {
      Owned<K, V> o = owners.remove(tp);
      paused.remove(tp);
      stopping.add(o.owner.stop().eventually(() -> windows.release(o.lease)));
    }
    assignment = Set.copyOf(owners.keySet());
    try {
      await(Future.all(stopping).mapEmpty(), options.getRevocationTimeoutMs(), "stop the owners of " + mine);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "stopping the owners of " + mine + " failed", e);
    }
  }

  private static <T> T await(Future<T> f, long timeoutMs, String what) {
    try {
      return f.toCompletionStage().toCompletableFuture().get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting to " + what, e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("failed to " + what + ": " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException("timed out after " + timeoutMs + " ms waiting to " + what, e);
    }
  }

  /** The rebalance callbacks: they run inside {@code poll}, on the poll thread. */
  private final class Listener implements ConsumerRebalanceListener {

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
      assign(partitions);
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      revoke(partitions, true);
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
      // Another member may own them already: an offset commit would be refused, so only fence and stop.
      revoke(partitions, false);
    }
  }

  /** An owner, its window lease and the offset last committed for it. Poll thread only. */
  private static final class Owned<K, V> {
    final PartitionOwner<K, V> owner;
    final WindowStore.Lease lease;
    long committed = -1;
    /** The offset of the latest async commit sent, or -1. */
    long sent = -1;

    Owned(PartitionOwner<K, V> owner, WindowStore.Lease lease) {
      this.owner = owner;
      this.lease = lease;
    }
  }
}
