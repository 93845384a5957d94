package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DeadLetterHandler;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.EventTimeSource;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.RecordHandler;
import io.github.vertxdedup.kafka.UncoveredRecordPolicy;
import io.github.vertxdedup.time.DedupClock;
import io.vertx.core.Vertx;
import java.util.Objects;

/**
 * What every {@link PartitionOwner} of one consumer shares: the settings read once from {@link DedupKafkaOptions},
 * the application's identity extractor and handlers, the clock of the windows, and the signal to the poll thread.
 * Built once per consumer at subscribe; each assigned partition adds its own context, window client and meters.
 *
 * <p>Immutable and thread-safe (the handlers it holds are the application's).
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class OwnerConfig<K, V> {

  final Vertx vertx;
  /**
   * {@link AtomicityMode#EFFECT_FIRST} or {@link AtomicityMode#INBOX}: claim, handle, commit; else check (record the
   * id), then handle.
   */
  final boolean effectFirst;
  /** {@link AtomicityMode#INBOX}: the inbox transaction that replaces the handler call; else null. */
  final InboxCalls<K, V> inbox;
  /** Records per decision request and per commit request ({@code dedup.maxBatch}). */
  final int maxBatch;
  /** Effect-first: handled records whose claim's commit may be unanswered while the next handler runs. */
  final int maxUnansweredCommits;
  /** Record-first: offset commits a partition may wait for at once, each covering a decided run. */
  final int maxUnansweredOffsetCommits;
  /** Records not yet committable at or below which a paused partition is resumed ({@link #resumeMark}). */
  final int resumeMark;
  /** The window {@code W}, in milliseconds. */
  final long windowMs;
  /** The window's bucket width: it covers from the start of the bucket after {@code now - windowMs}. */
  final long bucketMs;
  /** Effect-first: the lease of every claim (the window's default {@code leaseMs}; claims name no lease). */
  final long leaseMs;
  /** Checks and claims carry the record's timestamp as their event time ({@link EventTimeSource#RECORD_TIMESTAMP}). */
  final boolean recordTimestamps;
  /**
   * Records the window's memory does not cover (uncovered) go to the dead-letter path
   * ({@link UncoveredRecordPolicy#DEAD_LETTER}).
   */
  final boolean deadLetterNotCovered;
  /** Accepted ids go to the changelog topic with the offset commits ({@link ChangelogBuffer}). */
  final boolean changelog;
  /** Handler calls per record before it is dead-lettered. */
  final int maxAttempts;
  /** First retry delay, doubled per retry, in milliseconds. */
  final long backoffInitialMs;
  /** Longest retry delay, in milliseconds. */
  final long backoffMaxMs;
  /** The consumer's instance id, named as the claimer of every claim (effect-first). */
  final String claimer;
  final IdentityExtractor<K, V> identity;
  final RecordHandler<K, V> handler;
  /** The dead-letter handler, or null to log dead letters at WARN. */
  final DeadLetterHandler<K, V> deadLetters;
  /** The clock of the windows; lease ends are computed on it. */
  final DedupClock clock;
  /** Wakes the poll thread: a partition may be resumed. Any thread. */
  final Runnable wakePoll;

  /**
   * @param vertx the Vert.x instance (timers)
   * @param options validated consumer options
   * @param identity the identity extractor
   * @param handler the record handler
   * @param deadLetters the dead-letter handler, or null to log dead letters
   * @param clock the clock of the windows
   * @param instanceId the consumer's instance id (the claimer of its claims)
   * @param wakePoll wakes the poll thread when a partition may be resumed
   */
  OwnerConfig(Vertx vertx, DedupKafkaOptions options, IdentityExtractor<K, V> identity, RecordHandler<K, V> handler,
      DeadLetterHandler<K, V> deadLetters, DedupClock clock, String instanceId, Runnable wakePoll) {
    this(vertx, options, identity, handler, deadLetters, clock, instanceId, wakePoll, null);
  }

  /**
   * As the constructor without {@code inbox}, for {@link AtomicityMode#INBOX}.
   *
   * @param inbox the inbox transaction of each accepted record, or null outside INBOX mode
   */
  OwnerConfig(Vertx vertx, DedupKafkaOptions options, IdentityExtractor<K, V> identity, RecordHandler<K, V> handler,
      DeadLetterHandler<K, V> deadLetters, DedupClock clock, String instanceId, Runnable wakePoll,
      InboxCalls<K, V> inbox) {
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.effectFirst = options.getMode() != AtomicityMode.RECORD_FIRST;
    this.inbox = inbox;
    this.maxBatch = options.getDedup().getMaxBatch();
    this.maxUnansweredCommits = options.getMaxUnansweredCommits();
    this.maxUnansweredOffsetCommits = options.getMaxUnansweredOffsetCommits();
    this.resumeMark = resumeMark(options.getMaxBufferedPerPartition());
    this.windowMs = options.getDedup().getWindowMs();
    this.bucketMs = options.getDedup().getEffectiveBucketMs();
    this.leaseMs = options.getDedup().getLeaseMs();
    this.recordTimestamps = options.getEventTimeSource() == EventTimeSource.RECORD_TIMESTAMP;
    this.deadLetterNotCovered = options.getUncoveredRecords() == UncoveredRecordPolicy.DEAD_LETTER;
    this.changelog = options.isChangelog();
    this.maxAttempts = options.getMaxAttempts();
    this.backoffInitialMs = options.getBackoffInitialMs();
    this.backoffMaxMs = options.getBackoffMaxMs();
    this.claimer = instanceId;
    this.identity = Objects.requireNonNull(identity, "identity");
    this.handler = Objects.requireNonNull(handler, "handler");
    this.deadLetters = deadLetters;
    this.clock = Objects.requireNonNull(clock, "clock");
    this.wakePoll = Objects.requireNonNull(wakePoll, "wakePoll");
  }

  /**
   * @param maxBuffered {@code maxBufferedPerPartition}
   * @return the number of records not yet committable at or below which a paused partition is resumed: half the
   *     maximum
   */
  static int resumeMark(int maxBuffered) {
    return maxBuffered / 2;
  }
}
