package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.kafka.DeadLetter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The per-record meters of one topic-partition, tagged {@code group}, {@code topic} and {@code partition}, which
 * show whether the consumer keeps its promise: {@code dedup.kafka.records} (records whose offset became committable),
 * {@code dedup.kafka.duplicates} (duplicates dropped without calling the handler),
 * {@code dedup.kafka.handler.failures} (failed handler calls, retries included), {@code dedup.kafka.handler.duration}
 * (a timer: from each call of the record handler, retries included, to the completion of its future, in real time
 * whatever clock the windows run on; a call that found nobody to hand the record to is not timed),
 * {@code dedup.kafka.dead.letters{reason=...}}, {@code dedup.kafka.in.flight.waits} (records that found another
 * delivery's claim and waited for its lease), {@code dedup.kafka.unavailable} (decisions refused with
 * 503 and retried), {@code dedup.kafka.lapsed.claims} (effect-first commits refused because the claim's lease ran
 * out while the handler ran: the lease is shorter than twice the handler), {@code dedup.kafka.lapsed.claims.recorded}
 * (of those, the ids the owner recorded afterwards with a check, as no other delivery had claimed them meanwhile),
 * {@code dedup.kafka.unhandled} (record-first: records checked, their ids recorded, whose handler never ran in this
 * consumer: no commit covered them when their owner stopped, and no later owner here took them over),
 * {@code dedup.kafka.redeliveries.beyond.window}
 * (records accepted whose Kafka timestamp is older than now minus the window {@code W}: probably redeliveries the
 * window no longer remembers; the verdict is not changed, the handler runs), {@code dedup.kafka.uncovered.accepts}
 * (records the window did not cover, by their event time, handled under {@code uncoveredRecords} ACCEPT; under
 * DEAD_LETTER they are counted in {@code dedup.kafka.dead.letters{reason=uncovered}} instead),
 * {@code dedup.kafka.orphaned.claims}
 * (claims this consumer's instance id left open in a previous run, released when it took the partition over),
 * {@code dedup.kafka.window.open.failures} (assignments of the partition whose window could not be opened; each stops
 * the consumer, see {@code DedupKafkaConsumer#exceptionHandler}); of the rebuilds of the window from the source
 * topic on assignment ({@link PartitionRebuild}): {@code dedup.kafka.rebuild.records} (records read),
 * {@code dedup.kafka.rebuild.changelog.entries} (entries read from the changelog topic, {@link ChangelogRebuild}),
 * {@code dedup.kafka.rebuild.ids} (ids put into the window), {@code dedup.kafka.rebuild.no.identity} (records
 * skipped), {@code dedup.kafka.rebuild.retries} (calls of the rebuild's reader retried after a retriable failure: the
 * broker briefly unreachable), {@code dedup.kafka.rebuild.failures} (rebuilds that failed: the partition stays
 * unhandled and is rebuilt again later), {@code dedup.kafka.rebuild.duration} (a timer),
 * {@code dedup.kafka.rebuild.in.progress} (a long task timer: rebuilds running now) and the gauge
 * {@code dedup.kafka.coverage.start} (the earliest event time the window covers after this consumer's last rebuild
 * of it, epoch milliseconds; NaN until a rebuild of the current assignment set it).
 *
 * <p>It also keeps what the consumer's health reads of the partition's rebuilds ({@link ConsumerHealth}): how many
 * run now ({@link #rebuildStarted}) and why the last one failed, until one succeeds ({@link #rebuildFailed},
 * {@link #rebuildSucceeded}).
 *
 * <p>Micrometer counters are thread-safe; a new owner of the same partition increments the same counters (the
 * registry returns the meter already registered under the same name and tags).
 */
final class KafkaMetrics {

  final Counter records;
  final Counter duplicates;
  final Counter handlerFailures;
  /** Each handler call, from the call to the completion of its future. */
  final Timer handlerDuration;
  final Counter inFlightWaits;
  final Counter unavailable;
  final Counter lapsedClaims;
  final Counter lapsedClaimsRecorded;
  final Counter unhandled;
  final Counter redeliveriesBeyondWindow;
  final Counter uncoveredAccepts;
  final Counter orphanedClaims;
  final Counter windowOpenFailures;
  /** Records read by rebuilds of the partition's window from the source topic. */
  final Counter rebuildRecords;
  /** Accepted-id entries read from the changelog topic by rebuilds ({@link ChangelogRebuild}). */
  final Counter rebuildChangelogEntries;
  /** Ids those rebuilds put into the window (new to it). */
  final Counter rebuildIds;
  /** Records those rebuilds skipped: no identity, or one the window refused. */
  final Counter rebuildNoIdentity;
  /** Calls of a rebuild's reader retried after a retriable failure. */
  final Counter rebuildRetries;
  /** Rebuilds that failed (the partition stays unhandled until a later one succeeds). */
  final Counter rebuildFailures;
  /** Duration of each finished or cancelled rebuild. */
  final Timer rebuildDuration;
  /** Rebuilds running now, and for how long. */
  final LongTaskTimer rebuildsInProgress;
  /** The coverage start the last rebuild set, epoch milliseconds, or -1: the gauge's value. */
  final AtomicLong coverageStartMs = new AtomicLong(-1);
  private final Map<DeadLetter.Reason, Counter> deadLetters = new EnumMap<>(DeadLetter.Reason.class);
  /** Rebuilds running now: the health's count, which a meter filter that drops the long task timer cannot hide. */
  private final AtomicInteger rebuildsRunning = new AtomicInteger();
  /** Why the last rebuild failed, or null if none failed since the last one that succeeded. */
  private volatile String rebuildFailure;

  KafkaMetrics(MeterRegistry registry, String groupId, String topic, int partition) {
    Tags tags = Tags.of("group", groupId, "topic", topic, "partition", Integer.toString(partition));
    records = Counter.builder("dedup.kafka.records").description("records done with: their offset is committable")
        .tags(tags).register(registry);
    duplicates = Counter.builder("dedup.kafka.duplicates")
        .description("duplicates dropped without calling the handler").tags(tags).register(registry);
    handlerFailures = Counter.builder("dedup.kafka.handler.failures")
        .description("failed handler calls, retries included").tags(tags).register(registry);
    handlerDuration = Timer.builder("dedup.kafka.handler.duration")
        .description("time from a call of the record handler to the completion of its future, retries included")
        .tags(tags).publishPercentileHistogram().register(registry);
    inFlightWaits = Counter.builder("dedup.kafka.in.flight.waits")
        .description("records that waited for another delivery's claim").tags(tags).register(registry);
    unavailable = Counter.builder("dedup.kafka.unavailable")
        .description("decisions refused with 503 and retried after a backoff").tags(tags).register(registry);
    lapsedClaims = Counter.builder("dedup.kafka.lapsed.claims")
        .description("effect-first commits refused because the lease ran out during the handler")
        .tags(tags).register(registry);
    lapsedClaimsRecorded = Counter.builder("dedup.kafka.lapsed.claims.recorded")
        .description("ids of lapsed claims recorded after the refused commit, no other delivery having claimed them")
        .tags(tags).register(registry);
    unhandled = Counter.builder("dedup.kafka.unhandled")
        .description("record-first: records whose id was recorded but whose handler never ran here, no commit"
            + " having covered them when the owner stopped and no later owner here taking them over (a revocation"
            + " that moved the partition elsewhere, a lost partition, a drain past revocationTimeoutMs, a close whose"
            + " last commit was refused, a moved group offset, an offset reset); a next owner whose window has their"
            + " ids drops them, their effects lost")
        .tags(tags).register(registry);
    redeliveriesBeyondWindow = Counter.builder("dedup.kafka.redeliveries.beyond.window")
        .description("records accepted whose Kafka timestamp is older than now minus the window: probably"
            + " redeliveries the window no longer remembers (the verdict is not changed)")
        .tags(tags).register(registry);
    uncoveredAccepts = Counter.builder("dedup.kafka.uncovered.accepts")
        .description("records handled although the window did not cover them: event time older than now minus"
            + " the window, or than the window's memory (uncoveredRecords ACCEPT)")
        .tags(tags).register(registry);
    orphanedClaims = Counter.builder("dedup.kafka.orphaned.claims")
        .description("claims left open by this instance id's previous run, released on taking the partition")
        .tags(tags).register(registry);
    windowOpenFailures = Counter.builder("dedup.kafka.window.open.failures")
        .description("assignments whose window could not be opened; each stopped the consumer")
        .tags(tags).register(registry);
    rebuildRecords = Counter.builder("dedup.kafka.rebuild.records")
        .description("records read from the source topic to rebuild the window on assignment")
        .tags(tags).register(registry);
    rebuildChangelogEntries = Counter.builder("dedup.kafka.rebuild.changelog.entries")
        .description("accepted-id entries read from the changelog topic to rebuild the window on assignment")
        .tags(tags).register(registry);
    rebuildIds = Counter.builder("dedup.kafka.rebuild.ids")
        .description("ids a rebuild from the source topic put into the window (new to it)")
        .tags(tags).register(registry);
    rebuildNoIdentity = Counter.builder("dedup.kafka.rebuild.no.identity")
        .description("records a rebuild skipped: no identity, or one the window refused")
        .tags(tags).register(registry);
    rebuildRetries = Counter.builder("dedup.kafka.rebuild.retries")
        .description("calls of a rebuild's reader retried with backoff after a retriable failure")
        .tags(tags).register(registry);
    rebuildFailures = Counter.builder("dedup.kafka.rebuild.failures")
        .description("rebuilds from the source topic that failed; the partition stays unhandled until one succeeds")
        .tags(tags).register(registry);
    rebuildDuration = Timer.builder("dedup.kafka.rebuild.duration")
        .description("time from the start of a rebuild to its end: from the source topic, or the changelog's read")
        .tags(tags).register(registry);
    rebuildsInProgress = LongTaskTimer.builder("dedup.kafka.rebuild.in.progress")
        .description("rebuilds running now, from the source topic or the changelog (active tasks), and for how long")
        .tags(tags).register(registry);
    // A gauge reads the object it was registered with: the previous assignment's gauge (of the same partition, in
    // the same registry) is replaced, so that the gauge reads this assignment's value.
    Gauge previous = registry.find("dedup.kafka.coverage.start").tags(tags).gauge();
    if (previous != null) {
      registry.remove(previous);
    }
    Gauge.builder("dedup.kafka.coverage.start", coverageStartMs, v -> v.get() < 0 ? Double.NaN : v.get())
        .description("the earliest event time the window covers after its last rebuild from the source topic, epoch"
            + " ms; older records get the uncoveredRecords treatment")
        .tags(tags).strongReference(true).register(registry);
    for (DeadLetter.Reason r : DeadLetter.Reason.values()) {
      deadLetters.put(r, Counter.builder("dedup.kafka.dead.letters").description("records sent to the dead-letter"
          + " handler").tags(tags).tag("reason", r.name().toLowerCase(java.util.Locale.ROOT)).register(registry));
    }
  }

  /**
   * A rebuild of the partition starts: counted in {@code dedup.kafka.rebuild.in.progress} and by the health.
   *
   * @return ends it; call once, on any thread
   */
  Runnable rebuildStarted() {
    rebuildsRunning.incrementAndGet();
    LongTaskTimer.Sample sample = rebuildsInProgress.start();
    return () -> {
      sample.stop();
      rebuildsRunning.decrementAndGet();
    };
  }

  /**
   * A rebuild failed: counted in {@code dedup.kafka.rebuild.failures}; the health reports the partition
   * {@code REBUILD_FAILED} until a rebuild succeeds.
   *
   * @param failure why
   */
  void rebuildFailed(Throwable failure) {
    rebuildFailures.increment();
    rebuildFailure = String.valueOf(failure.getMessage() != null ? failure.getMessage() : failure);
  }

  /** A rebuild ended, not cancelled, without failing: the health forgets the last failure. */
  void rebuildSucceeded() {
    rebuildFailure = null;
  }

  /** @return true while a rebuild of the partition runs; any thread */
  boolean rebuilding() {
    return rebuildsRunning.get() > 0;
  }

  /** @return why the last rebuild failed, or null if none did since the last that succeeded; any thread */
  String rebuildFailure() {
    return rebuildFailure;
  }

  Counter deadLetters(DeadLetter.Reason reason) {
    return deadLetters.get(reason);
  }

  /**
   * Counts the first acceptance of a record: in {@code dedup.kafka.uncovered.accepts} if the window's memory did not
   * cover it, and in {@code dedup.kafka.redeliveries.beyond.window} if its timestamp is older than the window
   * ({@link #beyondWindow}). A record that is not covered and goes to the dead-letter path for it
   * ({@code deadLetterNotCovered}) is counted among the dead letters instead, and not here.
   *
   * @param pending the record, just accepted for the first time
   * @param deadLetterNotCovered whether records the window's memory does not cover are dead-lettered
   * @param nowMs now, from the injected clock
   * @param windowMs the window {@code W} in milliseconds
   */
  void firstAcceptance(PendingRecord<?, ?> pending, boolean deadLetterNotCovered, long nowMs, long windowMs) {
    boolean notCovered = pending.coverage == PendingRecord.Coverage.NOT_COVERED;
    if (notCovered && deadLetterNotCovered) {
      return;
    }
    if (notCovered) {
      uncoveredAccepts.increment();
    }
    if (beyondWindow(pending.record.timestamp(), nowMs, windowMs)) {
      redeliveriesBeyondWindow.increment();
    }
  }

  /**
   * Whether an accepted record is probably a redelivery the window no longer remembers: its Kafka timestamp (the
   * producer's create time, or the broker's append time, by the topic's {@code message.timestamp.type}) is more
   * than the window {@code W} before now. An id older than the window cannot be told from a new one, so watch how
   * often such records arrive and size {@code W} to cover them. The verdict stands (the record was not seen within
   * {@code W}, and the handler runs); only {@code dedup.kafka.redeliveries.beyond.window} counts it. A record
   * without a timestamp ({@code -1}) is never counted. Computed from the timestamp whatever the
   * {@link io.github.vertxdedup.kafka.EventTimeSource}; under
   * {@link io.github.vertxdedup.kafka.UncoveredRecordPolicy#DEAD_LETTER} such a record (which the window marks
   * uncovered) is dead-lettered instead, and not counted here.
   *
   * @param timestampMs the record's timestamp, epoch milliseconds, or negative if none
   * @param nowMs now, from the injected clock
   * @param windowMs the window {@code W} in milliseconds
   * @return true if {@code 0 <= timestampMs < nowMs - windowMs}
   */
  static boolean beyondWindow(long timestampMs, long nowMs, long windowMs) {
    return timestampMs >= 0 && timestampMs < nowMs - windowMs;
  }
}
