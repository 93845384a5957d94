package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.time.DedupClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rebuild of a newly assigned partition's window from its changelog partition ({@code changelog} on), then from
 * the source topic for the offsets the changelog does not cover. It runs on a thread of its own while the partition
 * stays paused, as {@link PartitionRebuild} does.
 *
 * <h2>The changelog</h2>
 * It reads partition {@code p} of the changelog topic ({@link ChangelogTopics}) with a group-less assigned consumer
 * of its own, {@code read_committed} whatever the main consumer's isolation (only entries whose transaction committed
 * the group's offsets count), from the first entry stamped at or after {@code now - W - lookBack}
 * ({@code offsetsForTimes}; an entry is stamped when its transaction is sent, after its id was accepted, so no entry
 * of an id still remembered is older) to the end. Each {@link ChangelogEntry.Kind#ACCEPTED} entry restores its id
 * with a {@code checkBatch} whose {@code rememberUntilMs} is the entry's (at most {@code now + W}): the id is
 * forgotten when its previous owner would have forgotten it, whatever the consumer's lag was; an id already
 * forgotten, or forgotten within {@link RebuildRule#MIN_REMAINING_MS}, is not restored.
 *
 * <h2>What it covers, and the source topic</h2>
 * The {@link ChangelogEntry.Kind#COMMIT} marks say which source offsets the entries cover: a chain of marks, each
 * starting at or before the end of the one before, covers {@code [from of its first, to of its last)}; a mark that
 * starts past the chain's end (an offset was committed without the changelog in between) starts a new chain, and
 * the last chain counts. The source topic is then read as {@link PartitionRebuild} reads it, for what the chain does
 * not cover of the records before the group's committed offset: before the chain (the changelog was switched on
 * recently) and after it (an offset committed without the changelog since). Without any mark, the whole rebuild
 * reads the source topic. Records after a rewound committed offset are inside the chain: their ids are restored
 * from the changelog and the records are duplicates when the main consumer reads them again.
 *
 * <h2>Faults</h2>
 * Each call of the changelog's reader that fails with one of Kafka's retriable exceptions (the broker briefly
 * unreachable) is made again after a backoff, as the source rebuild's are ({@link PartitionRebuild#readerBackoff});
 * any other failure, a retriable one past the budget, or an entry that cannot be read fails the rebuild. The ids go
 * into the window as the source rebuild's do ({@link WindowRestore}): a batch refused whole with 400 is checked one
 * by one, skipping the refused ids, and a 503 is tried again after a backoff.
 *
 * <p>The outcome completes {@link #done()}; {@code onDone} runs on the rebuild's thread after it. {@link #cancel}
 * (a revocation, the consumer closing) ends the reading and the source rebuild it started.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class ChangelogRebuild<K, V> extends WindowRebuild<ChangelogRebuild.Outcome> {

  private static final Logger LOG = LoggerFactory.getLogger(DedupKafkaConsumerImpl.class);
  private static final long POLL_MS = 100;

  /**
   * What a rebuild did.
   *
   * @param entriesRead accepted entries read from the changelog
   * @param idsRestored ids new to the window, from the changelog
   * @param coveredFrom the first source offset the changelog covered, or -1 if it had no commit mark
   * @param coveredTo the source offset up to which it covered, or -1
   * @param sourceRebuilds rebuilds from the source topic run for what it did not cover
   * @param durationMs the whole rebuild's duration, milliseconds
   * @param cancelled true if it was cancelled
   */
  record Outcome(long entriesRead, long idsRestored, long coveredFrom, long coveredTo, int sourceRebuilds,
      long durationMs, boolean cancelled) {}

  private final TopicPartition changelogPartition;
  private final Map<String, Object> kafkaConfig;
  private final LocalPartition partition;
  private final IdentityExtractor<K, V> identity;
  private final DedupClock clock;
  private final long windowMs;
  private final long lookBackMs;
  private final long storeNextOffset;
  private final long committedOffset;
  private final int maxBatch;
  private final KafkaMetrics metrics;
  private final Function<Map<String, Object>, Consumer<byte[], byte[]>> readers;
  private volatile PartitionRebuild<K, V> source;
  /** Retries the reader's calls that fail with a retriable exception. */
  private final RebuildBackoff backoff;
  /** Puts the changelog's ids into the window, and counts them. */
  private final WindowRestore<ChangelogEntry> restore;
  /** The rebuild's thread. */
  private long entriesRead;
  private long coveredFrom = -1;
  private long coveredTo = -1;

  /**
   * @param tp the source partition
   * @param changelogTopic its changelog topic
   * @param kafkaConfig the main consumer's config (the readers take it without the group)
   * @param partition the partition's window, ready
   * @param identity the identity extractor (for the source topic's records)
   * @param clock the clock of the windows, epoch milliseconds
   * @param windowMs the window {@code W}, milliseconds
   * @param lookBackMs {@code lookBackMs}
   * @param storeNextOffset the window store's last recorded offset commit, or -1
   * @param committedOffset Kafka's committed offset for the group, or -1
   * @param maxBatch events per check batch
   * @param metrics the partition's meters
   */
  ChangelogRebuild(TopicPartition tp, String changelogTopic, Map<String, Object> kafkaConfig,
      LocalPartition partition, IdentityExtractor<K, V> identity, DedupClock clock, long windowMs, long lookBackMs,
      long storeNextOffset, long committedOffset, int maxBatch, KafkaMetrics metrics) {
    this(tp, changelogTopic, kafkaConfig, partition, identity, clock, windowMs, lookBackMs, storeNextOffset,
        committedOffset, maxBatch, metrics, KafkaConsumer::new);
  }

  /**
   * As the other constructor, with the changelog's reading consumer made by {@code readers}.
   *
   * @param readers makes the changelog's reading consumer from its config ({@link #readerConfig})
   */
  ChangelogRebuild(TopicPartition tp, String changelogTopic, Map<String, Object> kafkaConfig,
      LocalPartition partition, IdentityExtractor<K, V> identity, DedupClock clock, long windowMs, long lookBackMs,
      long storeNextOffset, long committedOffset, int maxBatch, KafkaMetrics metrics,
      Function<Map<String, Object>, Consumer<byte[], byte[]>> readers) {
    super(tp, "dedup-kafka-changelog-rebuild-" + tp);
    this.changelogPartition = new TopicPartition(changelogTopic, tp.partition());
    this.kafkaConfig = kafkaConfig;
    this.partition = partition;
    this.identity = identity;
    this.clock = clock;
    this.windowMs = windowMs;
    this.lookBackMs = lookBackMs;
    this.storeNextOffset = storeNextOffset;
    this.committedOffset = committedOffset;
    this.maxBatch = maxBatch;
    this.metrics = metrics;
    this.readers = readers;
    this.backoff = PartitionRebuild.readerBackoff(tp, metrics, this::cancelled);
    this.restore = new WindowRestore<>(partition, this::events, this::cancelled, metrics, "restored");
  }

  /**
   * @param storeNextOffset the window store's last recorded offset commit, or -1 if none
   * @param committedOffset Kafka's committed offset for the group, or -1 if none
   * @return true if a newly assigned partition reads its changelog: the store does not cover the committed offset
   *     ({@link RebuildRule#needed}), or it recorded nothing (a machine without a journal of the partition, where a
   *     rewound committed offset, even to 0, hides which later records were handled), or the committed offset lies
   *     before the store's (a rewind: records after it may have been handled on another machine since this store
   *     last held the partition)
   */
  static boolean needed(long storeNextOffset, long committedOffset) {
    return storeNextOffset < 0 || (committedOffset >= 0 && committedOffset < storeNextOffset)
        || RebuildRule.needed(storeNextOffset, committedOffset);
  }

  /** The changelog reader's config: the rebuild reader's, with bytes for key and value, {@code read_committed}. */
  static Map<String, Object> readerConfig(Map<String, Object> kafkaConfig, TopicPartition tp) {
    Map<String, Object> c = PartitionRebuild.readerConfig(kafkaConfig, tp);
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.remove(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG);
    Object clientId = kafkaConfig.get(ConsumerConfig.CLIENT_ID_CONFIG);
    if (clientId != null) {
      c.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId + "-changelog-" + tp);
    }
    return c;
  }

  /** Ends the rebuild early: the reading consumer is woken, and the rebuild from the source topic it started. */
  @Override
  void cancel() {
    super.cancel();
    PartitionRebuild<K, V> s = source;
    if (s != null) {
      s.cancel();
    }
  }

  @Override
  void run() {
    long startedNs = System.nanoTime();
    int sourceRebuilds = 0;
    try {
      Runnable reading = metrics.rebuildStarted();
      try (Consumer<byte[], byte[]> c = readers.apply(readerConfig(kafkaConfig, tp))) {
        reading(c);
        if (!cancelled()) {
          read(c);
        }
      } catch (WakeupException e) {
        if (!cancelled()) {
          throw e;
        }
      } finally {
        reading.run();
      }
      // The changelog's read as one rebuild; each rebuild from the source topic that follows records its own.
      metrics.rebuildDuration.record(System.nanoTime() - startedNs, TimeUnit.NANOSECONDS);
      for (long[] range : sourceRanges(storeNextOffset, committedOffset, coveredFrom, coveredTo)) {
        if (cancelled() || !RebuildRule.needed(range[0], range[1])) {
          continue;
        }
        PartitionRebuild<K, V> s = new PartitionRebuild<>(tp, kafkaConfig, partition, identity, clock, windowMs,
            lookBackMs, range[0], range[1], maxBatch, metrics, null);
        source = s;
        if (cancelled()) {
          break;
        }
        sourceRebuilds++;
        s.start();
        try {
          s.done().get();
        } catch (ExecutionException e) {
          throw e.getCause();
        }
      }
      if (!cancelled() && sourceRebuilds == 0) {
        // No rebuild from the source topic set the window's coverage: the restored ids are those the previous owner
        // remembered, so the window covers what it covered, event times from now - W - lookBack on (as a rebuild from
        // the source topic with nothing lost; see RebuildRule#coverageStartMs).
        long coverage = RebuildRule.cutoffMs(clock.nowMs(), windowMs, lookBackMs);
        restore.await(partition.coverFrom(coverage));
        if (!cancelled()) {
          metrics.coverageStartMs.set(coverage);
        }
      }
      long durationMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNs);
      Outcome o = new Outcome(entriesRead, restore.restoredIds(), coveredFrom, coveredTo, sourceRebuilds, durationMs,
          cancelled());
      LOG.info("{}: window {} from the changelog {} in {} ms: {} entries read, {} ids restored, source offsets {} "
              + "covered, {} rebuild(s) from the source topic for the rest", tp,
          cancelled() ? "rebuild cancelled" : "rebuilt", changelogPartition, durationMs, entriesRead, o.idsRestored(),
          coveredTo < 0 ? "none" : coveredFrom + ".." + coveredTo, sourceRebuilds);
      if (!cancelled()) {
        metrics.rebuildSucceeded();
      }
      done.complete(o);
    } catch (Throwable e) {
      IllegalStateException failure = e instanceof IllegalStateException ise && ise.getMessage() != null
          && ise.getMessage().startsWith("failed to rebuild") ? ise
          : new IllegalStateException("failed to rebuild the window of " + tp + " from the changelog "
              + changelogPartition + ": " + e, e);
      metrics.rebuildFailed(failure);
      done.completeExceptionally(failure);
    }
  }

  /** Reads the changelog partition from {@code now - W - lookBack} to its end, restoring ids and the coverage. */
  private void read(Consumer<byte[], byte[]> c) throws InterruptedException, ExecutionException {
    c.assign(List.of(changelogPartition));
    Duration timeout = Duration.ofMillis(PartitionRebuild.CALL_TIMEOUT_MS);
    long cutoff = RebuildRule.cutoffMs(clock.nowMs(), windowMs, lookBackMs);
    OffsetAndTimestamp first = backoff.call("offsetsForTimes",
        () -> c.offsetsForTimes(Map.of(changelogPartition, cutoff), timeout).get(changelogPartition));
    if (first == null) {
      return; // no entry that recent: nothing to restore, and no coverage
    }
    long end = backoff.call("endOffsets", () -> c.endOffsets(List.of(changelogPartition), timeout))
        .get(changelogPartition);
    c.seek(changelogPartition, first.offset());
    while (!cancelled() && backoff.call("position", () -> c.position(changelogPartition, timeout)) < end) {
      for (ConsumerRecord<byte[], byte[]> r
          : backoff.call("poll", () -> c.poll(Duration.ofMillis(POLL_MS))).records(changelogPartition)) {
        ChangelogEntry e;
        try {
          e = ChangelogEntry.read(r.key(), r.value());
        } catch (IllegalArgumentException bad) {
          throw new IllegalStateException("failed to rebuild the window of " + tp + ": the changelog entry at "
              + changelogPartition + " offset " + r.offset() + " cannot be read: " + bad.getMessage(), bad);
        }
        if (e.kind() == ChangelogEntry.Kind.COMMIT) {
          covered(e.fromOffset(), e.toOffset());
          continue;
        }
        entriesRead++;
        metrics.rebuildChangelogEntries.increment();
        restore.add(e, maxBatch);
      }
    }
    restore.flush();
    restore.drain();
  }

  /** Extends the chain of commit marks, or starts a new one at a mark past its end. */
  private void covered(long from, long to) {
    long[] chain = chain(coveredFrom, coveredTo, from, to);
    coveredFrom = chain[0];
    coveredTo = chain[1];
  }

  /**
   * The chain of commit marks after one more: a mark that starts at or before the chain's end extends it (a rewound
   * owner's mark, starting inside it, keeps its start); one that starts past its end, or the first, starts a new one.
   *
   * @param coveredFrom the chain's first covered source offset, or -1 before the first mark
   * @param coveredTo the source offset it covers up to, or -1 before the first mark
   * @param from the mark's first source offset
   * @param to the source offset it committed
   * @return {@code {coveredFrom, coveredTo}} after the mark
   */
  static long[] chain(long coveredFrom, long coveredTo, long from, long to) {
    if (coveredTo < 0 || from > coveredTo) {
      return new long[] {from, to};
    }
    return new long[] {coveredFrom, Math.max(coveredTo, to)};
  }

  /**
   * The source topic's ranges left to read after the changelog, each as the {@code (storeNextOffset,
   * committedOffset)} of a {@link PartitionRebuild} (which reads from the later of the first and the first offset
   * stamped at or after {@code now - W - lookBack}, up to the second, and nothing unless
   * {@link RebuildRule#needed}): everything when the changelog had no mark, else what lies before and after the
   * chain.
   *
   * @param storeNextOffset the window store's last recorded offset commit, or -1
   * @param committedOffset Kafka's committed offset for the group, or -1
   * @param coveredFrom the chain's first covered source offset, or -1 if there was no mark
   * @param coveredTo the source offset it covers up to, or -1 if there was no mark
   * @return the ranges, in offset order
   */
  static List<long[]> sourceRanges(long storeNextOffset, long committedOffset, long coveredFrom, long coveredTo) {
    if (coveredTo < 0) {
      return List.of(new long[] {storeNextOffset, committedOffset});
    }
    return List.of(new long[] {storeNextOffset, Math.min(committedOffset, coveredFrom)},
        new long[] {Math.max(storeNextOffset, coveredTo), committedOffset});
  }

  /** The checks of the entries whose ids are still remembered: each until its entry's instant, at most now + W. */
  private List<DedupEvent> events(List<ChangelogEntry> entries) {
    long now = clock.nowMs();
    List<DedupEvent> events = new ArrayList<>(entries.size());
    for (ChangelogEntry e : entries) {
      long until = Math.min(e.rememberUntilMs(), now + windowMs);
      if (until - now >= RebuildRule.MIN_REMAINING_MS) {
        events.add(new DedupEvent(e.id()).setKey(e.key()).setPayloadHash(e.payloadHash()).setRememberUntilMs(until));
      }
    }
    return events;
  }
}
