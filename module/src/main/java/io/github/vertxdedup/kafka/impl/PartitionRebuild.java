package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.RecordIdentity;
import io.github.vertxdedup.time.DedupClock;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
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
 * after a backoff. At most {@value WindowRestore#IN_FLIGHT} batches are in flight at a time ({@link WindowRestore}).
 *
 * <p>Once every id read is in the window, the rebuild tells the window from which instant it now covers event times
 * ({@link LocalPartition#coverFrom}, journaled, so a restart on this machine keeps it): the cutoff
 * {@code now - W - lookBack}, or later where the topic lost records of the window the store lacks
 * ({@link RebuildRule#coverageStartMs}); that gap is logged as one WARN line naming the partition and the instants,
 * and the coverage start is the gauge {@code dedup.kafka.coverage.start}. Records older than it get the consumer's
 * {@code uncoveredRecords} treatment.
 *
 * <p>A rebuild longer than {@value #PROGRESS_INTERVAL_MS} ms logs a progress line at that interval, as journal
 * replay does: records read, the share of the offsets to read, the rate, the time so far.
 *
 * <h2>Faults</h2>
 * Each call of the reading consumer that fails with one of Kafka's retriable exceptions (the broker briefly
 * unreachable: a {@code TimeoutException}, a disconnection, a leader that moved) is made again after an exponential
 * backoff ({@link RebuildBackoff}: {@value #RETRY_INITIAL_MS} ms doubling to {@value #RETRY_MAX_MS} ms, for at most
 * {@value #RETRY_BUDGET_MS} ms per episode) and counted in {@code dedup.kafka.rebuild.retries}. Any other failure
 * (an authorization failure, a record the deserializer rejects), or a retriable one past the budget, fails the
 * rebuild: {@link #done()} completes exceptionally and {@link Rebuilds} keeps the partition unhandled. A record the
 * extractor cannot identify is not a fault: it is skipped and counted.
 *
 * <p>{@link #cancel} (a revocation, the consumer closing) wakes the reading consumer and ends the thread; ids already
 * checked stay in the window, which is harmless: they are ids of the partition's records. A check queued for the
 * partition's context after the cancel finds it cancelled and checks nothing, so once the thread has ended no id of
 * this rebuild reaches the window. The outcome completes {@link #done()}, and {@code onDone} runs on the rebuild's
 * thread after it.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class PartitionRebuild<K, V> extends WindowRebuild<PartitionRebuild.Outcome> {

  private static final Logger LOG = LoggerFactory.getLogger(DedupKafkaConsumerImpl.class);
  /** How long one poll of the reading consumer blocks, in milliseconds. */
  private static final long POLL_MS = 100;
  /** Interval between progress lines of a long rebuild, in milliseconds (journal replay's interval). */
  static final long PROGRESS_INTERVAL_MS = 1_000;
  /** How long one metadata call of the reading consumer may block, in milliseconds. */
  static final long CALL_TIMEOUT_MS = 5_000;
  /** The first wait before a retriable failure is tried again, in milliseconds. */
  static final long RETRY_INITIAL_MS = 100;
  /** The longest wait between retries, in milliseconds. */
  static final long RETRY_MAX_MS = 5_000;
  /** How long the retriable failures of one episode may last before the rebuild fails, in milliseconds. */
  static final long RETRY_BUDGET_MS = 120_000;

  /**
   * What a rebuild did.
   *
   * @param start the first offset read
   * @param end the offset read up to (Kafka's committed offset), not included
   * @param recordsRead records read
   * @param idsRestored ids new to the window
   * @param noIdentity records skipped without identity
   * @param durationMs how long it took, milliseconds
   * @param cancelled whether it was cancelled
   * @param coverageStartMs the earliest event time the window covers after it, epoch milliseconds, or -1 if it was
   *     cancelled before it got that far
   */
  record Outcome(long start, long end, long recordsRead, long idsRestored, long noIdentity, long durationMs,
      boolean cancelled, long coverageStartMs) {}

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

  private final RebuildBackoff backoff;
  /** The earliest event time the window covers after the rebuild, or -1 until it is set; the rebuild's thread. */
  private long coverageStartMs = -1;
  /** Records read; the rebuild's thread. */
  private long recordsRead;
  /** Puts the ids into the window, and counts them and the records skipped without identity. */
  private final WindowRestore<ConsumerRecord<K, V>> restore;

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
    super(tp, "dedup-kafka-rebuild-" + tp);
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
      onDone(onDone);
    }
    this.backoff = readerBackoff(tp, metrics, this::cancelled);
    this.restore = new WindowRestore<>(partition, batch -> events(PollLoop.wrap(batch)), this::cancelled, metrics,
        "rebuilt");
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

  @Override
  void run() {
    long startedNs = System.nanoTime();
    Runnable running = metrics.rebuildStarted();
    long start = -1;
    try {
      try (KafkaConsumer<K, V> c = new KafkaConsumer<>(config)) {
        reading(c);
        if (!cancelled()) {
          start = read(c);
        }
      } catch (WakeupException e) {
        if (!cancelled()) {
          throw e;
        }
      }
      long durationMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNs);
      metrics.rebuildDuration.record(durationMs, TimeUnit.MILLISECONDS);
      Outcome o = new Outcome(start, committedOffset, recordsRead, restore.restoredIds(), restore.skippedIds(),
          durationMs, cancelled(), coverageStartMs);
      LOG.info("{}: window {} from the source topic in {} ms, offsets {}..{}: {} records read, {} ids restored, {}"
              + " skipped without identity{}", tp, cancelled() ? "rebuild cancelled" : "rebuilt", durationMs,
          start < 0 ? committedOffset : start, committedOffset, recordsRead, o.idsRestored(), o.noIdentity(),
          coverageStartMs < 0 ? "" : "; it covers event times from " + Instant.ofEpochMilli(coverageStartMs));
      if (!cancelled()) {
        metrics.rebuildSucceeded();
      }
      done.complete(o);
    } catch (Throwable e) {
      IllegalStateException failure = new IllegalStateException("failed to rebuild the window of " + tp
          + " from the source topic: " + e, e);
      metrics.rebuildFailed(failure);
      done.completeExceptionally(failure);
    } finally {
      running.run();
    }
  }

  /**
   * Reads the partition's records in {@link RebuildRule}'s range and checks their ids, then sets the window's
   * coverage; returns the first offset.
   */
  private long read(KafkaConsumer<K, V> c) throws InterruptedException, ExecutionException {
    c.assign(List.of(tp));
    Duration timeout = Duration.ofMillis(CALL_TIMEOUT_MS);
    long now = clock.nowMs();
    long cutoff = RebuildRule.cutoffMs(now, windowMs, lookBackMs);
    OffsetAndTimestamp first = backoff.call("offsetsForTimes",
        () -> c.offsetsForTimes(Map.of(tp, cutoff), timeout).get(tp));
    long logStart = backoff.call("beginningOffsets", () -> c.beginningOffsets(List.of(tp), timeout).get(tp));
    long logEnd = backoff.call("endOffsets", () -> c.endOffsets(List.of(tp), timeout).get(tp));
    long firstOffset = first == null ? -1 : first.offset();
    long firstTimestamp = first == null ? -1 : first.timestamp();
    long start = RebuildRule.startOffset(storeNextOffset, firstOffset, committedOffset);
    if (start < committedOffset) {
      c.seek(tp, start);
      readRange(c, start);
    }
    if (cancelled()) {
      return start;
    }
    long coverage = RebuildRule.coverageStartMs(cutoff, storeNextOffset, logStart, logEnd, firstOffset,
        firstTimestamp, now);
    if (RebuildRule.lostRecentRecords(storeNextOffset, logStart, logEnd, firstOffset)) {
      LOG.warn("{}: the source topic lost records of the window: its log starts at offset {}{} and the store reaches"
              + " offset {}, so records stamped from {} ({} ms, now - W - lookBackMs) to {} ({} ms) may have been"
              + " handled and are not remembered; the window covers event times from {} on, older records get the"
              + " uncoveredRecords treatment. Keep the topic's retention at least W + lookBackMs", tp, logStart,
          firstOffset < 0 ? " (it is empty)" : ", stamped " + Instant.ofEpochMilli(firstTimestamp),
          storeNextOffset, Instant.ofEpochMilli(cutoff), cutoff, Instant.ofEpochMilli(coverage), coverage,
          Instant.ofEpochMilli(coverage));
    }
    restore.await(partition.coverFrom(coverage));
    if (!cancelled()) {
      coverageStartMs = coverage;
      metrics.coverageStartMs.set(coverage);
    }
    return start;
  }

  /** Reads {@code [start, committedOffset)} and checks the ids, logging progress; the consumer is seeked. */
  private void readRange(KafkaConsumer<K, V> c, long start) throws InterruptedException, ExecutionException {
    long startedNs = System.nanoTime();
    long nextProgressNs = startedNs + PROGRESS_INTERVAL_MS * 1_000_000L;
    long position = start;
    while (!cancelled() && position < committedOffset) {
      List<ConsumerRecord<K, V>> polled = backoff.call("poll", () -> c.poll(Duration.ofMillis(POLL_MS))).records(tp);
      for (ConsumerRecord<K, V> r : polled) {
        if (r.offset() >= committedOffset) {
          break;
        }
        recordsRead++;
        metrics.rebuildRecords.increment();
        restore.add(r, maxBatch);
      }
      restore.flush();
      position = backoff.call("position", () -> c.position(tp, Duration.ofMillis(CALL_TIMEOUT_MS)));
      long nowNs = System.nanoTime();
      if (nowNs >= nextProgressNs && position < committedOffset) {
        nextProgressNs = nowNs + PROGRESS_INTERVAL_MS * 1_000_000L;
        logProgress(start, position, nowNs - startedNs);
      }
    }
    restore.drain();
  }

  /**
   * One progress line, in journal replay's form, e.g. {@code orders-3: rebuild read 1,048,576 records, 41.2% of
   * offsets 0..2,545,000, 52,301 records/s, 20,050 ms}.
   */
  private void logProgress(long start, long position, long elapsedNs) {
    long total = committedOffset - start;
    double percent = total <= 0 ? 100 : 100.0 * (position - start) / total;
    double perSecond = elapsedNs <= 0 ? 0 : recordsRead * 1e9 / elapsedNs;
    long read = recordsRead;
    LOG.atInfo().setMessage(() -> String.format("%s: rebuild read %,d records, %.1f%% of offsets %,d..%,d, %,.0f"
        + " records/s, %,d ms", tp, read, percent, start, committedOffset, perSecond, elapsedNs / 1_000_000L)).log();
  }

  /**
   * The retries of a rebuild's reader ({@link RebuildBackoff}: {@value #RETRY_INITIAL_MS} ms doubling to
   * {@value #RETRY_MAX_MS} ms, for at most {@value #RETRY_BUDGET_MS} ms per episode), each counted in
   * {@code dedup.kafka.rebuild.retries}; the first of an episode is a WARN line, the others DEBUG. Also the
   * changelog rebuild's.
   *
   * @param tp the partition rebuilt
   * @param metrics its meters
   * @param cancelled true once the rebuild is cancelled
   * @return the backoff, for the rebuild's thread
   */
  static RebuildBackoff readerBackoff(TopicPartition tp, KafkaMetrics metrics, BooleanSupplier cancelled) {
    return new RebuildBackoff(RETRY_INITIAL_MS, RETRY_MAX_MS, RETRY_BUDGET_MS, System::nanoTime, Thread::sleep,
        cancelled, (what, failure, waitMs, retry) -> {
          metrics.rebuildRetries.increment();
          (retry == 1 ? LOG.atWarn() : LOG.atDebug()).log("{}: rebuild: {} failed ({}); trying again with backoff,"
              + " first in {} ms, for up to {} ms", tp, what, failure.toString(), waitMs, RETRY_BUDGET_MS);
        });
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
        restore.skip();
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
}
