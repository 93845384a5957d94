package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.RecordIdentity;
import io.github.vertxdedup.time.DedupClock;
import io.micrometer.core.instrument.LongTaskTimer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rebuild of one newly assigned partition's window from its source topic ({@link RebuildRule}), run on a thread
 * of its own while the partition stays paused on the main consumer and the poll loop goes on: a long rebuild neither
 * blocks {@code onPartitionsAssigned} nor keeps the consumer from polling, so it does not cost the group membership.
 *
 * <p>It reads with a consumer of its own: the main consumer's config (bootstrap servers, security, deserializers,
 * {@code isolation.level}, so an aborted transactional record is not remembered) without {@code group.id} or
 * {@code group.instance.id}, assigned the one partition, never committing. Each poll's records are handed to the
 * partition's context, where the application's {@link IdentityExtractor} identifies them (on the event loop, as for
 * a delivered record) and a {@code checkBatch} of their ids with an explicit {@code rememberUntilMs} puts them into
 * the window and its journal: the narrow interface's own check, journaled as any accept, so the next restart on
 * this machine trusts its journal up to the offsets it records. A record without identity, or whose identity the
 * window refuses (400), is skipped and counted; a 503 (the window full, too many replies pending) is tried again
 * after a backoff. At most {@value #IN_FLIGHT} batches are in flight at a time.
 *
 * <p>{@link #cancel} (a revocation, the consumer closing) wakes the reading consumer and ends the thread; ids already
 * checked stay in the window, which is harmless: they are ids of the partition's records. The outcome completes
 * {@link #done()}, and {@code onDone} runs on the rebuild's thread after it.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class PartitionRebuild<K, V> implements WindowRebuild {

  private static final Logger LOG = LoggerFactory.getLogger(DedupKafkaConsumerImpl.class);
  /** Check batches in flight at a time. */
  static final int IN_FLIGHT = 4;
  /** How long one poll of the reading consumer blocks, in milliseconds. */
  private static final long POLL_MS = 100;
  private static final long BACKOFF_INITIAL_MS = 20;
  private static final long BACKOFF_MAX_MS = 1_000;

  /** What a rebuild did. */
  record Outcome(long start, long end, long recordsRead, long idsRestored, long noIdentity, long durationMs,
      boolean cancelled) {}

  private final TopicPartition tp;
  private final Map<String, Object> config;
  private final LocalPartition partition;
  private final IdentityExtractor<K, V> identity;
  private final DedupClock clock;
  private final long windowMs;
  private final long lookBackMs;
  private final long storeNextOffset;
  private final long committedOffset;
  private final int maxBatch;
  private final KafkaMetrics metrics;
  private volatile Runnable onDone = () -> { };
  private final CompletableFuture<Outcome> done = new CompletableFuture<>();
  private final Thread thread;

  private volatile boolean cancelled;
  private volatile KafkaConsumer<K, V> reader;
  /** Records read; the rebuild's thread. */
  private long recordsRead;
  /** Ids new to the window, and records skipped without identity: counted on the partition's context. */
  private final AtomicLong idsRestored = new AtomicLong();
  private final AtomicLong noIdentity = new AtomicLong();

  /**
   * @param tp the partition
   * @param kafkaConfig the main consumer's config; copied, without its group
   * @param partition the partition's window, ready
   * @param identity the application's identity extractor
   * @param clock the clock of the windows (epoch milliseconds, compared with record timestamps)
   * @param windowMs the window {@code W}, milliseconds
   * @param lookBackMs {@code lookBackMs}
   * @param storeNextOffset the window store's last recorded offset commit, or -1
   * @param committedOffset Kafka's committed offset for the group
   * @param maxBatch events per check batch ({@code dedup.maxBatch})
   * @param metrics the partition's meters
   * @param onDone runs after {@link #done()} completes, on the rebuild's thread, or null (see {@link #onDone})
   */
  PartitionRebuild(TopicPartition tp, Map<String, Object> kafkaConfig, LocalPartition partition,
      IdentityExtractor<K, V> identity, DedupClock clock, long windowMs, long lookBackMs, long storeNextOffset,
      long committedOffset, int maxBatch, KafkaMetrics metrics, Runnable onDone) {
    this.tp = tp;
    this.config = readerConfig(kafkaConfig, tp);
    this.partition = partition;
    this.identity = identity;
    this.clock = clock;
    this.windowMs = windowMs;
    this.lookBackMs = lookBackMs;
    this.storeNextOffset = storeNextOffset;
    this.committedOffset = committedOffset;
    this.maxBatch = maxBatch;
    this.metrics = metrics;
    if (onDone != null) {
      this.onDone = onDone;
    }
    this.thread = new Thread(this::run, "dedup-kafka-rebuild-" + tp);
    this.thread.setDaemon(true);
  }

  /**
   * The reading consumer's config: the main consumer's, without a group (it is assigned, never subscribes or
   * commits) and with its own client id.
   */
  static Map<String, Object> readerConfig(Map<String, Object> kafkaConfig, TopicPartition tp) {
    Map<String, Object> c = new HashMap<>(kafkaConfig);
    c.remove(ConsumerConfig.GROUP_ID_CONFIG);
    c.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
    c.remove(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG);
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    Object clientId = kafkaConfig.get(ConsumerConfig.CLIENT_ID_CONFIG);
    if (clientId != null) {
      c.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId + "-rebuild-" + tp);
    }
    return c;
  }

  /** @return the partition rebuilt */
  @Override
  public TopicPartition partition() {
    return tp;
  }

  /**
   * Sets what runs after {@link #done()} completes, on the rebuild's thread. Before {@link #start}.
   *
   * @param onDone the action
   */
  @Override
  public void onDone(Runnable onDone) {
    this.onDone = onDone;
  }

  /** Starts the rebuild's thread. */
  @Override
  public void start() {
    thread.start();
  }

  /** @return completes with the outcome, or exceptionally with what made the rebuild fail */
  @Override
  public CompletableFuture<Outcome> done() {
    return done;
  }

  /** Ends the rebuild early: the reading consumer is woken, nothing more is checked. Any thread. */
  @Override
  public void cancel() {
    cancelled = true;
    KafkaConsumer<K, V> r = reader;
    if (r != null) {
      r.wakeup();
    }
  }

  /**
   * Waits for the rebuild's thread to end.
   *
   * @param timeoutMs at most this long, milliseconds
   * @return true if it ended
   */
  @Override
  public boolean awaitEnd(long timeoutMs) throws InterruptedException {
    thread.join(timeoutMs);
    return !thread.isAlive();
  }

  private void run() {
    long startedNs = System.nanoTime();
    LongTaskTimer.Sample running = metrics.rebuildsInProgress.start();
    long start = -1;
    try {
      try (KafkaConsumer<K, V> c = new KafkaConsumer<>(config)) {
        reader = c;
        if (!cancelled) {
          start = read(c);
        }
      } catch (WakeupException e) {
        if (!cancelled) {
          throw e;
        }
      }
      long durationMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNs);
      metrics.rebuildDuration.record(durationMs, TimeUnit.MILLISECONDS);
      Outcome o = new Outcome(start, committedOffset, recordsRead, idsRestored.get(),
          noIdentity.get(), durationMs, cancelled);
      LOG.info("{}: window {} from the source topic in {} ms, offsets {}..{}: {} records read, {} ids restored, {}"
              + " skipped without identity", tp, cancelled ? "rebuild cancelled" : "rebuilt", durationMs,
          start < 0 ? committedOffset : start, committedOffset, recordsRead, o.idsRestored(), o.noIdentity());
      done.complete(o);
    } catch (Throwable e) {
      metrics.rebuildFailures.increment();
      done.completeExceptionally(new IllegalStateException("failed to rebuild the window of " + tp
          + " from the source topic: " + e, e));
    } finally {
      running.stop();
      onDone.run();
    }
  }

  /** Reads the partition's records in {@link RebuildRule}'s range and checks their ids; returns the first offset. */
  private long read(KafkaConsumer<K, V> c) throws InterruptedException, ExecutionException {
    c.assign(List.of(tp));
    long cutoff = RebuildRule.cutoffMs(clock.nowMs(), windowMs, lookBackMs);
    OffsetAndTimestamp first = c.offsetsForTimes(Map.of(tp, cutoff)).get(tp);
    long start = RebuildRule.startOffset(storeNextOffset, first == null ? -1 : first.offset(), committedOffset);
    if (start >= committedOffset) {
      return start;
    }
    c.seek(tp, start);
    ArrayDeque<Future<Void>> inFlight = new ArrayDeque<>();
    while (!cancelled && c.position(tp) < committedOffset) {
      List<ConsumerRecord<K, V>> polled = c.poll(Duration.ofMillis(POLL_MS)).records(tp);
      List<ConsumerRecord<K, V>> batch = new ArrayList<>(Math.min(maxBatch, polled.size()));
      for (ConsumerRecord<K, V> r : polled) {
        if (r.offset() >= committedOffset) {
          break;
        }
        recordsRead++;
        metrics.rebuildRecords.increment();
        batch.add(r);
        if (batch.size() == maxBatch) {
          send(batch, inFlight);
          batch = new ArrayList<>(maxBatch);
        }
      }
      if (!batch.isEmpty()) {
        send(batch, inFlight);
      }
    }
    while (!inFlight.isEmpty()) {
      await(inFlight.poll());
    }
    return start;
  }

  private void send(List<ConsumerRecord<K, V>> batch, ArrayDeque<Future<Void>> inFlight)
      throws InterruptedException, ExecutionException {
    while (inFlight.size() >= IN_FLIGHT) {
      await(inFlight.poll());
    }
    Promise<Void> checked = Promise.promise();
    Context ctx = partition.context();
    ctx.runOnContext(v -> {
      List<DedupEvent> events = events(PollLoop.wrap(batch));
      check(events, BACKOFF_INITIAL_MS, checked);
    });
    inFlight.add(checked.future());
  }

  /** Identifies the records (on the partition's context, as for a delivered record) and builds their checks. */
  private List<DedupEvent> events(List<KafkaConsumerRecord<K, V>> records) {
    long now = clock.nowMs();
    List<DedupEvent> events = new ArrayList<>(records.size());
    for (KafkaConsumerRecord<K, V> r : records) {
      RecordIdentity id;
      try {
        id = identity.identify(r);
      } catch (RuntimeException e) {
        id = null;
      }
      if (id == null) {
        skipped();
        continue;
      }
      long until = RebuildRule.rememberUntilMs(r.timestamp(), now, windowMs, lookBackMs);
      if (until != RebuildRule.SKIP) {
        events.add(new DedupEvent(id.id()).setKey(id.key()).setPayloadHash(id.payloadHash())
            .setRememberUntilMs(until));
      }
    }
    return events;
  }

  private void skipped() {
    noIdentity.incrementAndGet();
    metrics.rebuildNoIdentity.increment();
  }

  /**
   * Checks the events: a batch refused whole with 400 (one invalid identity) is checked one by one, skipping the
   * invalid ones; the events refused with 503 are checked again after a backoff. Partition context.
   */
  private void check(List<DedupEvent> events, long backoffMs, Promise<Void> checked) {
    if (events.isEmpty() || cancelled) {
      checked.tryComplete();
      return;
    }
    partition.checkBatch(events).onComplete(ar -> {
      if (ar.failed()) {
        if (isBadRequest(ar.cause()) && events.size() > 1) {
          checkSingly(events, 0, checked);
        } else if (isBadRequest(ar.cause())) {
          skipped();
          checked.tryComplete();
        } else if (isUnavailable(ar.cause())) {
          retryLater(events, backoffMs, checked);
        } else {
          checked.tryFail(ar.cause());
        }
        return;
      }
      List<DedupEvent> again = new ArrayList<>();
      List<DedupBatchResult> results = ar.result();
      for (int i = 0; i < results.size(); i++) {
        DedupBatchResult r = results.get(i);
        if (r.succeeded()) {
          restored(r.result().verdict());
        } else if (r.failureCode() == DedupFailure.UNAVAILABLE) {
          again.add(events.get(i));
        } else if (r.failureCode() == DedupFailure.BAD_REQUEST) {
          skipped();
        } else {
          checked.tryFail(new IllegalStateException("the window refused a rebuilt id: " + r.message()));
          return;
        }
      }
      if (again.isEmpty()) {
        checked.tryComplete();
      } else {
        retryLater(again, backoffMs, checked);
      }
    });
  }

  private void checkSingly(List<DedupEvent> events, int i, Promise<Void> checked) {
    if (i == events.size()) {
      checked.tryComplete();
      return;
    }
    Promise<Void> one = Promise.promise();
    check(List.of(events.get(i)), BACKOFF_INITIAL_MS, one);
    one.future().onComplete(ar -> {
      if (ar.failed()) {
        checked.tryFail(ar.cause());
      } else {
        checkSingly(events, i + 1, checked);
      }
    });
  }

  private void retryLater(List<DedupEvent> events, long backoffMs, Promise<Void> checked) {
    partition.context().owner().setTimer(backoffMs,
        t -> check(events, Math.min(backoffMs * 2, BACKOFF_MAX_MS), checked));
  }

  private void restored(DedupVerdict verdict) {
    if (verdict == DedupVerdict.ACCEPTED) {
      idsRestored.incrementAndGet();
      metrics.rebuildIds.increment();
    }
  }

  private static boolean isBadRequest(Throwable t) {
    return t instanceof ReplyException re && re.failureCode() == DedupFailure.BAD_REQUEST;
  }

  private static boolean isUnavailable(Throwable t) {
    return t instanceof ReplyException re && re.failureCode() == DedupFailure.UNAVAILABLE;
  }

  private void await(Future<Void> f) throws InterruptedException, ExecutionException {
    CompletableFuture<Void> cf = f.toCompletionStage().toCompletableFuture();
    while (true) {
      try {
        cf.get(POLL_MS, TimeUnit.MILLISECONDS);
        return;
      } catch (TimeoutException e) {
        if (cancelled) {
          return;
        }
      }
    }
  }
}
