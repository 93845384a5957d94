package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.UncoveredPolicy;
import io.github.vertxdedup.inbox.DedupInbox;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DeadLetterHandler;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.InboxRecordHandler;
import io.github.vertxdedup.kafka.RecordHandler;
import io.github.vertxdedup.time.DedupClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.Status;
import io.vertx.micrometer.backends.BackendRegistries;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.slf4j.LoggerFactory;

/**
 * What both kinds of {@link DedupKafkaConsumer} share before they start: the validated options and Kafka config, the
 * consumer group and instance id, the application's identity extractor, handlers, meter registry and exception
 * handler (set before {@code subscribe}), and, at {@code subscribe}, the {@link OwnerConfig} of the partition owners
 * and the {@link PartitionWindows} store. The two differ only in what drives the owners: a native consumer on a thread
 * of its own ({@link DedupKafkaConsumerImpl}) or the application's Vert.x consumer ({@link WrappedConsumer}).
 *
 * <p>The setters and {@link #start} are synchronized; the rest is read after {@link #start}.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
abstract class ConsumerSetup<K, V> implements DedupKafkaConsumer<K, V> {

  final Vertx vertx;
  /** The Kafka consumer config, copied. */
  final Map<String, Object> config;
  /** The options, copied and validated. */
  final DedupKafkaOptions options;
  final DedupClock clock;
  final String groupId;
  final String instanceId;

  private IdentityExtractor<K, V> identity;
  private RecordHandler<K, V> handler;
  /** {@link AtomicityMode#INBOX}: the inbox and the handler of its transactions; else null. */
  private DedupInbox inbox;
  private InboxRecordHandler<K, V> inboxHandler;
  private DeadLetterHandler<K, V> deadLetters;
  private MeterRegistry registry;
  private Handler<Throwable> exceptionHandler;
  private boolean started;
  /** {@code close} was called (or the consumer stopped): {@link #start} refuses. */
  private boolean closing;
  /** Completes when the consumer has stopped: made by {@link #beginClose}, or by {@link #finish} on its own stop. */
  private Promise<Void> closed;
  /** The context {@link #closed} completes on: the caller of {@code close}, or of the stop. */
  private Context closeContext;
  /** Removes the journals of partitions that left this machine; with {@code journalDir}, from {@link #windows}. */
  private JournalCleanup cleanup;
  /** The partitions taken and their health; made by {@link #start}. */
  private ConsumerHealth health;
  /** Why the consumer stopped, or null: set by {@link #finish}. */
  private Throwable stoppedBy;
  /** The consumer has stopped ({@link #finish}). */
  private boolean stopped;

  /**
   * @param vertx the Vert.x instance
   * @param kafkaConfig the Kafka consumer config; {@code group.id} is required
   * @param options the options (copied and validated)
   * @param clock the clock of the windows
   * @throws IllegalArgumentException if the options are invalid or {@code group.id} is missing
   */
  ConsumerSetup(Vertx vertx, Map<String, String> kafkaConfig, DedupKafkaOptions options, DedupClock clock) {
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.options = new DedupKafkaOptions(Objects.requireNonNull(options, "options")).validate();
    this.config = new HashMap<>(Objects.requireNonNull(kafkaConfig, "kafkaConfig"));
    Object group = config.get(ConsumerConfig.GROUP_ID_CONFIG);
    if (group == null || group.toString().isBlank()) {
      throw new IllegalArgumentException("kafkaConfig group.id is required: windows are kept per consumer group");
    }
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
  public synchronized DedupKafkaConsumer<K, V> inbox(DedupInbox inbox, InboxRecordHandler<K, V> handler) {
    requireNotStarted();
    this.inbox = Objects.requireNonNull(inbox, "inbox");
    this.inboxHandler = Objects.requireNonNull(handler, "handler");
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
  public String instanceId() {
    return instanceId;
  }

  private void requireNotStarted() {
    if (started) {
      throw new IllegalStateException("the consumer is already subscribed: set it up before subscribe");
    }
  }

  /**
   * Marks the consumer started, if it may start: it is not closed ({@link #closing}), {@code subscribe} was not
   * called before, the identity and handler are set, and there are topics. Resolves the meter registry.
   *
   * @param topics the topics of {@code subscribe}
   * @return null if started, else why not: an {@link IllegalStateException} or {@link IllegalArgumentException}
   */
  synchronized RuntimeException start(Set<String> topics) {
    if (closing) {
      return new IllegalStateException("the consumer is closed: a closed consumer cannot be subscribed again; "
          + "create a new one");
    }
    if (started) {
      return new IllegalStateException("subscribe was already called on this consumer");
    }
    if (identity == null || handler == null && inbox == null) {
      return new IllegalStateException("identity and handler (or inbox) must be set before subscribe");
    }
    if (handler != null && inbox != null) {
      return new IllegalStateException("set either handler or inbox, not both: in mode INBOX the inbox's handler"
          + " writes the effect");
    }
    if (options.getMode() == AtomicityMode.INBOX && inbox == null) {
      return new IllegalStateException("mode INBOX needs an inbox: call inbox(DedupInbox, InboxRecordHandler)"
          + " before subscribe");
    }
    if (inbox != null && options.getMode() != AtomicityMode.INBOX) {
      return new IllegalStateException("an inbox is set but mode is " + options.getMode() + ": set mode INBOX");
    }
    if (topics == null || topics.isEmpty()) {
      return new IllegalArgumentException("topics must not be empty");
    }
    started = true;
    if (registry == null) {
      MeterRegistry r = BackendRegistries.getDefaultNow();
      registry = r != null ? r : Metrics.globalRegistry;
    }
    health = new ConsumerHealth(registry, groupId);
    return null;
  }

  /**
   * Marks the consumer closed: from now on {@link #start} refuses, so a closed consumer never starts (again). Called
   * by {@code close} before it stops anything; thread-safe.
   */
  synchronized void closing() {
    closing = true;
  }

  /**
   * Begins the close, once: marks the consumer closed ({@link #closing}) and makes the close's promise, completed on
   * the caller's context. Thread-safe.
   *
   * @return the new promise, which the caller completes (directly or through {@link #finish}) when the consumer has
   *     stopped; null if the close was begun before (then {@link #closeFuture()} is its future)
   */
  synchronized Promise<Void> beginClose() {
    if (closed != null) {
      return null;
    }
    closing();
    closed = Promise.promise();
    closeContext = vertx.getOrCreateContext();
    return closed;
  }

  /** @return the future of the close; after {@link #beginClose} or {@link #finish}; thread-safe */
  synchronized Future<Void> closeFuture() {
    return closed.future();
  }

  /**
   * Completes the close when the consumer has stopped, on its own or after {@code close}: with {@code failure} if it
   * stopped on one. A stop that no {@code close} began makes the close's promise here, so a later {@code close}
   * returns its future. Any thread; the promise completes on the close's context.
   *
   * @param failure why it stopped, or null
   */
  final void finish(Throwable failure) {
    Promise<Void> p;
    Context ctx;
    synchronized (this) {
      stopped = true;
      if (stoppedBy == null) {
        stoppedBy = failure;
      }
      if (cleanup != null) {
        cleanup.stop();
      }
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

  /** @return true once {@link #closing} was called; thread-safe */
  synchronized boolean closeCalled() {
    return closing;
  }

  /** @return the partitions taken and their health; after {@link #start} */
  synchronized ConsumerHealth partitionHealth() {
    return health;
  }

  @Override
  public Status health() {
    ConsumerHealth h;
    String state;
    Throwable failure;
    synchronized (this) {
      h = health;
      failure = stoppedBy;
      state = stopped ? (failure != null ? "FAILED" : "CLOSED") : closing ? "CLOSING"
          : started ? "RUNNING" : "NOT_SUBSCRIBED";
    }
    JsonObject data = new JsonObject().put("group", groupId).put("instanceId", instanceId).put("state", state);
    if (failure != null) {
      data.put("failure", String.valueOf(failure.getMessage() != null ? failure.getMessage() : failure));
    }
    if (!"RUNNING".equals(state)) {
      return Status.KO(data);
    }
    return h.status(data);
  }

  /** @return the registry of the consumer's meters; after {@link #start} */
  synchronized MeterRegistry registry() {
    return registry;
  }

  /**
   * What every partition owner of this consumer shares. After {@link #start}.
   *
   * @param wakeDriver tells the driver (poll thread, or the wrapped consumer's context) that a partition may be resumed
   * @return the owners' configuration
   */
  synchronized OwnerConfig<K, V> ownerConfig(Runnable wakeDriver) {
    InboxCalls<K, V> calls = inbox == null ? null
        : new InboxCalls<>(inbox, inboxHandler, groupId, options.getDedup().getWindowMs(), clock);
    return new OwnerConfig<>(vertx, options, identity, calls != null ? InboxCalls.notCalled() : handler,
        deadLetters, clock, instanceId, wakeDriver, calls);
  }

  /**
   * Checks the inbox table, if an inbox is set ({@link DedupInbox#verifySchema}), waiting at most
   * {@code assignmentTimeoutMs}. Blocks: call it on the poll thread, never on an event loop.
   *
   * @return null if there is no inbox or its table is usable, else why not (the schema check's
   *     {@link IllegalStateException}, or one whose cause is the database's error)
   */
  RuntimeException awaitInboxCheck() {
    DedupInbox i;
    synchronized (this) {
      i = inbox;
    }
    if (i == null) {
      return null;
    }
    try {
      i.verifySchema().toCompletionStage().toCompletableFuture().get(options.getAssignmentTimeoutMs(),
          TimeUnit.MILLISECONDS);
      return null;
    } catch (ExecutionException e) {
      return e.getCause() instanceof RuntimeException re ? re
          : new IllegalStateException("the inbox table could not be checked: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      return new IllegalStateException("the inbox table could not be checked within assignmentTimeoutMs ("
          + options.getAssignmentTimeoutMs() + " ms)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new IllegalStateException("interrupted while checking the inbox table", e);
    }
  }

  /**
   * Checks the inbox table, if an inbox is set, without blocking.
   *
   * @return completes if there is no inbox or its table is usable; fails as {@link DedupInbox#verifySchema}
   */
  synchronized Future<Void> inboxCheck() {
    return inbox == null ? Future.succeededFuture() : inbox.verifySchema();
  }

  /**
   * The store of this consumer's windows: journaled when {@code dedup.journalDir} is set, else in memory. With a
   * journal, also starts the clean-up of the journal directories of partitions that left this machine
   * ({@link JournalCleanup}), stopped when the consumer stops ({@link #finish}). After {@link #start}, once.
   */
  PartitionWindows windows() {
    // The windows accept what they do not cover (recording the id) and mark it uncovered; the owner applies
    // uncoveredRecords. One behaviour for every window, whichever consumer of the group opened it first.
    DedupOptions dedup = new DedupOptions(options.getDedup()).setUncoveredPolicy(UncoveredPolicy.ACCEPT);
    PartitionWindows windows = PartitionWindows.create(vertx, dedup, clock, registry(),
        options.getAssignmentTimeoutMs());
    if (windows instanceof JournaledPartitionWindows journaled) {
      Path groupDir;
      try {
        groupDir = JournaledPartitionWindows.groupDirectory(journaled.journalDir(), groupId);
      } catch (IllegalArgumentException e) {
        return windows; // the first assignment fails with the same message and stops the consumer
      }
      JournalCleanup c = new JournalCleanup(vertx, groupDir, groupId, dedup.getWindowMs(), clock,
          this::assignment, journaled::inUse, registry(), LoggerFactory.getLogger(getClass()));
      synchronized (this) {
        cleanup = c;
      }
      c.start();
    }
    return windows;
  }

  /**
   * Hands a failure to the exception handler, if one is set, on {@code context}: one that stopped the consumer, or a
   * partition left unhandled because its window could not be rebuilt from its topic.
   */
  void report(Context context, Throwable failure) {
    Handler<Throwable> h;
    synchronized (this) {
      h = exceptionHandler;
    }
    if (h != null) {
      context.runOnContext(v -> h.handle(failure));
    }
  }
}
