package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.kafka.client.consumer.OffsetAndMetadata;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The partitions of a {@link WrappedConsumer}: which it owns, the records the Vert.x consumer delivers to them, and
 * the hand-over of their windows. The same partition pipeline as {@link DedupKafkaConsumerImpl}'s (a
 * {@link PartitionOwner} per partition on its window's event loop, windows from the {@link PartitionWindows} store);
 * only the driver differs.
 *
 * <h2>Its own fence</h2>
 * The Vert.x consumer's rebalance handlers run on a context after the rebalance, and return: they cannot hold it back
 * as {@code ConsumerRebalanceListener}s inside {@code poll} do. So:
 * <ul>
 *   <li>Assigned: the partition is paused on the Vert.x consumer at once, and the records that arrive before its
 *   window is ready (fetched before the pause took effect) are kept. Its window is taken from the store once this
 *   consumer's previous owner of it, if any, has handed it back; then Kafka's committed offset is read; where it lies
 *   past what the store covers, the rest of the window is rebuilt from the source topic ({@link PartitionRebuild},
 *   made by {@link Rebuilds#create} as for {@link DedupKafkaConsumerImpl}), the partition still paused and its
 *   records still kept; then its owner starts, is given the kept records, and the partition is resumed. Where Kafka has no committed offset but the store
 *   recorded one (a deleted group, expired offsets), the consumer seeks there first and drops what it kept and what
 *   arrives before the seek completes: the seek position delivers those records again; then, in INBOX mode, the
 *   window is rebuilt from the inbox rows as after any assignment ({@link Rebuilds#create}).</li>
 *   <li>Revoked: the partition leaves {@code owners} at once, so no commit names it from then on and its records no
 *   longer reach the owner. A rebuild of it still running is cancelled, and its window handed back once the rebuild
 *   has ended. Its owner is fenced (nothing new is decided; what was decided is finished), bounded by
 *   {@code revocationTimeoutMs}, then stopped, and its window handed back. The next owner takes the window only
 *   after that (the store's slot, or the journal's lock), so it decides nothing before the old one stopped. What the
 *   old owner finished after its last commit comes back to the next owner from Kafka, and the window drops it as
 *   duplicates. A record-first owner's records checked and not handled (the commit past them was refused, as Kafka
 *   refuses one during a rebalance) are kept ({@link LeftUnhandled}) until the next assignment: if it gives the
 *   partition back to this consumer, and the group's committed offset is still the one this consumer last knew, the
 *   next owner handles them when it reads them again; otherwise they are counted in {@code dedup.kafka.unhandled}.</li>
 * </ul>
 * A window that does not open, a committed-offset lookup or seek that fails, or a rebuild that fails, stops the
 * consumer
 * ({@code onFailure}); the partition stays paused meanwhile.
 *
 * <p>The wrapped consumer's context only, except {@link #assignment}.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class WrappedAssignment<K, V> {

  private static final Logger LOG = LoggerFactory.getLogger(WrappedConsumer.class);

  private final Vertx vertx;
  private final WrappedContext context;
  private final KafkaConsumer<K, V> consumer;
  private final PartitionWindows windows;
  private final OwnerConfig<K, V> ownerConfig;
  private final ConsumerHealth health;
  private final String groupId;
  private final String instanceId;
  private final long revocationTimeoutMs;
  /** The consumer's config: a rebuild reads the source topic with it, without the group. */
  private final Map<String, Object> kafkaConfig;
  private final long lookBackMs;
  /** Stops the consumer: a partition's window could not be started. */
  private final Handler<RuntimeException> onFailure;
  /** The partitions whose owner runs; shared with the commits and the pauses. */
  final Map<TopicPartition, AssignedPartition<K, V>> owners = new HashMap<>();
  /** The partitions assigned whose window is not ready yet. */
  private final Map<TopicPartition, Starting<K, V>> starting = new HashMap<>();
  /** Per partition, the hand-back of the window this consumer held last; never fails. A new owner waits for it. */
  private final Map<TopicPartition, Future<?>> handedBack = new HashMap<>();
  /**
   * Per partition revoked from this consumer, what its record-first owner checked and left unhandled, until the next
   * assignment says whether the partition comes back here (its next owner takes them) or not (they are counted lost).
   */
  private final Map<TopicPartition, Left> leftBehind = new HashMap<>();
  private final Pauses<K, V> pauses;
  private final Handler<RuntimeException> report;
  /** How long after a failed rebuild the partition is rebuilt again, milliseconds ({@code backoffMaxMs}). */
  private final long rebuildRetryMs;
  /** How long after a failed pause or resume it is tried again, milliseconds ({@code backoffInitialMs}). */
  private final long pauseRetryMs;
  /** A retry of the pauses is scheduled. */
  private boolean pauseRetryQueued;
  private volatile Set<TopicPartition> assignment = Set.of();
  /** Closing or stopping: no partition is taken any more, none paused or resumed. */
  private boolean closing;

  /**
   * What a stopped owner left unhandled (completes once it stopped, never fails), the meters to count it in, and the
   * group's committed offset as this consumer last knew it (or -1): the owner's, set again once the commit in flight
   * at the revocation is answered.
   */
  private static final class Left {
    final Future<LeftUnhandled> records;
    final KafkaMetrics metrics;
    long lastCommitted;

    Left(Future<LeftUnhandled> records, KafkaMetrics metrics, long lastCommitted) {
      this.records = records;
      this.metrics = metrics;
      this.lastCommitted = lastCommitted;
    }

    /** Counts the records as lost: nobody here will handle them. */
    void drop(TopicPartition tp) {
      records.onSuccess(l -> FailurePolicy.leftUnhandled(metrics, tp, l.size()));
    }
  }

  /** A partition assigned whose window is not ready yet, and the records kept for it meanwhile. */
  private static final class Starting<K, V> {
    final KafkaMetrics metrics;
    /** The window, once the store hands it over. */
    final Future<PartitionWindows.Lease> lease;
    final List<KafkaConsumerRecord<K, V>> kept = new ArrayList<>();
    /** Seeking to the offset the store recorded: what arrives meanwhile is dropped. */
    boolean seeking;
    /** The rebuild of the window from the source topic, once started; the records stay kept meanwhile. */
    WindowRebuild<?> rebuild;
    /** Rebuilds of the window that failed in a row. */
    int rebuildFailures;
    /** What this consumer's previous owner of the partition left unhandled, or null. */
    Left left;

    Starting(KafkaMetrics metrics, Future<PartitionWindows.Lease> lease) {
      this.metrics = metrics;
      this.lease = lease;
    }
  }

  /**
   * @param vertx the Vert.x instance (timers)
   * @param context the wrapped consumer's context
   * @param consumer the application's Vert.x consumer
   * @param windows where the partitions' windows live
   * @param kafkaConfig the consumer's config, for the rebuilds from the source topic
   * @param ownerConfig what every partition owner shares
   * @param health makes the partitions' meters and tracks their health
   * @param groupId the consumer group
   * @param instanceId this consumer's instance id
   * @param options validated options ({@code revocationTimeoutMs}, {@code maxBufferedPerPartition},
   *     {@code lookBackMs})
   * @param onFailure stops the consumer; called on the context with an {@link IllegalStateException} naming the
   *     partition
   * @param report receives the first failed rebuild of each episode (the consumer's exception handler), which does
   *     not stop the consumer; called on the context
   */
  WrappedAssignment(Vertx vertx, WrappedContext context, KafkaConsumer<K, V> consumer, PartitionWindows windows,
      Map<String, Object> kafkaConfig, OwnerConfig<K, V> ownerConfig, ConsumerHealth health, String groupId, String instanceId,
      DedupKafkaOptions options, Handler<RuntimeException> onFailure, Handler<RuntimeException> report) {
    this.vertx = vertx;
    this.context = context;
    this.consumer = consumer;
    this.windows = windows;
    this.ownerConfig = ownerConfig;
    this.health = health;
    this.groupId = groupId;
    this.instanceId = instanceId;
    this.revocationTimeoutMs = options.getRevocationTimeoutMs();
    this.kafkaConfig = kafkaConfig;
    this.lookBackMs = options.getLookBackMs();
    this.onFailure = onFailure;
    this.report = report;
    this.rebuildRetryMs = options.getBackoffMaxMs();
    this.pauseRetryMs = options.getBackoffInitialMs();
    this.pauses = new Pauses<>(
        tps -> context.here(consumer.pause(WrappedContext.vertx(tps))).onFailure(e -> pauseFailed(tps, true, e)),
        tps -> context.here(consumer.resume(WrappedContext.vertx(tps))).onFailure(e -> pauseFailed(tps, false, e)),
        owners, options.getMaxBufferedPerPartition());
  }

  /** @return the partitions whose owner runs now; any thread */
  Set<TopicPartition> assignment() {
    return assignment;
  }

  /** The Vert.x consumer's assigned handler: pauses the new partitions and takes their windows. */
  void assigned(List<TopicPartition> tps) {
    if (closing) {
      return;
    }
    // Records left by an owner of a partition that is not assigned here again were handled by nobody: lost.
    leftBehind.entrySet().removeIf(e -> {
      if (tps.contains(e.getKey()) && !owners.containsKey(e.getKey()) && !starting.containsKey(e.getKey())) {
        return false;
      }
      e.getValue().drop(e.getKey());
      return true;
    });
    List<TopicPartition> fresh = new ArrayList<>();
    for (TopicPartition tp : tps) {
      if (!owners.containsKey(tp) && !starting.containsKey(tp)) {
        fresh.add(tp);
      }
    }
    if (fresh.isEmpty()) {
      return;
    }
    consumer.pause(WrappedContext.vertx(fresh)).onFailure(e -> LOG.debug("pausing {} failed: {}", fresh,
        e.toString()));
    for (TopicPartition tp : fresh) {
      // This consumer's previous owner of the partition (revoked by an earlier rebalance) may still be draining.
      Future<?> previous = handedBack.getOrDefault(tp, Future.succeededFuture());
      Starting<K, V> s = new Starting<>(health.assigned(tp),
          previous.transform(v -> windows.acquire(groupId, tp, instanceId)));
      s.left = leftBehind.remove(tp);
      starting.put(tp, s);
      context.here(s.lease).onComplete(ar -> windowReady(tp, s, ar));
    }
  }

  /** The window of an assigned partition is ready (or failed): reads Kafka's committed offset. */
  private void windowReady(TopicPartition tp, Starting<K, V> s, AsyncResult<PartitionWindows.Lease> ar) {
    if (starting.get(tp) != s) {
      return; // revoked meanwhile: the revocation hands the window back
    }
    if (ar.failed()) {
      failed(tp, s, null, "failed to start the window of " + tp, ar.cause());
      return;
    }
    PartitionWindows.Lease lease = ar.result();
    health.windowOpened(tp, s.metrics, lease.partition());
    context.here(consumer.committed(WrappedContext.vertx(tp))).onComplete(c -> {
      if (starting.get(tp) != s) {
        return;
      }
      if (c.failed()) {
        failed(tp, s, lease, "failed to read the committed offset of " + tp, c.cause());
        return;
      }
      OffsetAndMetadata committed = c.result();
      if (committed != null || lease.resumeOffset() < 0) {
        // The Vert.x consumer reads from Kafka's committed offset (or by auto.offset.reset): what it kept is next.
        rebuildThenStart(tp, s, lease, committed == null ? -1 : committed.getOffset());
        return;
      }
      s.seeking = true;
      s.kept.clear();
      context.here(consumer.seek(WrappedContext.vertx(tp), lease.resumeOffset())).onComplete(sought -> {
        if (starting.get(tp) != s) {
          return;
        }
        if (sought.failed()) {
          failed(tp, s, lease, "failed to seek " + tp + " to the offset its window recorded", sought.cause());
        } else {
          // Records from here on come from the seek position: keep them while the window is rebuilt. As create's
          // consumer does, the mode decides the rebuild: INBOX from the inbox rows (always: they are the durable
          // memory, the journal only a cache of it), the others nothing, Kafka having no committed offset.
          s.seeking = false;
          rebuildThenStart(tp, s, lease, -1);
        }
      });
    });
  }

  /**
   * Rebuilds from the source topic what the window lacks before Kafka's committed offset, if anything, on the
   * rebuild's own thread and group-less consumer, while the partition stays paused and its records kept; then
   * starts the owner. A revocation meanwhile cancels the rebuild ({@link #revoked}).
   */
  private void rebuildThenStart(TopicPartition tp, Starting<K, V> s, PartitionWindows.Lease lease, long committed) {
    WindowRebuild<?> r = Rebuilds.create(tp, kafkaConfig, ownerConfig, lookBackMs, lease, committed,
        s.metrics);
    if (r == null) {
      start(tp, s, lease, committed);
      return;
    }
    s.rebuild = r;
    r.start();
    context.here(Future.fromCompletionStage(r.done())).onComplete(ar -> {
      if (starting.get(tp) != s) {
        return; // revoked meanwhile: the revocation hands the window back once the rebuild ended
      }
      if (ar.failed()) {
        rebuildFailed(tp, s, lease, committed, ar.cause());
      } else {
        if (s.rebuildFailures > 0) {
          LOG.info("{}: window rebuilt after {} failed attempts; the partition is handled", tp, s.rebuildFailures);
        }
        start(tp, s, lease, committed);
      }
    });
  }

  /**
   * A rebuild that failed (the topic cannot be read): as for {@code create}'s consumer (see {@link Rebuilds}), the
   * partition is left unhandled, paused with its records kept, and rebuilt again {@code backoffMaxMs} later for as
   * long as it stays assigned here; the first failure of an episode is logged at ERROR and reported, and the consumer
   * goes on.
   */
  private void rebuildFailed(TopicPartition tp, Starting<K, V> s, PartitionWindows.Lease lease, long committed,
      Throwable cause) {
    s.rebuild = null;
    s.rebuildFailures++;
    RuntimeException failure = cause instanceof IllegalStateException ise ? ise
        : new IllegalStateException("failed to rebuild the window of " + tp + ": " + cause, cause);
    if (s.rebuildFailures == 1) {
      LOG.error("{}; the partition is left unhandled (paused, its records kept) and rebuilt again every {} ms"
          + " (backoffMaxMs) while it stays assigned here", failure.getMessage(), rebuildRetryMs, failure.getCause());
      report.handle(failure);
    } else {
      LOG.debug("{}; failed attempt {}, the next in {} ms", failure.getMessage(), s.rebuildFailures, rebuildRetryMs);
    }
    vertx.setTimer(rebuildRetryMs, t -> context.execute(() -> {
      if (starting.get(tp) == s && !closing) {
        rebuildThenStart(tp, s, lease, committed);
      }
    }));
  }

  /**
   * Hands the records this consumer's previous owner of {@code tp} left unhandled to its next owner, those it will read
   * again, if the group's committed offset is still the one this consumer last knew: then no other member committed
   * the partition since, so none handled them past a commit (see docs/kafka.md, "Known limits", for the member that
   * handled them and whose commit was refused too). Otherwise, and for the records before {@code from}, they are
   * counted lost.
   *
   * @param left complete: the window was handed back, so the previous owner had stopped
   * @param from the offset the next owner reads from, or -1
   * @param committed Kafka's committed offset read for the next owner, or -1 if it has none
   */
  private void takeOverLeft(TopicPartition tp, Left left, PartitionOwner<K, V> owner, long from, long committed) {
    LeftUnhandled records = left.records.result();
    if (records.size() == 0) {
      return;
    }
    long known = left.lastCommitted;
    if (committed != known) {
      LOG.info("{}: the group's committed offset moved from {} to {} since its owner here stopped: the {} records it"
          + " checked and left unhandled are not handed over", tp, known, committed, records.size());
      FailurePolicy.leftUnhandled(left.metrics, tp, records.size());
      return;
    }
    FailurePolicy.leftUnhandled(left.metrics, tp, records.dropBefore(from));
    if (records.size() > 0) {
      LOG.info("{}: {} records its previous owner here checked and left unhandled are handled when read again", tp,
          records.size());
      owner.takeOver(records);
    }
  }

  /** Starts the partition's owner, hands it the records kept, and resumes the partition. */
  private void start(TopicPartition tp, Starting<K, V> s, PartitionWindows.Lease lease, long committed) {
    starting.remove(tp);
    s.metrics.orphanedClaims.increment(lease.releasedClaims());
    // The owner runs on its window's event loop and calls the window in-process (docs/kafka.md).
    PartitionOwner<K, V> owner = new PartitionOwner<>(ownerConfig, tp, lease.partition().context(),
        lease.partition(), s.metrics);
    AssignedPartition<K, V> o = new AssignedPartition<>(owner, lease);
    o.committed = committed;
    owners.put(tp, o);
    assignment = Set.copyOf(owners.keySet());
    if (s.left != null) {
      takeOverLeft(tp, s.left, owner, committed >= 0 ? committed : lease.resumeOffset(), committed);
      s.left = null;
    }
    if (!s.kept.isEmpty()) {
      owner.offer(s.kept);
    }
    pauses.held(tp);
    applyPauses();
    LOG.info("{}: assigned to {} of group {}, window ready{}", tp, instanceId, groupId,
        committed >= 0 ? ", reading from offset " + committed
            : lease.resumeOffset() >= 0 ? ", reading from offset " + lease.resumeOffset() + " (recorded by its window)"
            : "");
  }

  /** Gives up a partition whose window could not be started, and stops the consumer. */
  private void failed(TopicPartition tp, Starting<K, V> s, PartitionWindows.Lease lease, String what,
      Throwable cause) {
    starting.remove(tp);
    dropLeft(tp, s);
    if (lease != null) {
      handedBack.put(tp, windows.release(lease).otherwiseEmpty());
    }
    s.metrics.windowOpenFailures.increment();
    health.released(tp, s.metrics);
    onFailure.handle(new IllegalStateException(what + ": " + cause.getMessage(), cause));
  }

  /** The Vert.x consumer's batch handler: each partition's records go to its owner, or wait for its window. */
  void records(ConsumerRecords<K, V> records) {
    for (TopicPartition tp : records.partitions()) {
      // Each record wrapped once, as the poll thread does: every call about one delivery gets the same instance.
      List<KafkaConsumerRecord<K, V>> rs = PollLoop.wrap(records.records(tp));
      AssignedPartition<K, V> o = owners.get(tp);
      if (o != null) {
        o.owner.offer(rs);
        continue;
      }
      Starting<K, V> s = starting.get(tp);
      if (s != null && !s.seeking) {
        s.kept.addAll(rs);
      }
      // Otherwise not this consumer's (revoked, or its window failed): its owner reads them from the committed offset.
    }
    applyPauses();
  }

  /** Pauses the partitions whose owner holds too much (or waits), and resumes those that caught up. */
  void applyPauses() {
    if (!closing) {
      pauses.apply();
    }
  }

  /**
   * The Vert.x consumer failed to pause or resume {@code tps} (its Kafka consumer may not hold them at that moment, or
   * is closing): the pauses forget that they did it, and are applied again {@code backoffInitialMs} later, so that a
   * partition whose resume was lost is not left paused with nothing to wake it. On the context.
   */
  private void pauseFailed(List<TopicPartition> tps, boolean pausing, Throwable failure) {
    if (closing) {
      return;
    }
    LOG.info("{} {} failed, tried again in {} ms: {}", pausing ? "pausing" : "resuming", tps, pauseRetryMs,
        failure.toString());
    pauses.failed(tps, pausing);
    if (!pauseRetryQueued) {
      pauseRetryQueued = true;
      vertx.setTimer(pauseRetryMs, id -> context.execute(() -> {
        pauseRetryQueued = false;
        applyPauses();
      }));
    }
  }

  /**
   * The Vert.x consumer's revoked handler (and lost: the client treats both alike): see the type's javadoc.
   *
   * @param tps the partitions revoked
   * @param commits the offset commits: a revoked owner refuses commits only once the commit in flight is answered,
   *     so that records an accepted commit covers are handled here (the next owner starts after them)
   */
  void revoked(List<TopicPartition> tps, WrappedCommits<K, V> commits) {
    for (TopicPartition tp : tps) {
      Starting<K, V> s = starting.remove(tp);
      if (s != null) {
        health.released(tp, s.metrics);
        if (s.left != null) {
          // Its owner never ran: what the owner before it left is still unhandled, for the next assignment to decide.
          keepLeft(tp, s.left);
          s.left = null;
        }
        handedBack.put(tp, giveUp(s));
      }
      AssignedPartition<K, V> o = owners.remove(tp);
      if (o != null) {
        health.released(tp, o.owner.metrics());
        pauses.forget(tp);
        if (!closing) { // closing retires every owner itself
          LOG.info("{}: revoked from {} of group {}; its owner finishes what it may and hands the window back,"
              + " committing no more offsets", tp, instanceId, groupId);
          // No commit of it follows (the Vert.x client cannot hold the rebalance back): a record-first owner leaves
          // the records no commit covers unhandled. If the partition comes back here, its next owner handles them;
          // elsewhere, the next owner reads them again and applies them at most once (docs/kafka.md, "What it
          // guarantees compared with create").
          Promise<LeftUnhandled> left = Promise.promise();
          Left kept = new Left(left.future(), o.owner.metrics(), o.committed);
          commits.afterAnswered(() -> {
            o.owner.refuseCommits();
            kept.lastCommitted = o.committed; // no commit of it is sent any more: final
          });
          keepLeft(tp, kept);
          handedBack.put(tp, drained(tp, o).eventually(() -> handBack(tp, o, left)));
        }
      }
    }
    assignment = Set.copyOf(owners.keySet());
  }

  /**
   * Closing, or stopping on a failure: drains every owner (bounded by {@code revocationTimeoutMs}), commits the
   * committable offsets of the partitions still assigned, stops the owners and hands every window back.
   *
   * @param commits the offset commits
   * @return completes (never fails) once every window is handed back, on the context
   */
  Future<Void> retireAll(WrappedCommits<K, V> commits) {
    closing = true;
    starting.forEach((tp, s) -> {
      health.released(tp, s.metrics);
      dropLeft(tp, s);
      handedBack.put(tp, giveUp(s));
    });
    starting.clear();
    leftBehind.forEach((tp, left) -> left.drop(tp));
    leftBehind.clear();
    Map<TopicPartition, AssignedPartition<K, V>> mine = new HashMap<>(owners);
    List<Future<Void>> drains = new ArrayList<>();
    mine.forEach((tp, o) -> drains.add(drained(tp, o)));
    return context.here(Future.join(drains))
        .transform(v -> commits.commitAll()) // only the partitions not revoked meanwhile: still in owners
        .transform(v -> {
          List<Future<?>> done = new ArrayList<>(handedBack.values());
          mine.forEach((tp, o) -> {
            owners.remove(tp, o);
            health.released(tp, o.owner.metrics());
            done.add(handBack(tp, o, null));
          });
          assignment = Set.of();
          return context.here(Future.join(done)).<Void>mapEmpty().otherwiseEmpty();
        });
  }

  /**
   * Gives up a partition whose window is not ready yet: cancels its rebuild, if one runs, and hands its window back
   * once the rebuild has ended (so no rebuilt id reaches a window handed back) and the store has given it.
   *
   * @return completes (never fails) once the window is handed back, or at once if the store gave none
   */
  private Future<Void> giveUp(Starting<K, V> s) {
    WindowRebuild<?> r = s.rebuild;
    Future<?> ended = Future.succeededFuture();
    if (r != null) {
      r.cancel();
      ended = Future.fromCompletionStage(r.done());
    }
    return ended.transform(v -> s.lease.transform(ar -> ar.succeeded() ? windows.release(ar.result())
        : Future.<Void>succeededFuture())).otherwiseEmpty();
  }

  /** Fences the owner; completes (never fails) when it drained, or after {@code revocationTimeoutMs}. */
  private Future<Void> drained(TopicPartition tp, AssignedPartition<K, V> o) {
    Promise<Void> p = Promise.promise();
    long timer = vertx.setTimer(revocationTimeoutMs, id -> {
      if (p.tryComplete()) {
        LOG.warn("{}: did not drain within revocationTimeoutMs={} ms; what is unfinished is left to the next owner",
            tp, revocationTimeoutMs);
      }
    });
    o.owner.fence().onComplete(ar -> {
      vertx.cancelTimer(timer);
      p.tryComplete();
    });
    return p.future();
  }

  /**
   * Stops the owner and gives its window back; never fails. With {@code left}, completes it with the records the
   * owner checked and left unhandled before the window is given back, without counting them; without, counts them.
   */
  private Future<Void> handBack(TopicPartition tp, AssignedPartition<K, V> o, Promise<LeftUnhandled> left) {
    Future<Void> stopped = left == null ? o.owner.stop() : o.owner.stopLeaving()
        .andThen(ar -> left.complete(ar.succeeded() ? ar.result() : LeftUnhandled.of(List.of()))).mapEmpty();
    return stopped.eventually(() -> windows.release(o.lease))
        .onFailure(e -> LOG.warn("{}: handing its window back failed: {}", tp, e.toString())).otherwiseEmpty();
  }

  /** Keeps what a revoked owner left until the next assignment; what was kept before for the partition is lost. */
  private void keepLeft(TopicPartition tp, Left left) {
    Left previous = leftBehind.put(tp, left);
    if (previous != null) {
      previous.drop(tp);
    }
  }

  /** Counts what the previous owner left for a starting partition that will not start here, if anything. */
  private void dropLeft(TopicPartition tp, Starting<K, V> s) {
    if (s.left != null) {
      s.left.drop(tp);
      s.left = null;
    }
  }
}
