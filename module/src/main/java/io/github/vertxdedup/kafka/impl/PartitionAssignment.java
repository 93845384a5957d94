package io.github.vertxdedup.kafka.impl;

import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rebalance callbacks: which partitions this consumer owns, and the hand-over of their windows. They run inside
 * {@code poll}, on the poll thread, synchronously, so they hold the rebalance back until they return.
 *
 * <ul>
 *   <li>{@code onPartitionsAssigned}: for each new partition, takes its window from the {@link PartitionWindows} (in memory,
 *   or rebuilt from its journal before the call returns), starts its {@link PartitionOwner} on the window's event loop,
 *   and seeks to Kafka's committed offset, or, when Kafka has none, to the last committed offset the store recorded,
 *   else leaves {@code auto.offset.reset} to decide. Bounded by {@code assignmentTimeoutMs}. Where Kafka's committed
 *   offset lies past what the store covers, the partition is paused and the rest of its window rebuilt from the
 *   source topic ({@link Rebuilds}), after the call returned.</li>
 *   <li>{@code onPartitionsRevoked}: cancels the rebuilds of the revoked partitions, fences the owners (nothing new is decided), waits up to
 *   {@code revocationTimeoutMs} for what they decided (committing, with {@code commitSync}, the decided prefix a
 *   record-first owner waits for before its handlers run), commits the committable offsets with {@code commitSync},
 *   stops the owners and hands the windows back, all before the group moves the partitions.
 *   {@code onPartitionsLost}: the same without any commit (another member may own the partitions already), so a
 *   record-first owner's decided records that no commit covers are never handled here.</li>
 * </ul>
 *
 * <h2>A window that does not open</h2>
 * The consumer stops rather than retrying: the window store already waits up to {@code assignmentTimeoutMs} for a
 * journal another owner holds, so what fails here is a journal that cannot be read or a directory that cannot be
 * used, which no retry mends, while the partition's records would wait unread for as long as the consumer lived. The
 * assignment finishes normally (the owners that did start are kept, so they are drained and handed back like the
 * others) and records the first failure ({@link #windowFailure}); the poll loop then ends, commits what is
 * committable, leaves the group and reports it. Throwing from {@code onPartitionsAssigned} instead would leave it to
 * the Kafka client whether and where the error surfaces.
 *
 * <h2>Log lines</h2>
 * One INFO line per partition and lifecycle event, on the {@code DedupKafkaConsumerImpl} logger: assigned; window
 * ready (its time, the entries it holds, the orphaned claims released, the offset reading resumes from and whose it
 * is); revoked, lost or released (the drain's time and the offset committed). What the window store and the window
 * log about the same events is at DEBUG. A window that fails to open is an ERROR line, a drain that runs out of
 * {@code revocationTimeoutMs} a WARN line.
 *
 * <p>Poll thread only, except {@link #assignment}, which any thread may call.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class PartitionAssignment<K, V> implements ConsumerRebalanceListener {

  private static final Logger LOG = LoggerFactory.getLogger(DedupKafkaConsumerImpl.class);

  private final KafkaConsumer<K, V> consumer;
  /** The assigned partitions, shared with the rest of the poll loop. */
  private final Map<TopicPartition, AssignedPartition<K, V>> owners;
  private final PartitionWindows windows;
  private final OwnerConfig<K, V> ownerConfig;
  private final OffsetCommits<K, V> commits;
  private final Pauses<K, V> pauses;
  private final Rebuilds<K, V> rebuilds;
  private final ConsumerHealth health;
  private final String groupId;
  private final String instanceId;
  private final long assignmentTimeoutMs;
  private final long revocationTimeoutMs;

  /** The first window that failed to open; ends the poll loop. */
  private RuntimeException windowFailure;
  private volatile Set<TopicPartition> assignment = Set.of();

  /**
   * @param consumer the Kafka consumer
   * @param owners the assigned partitions, kept by the poll loop; written here only
   * @param windows where the partitions' windows live
   * @param ownerConfig what every partition owner shares
   * @param commits the offset commits (revocation commits synchronously)
   * @param pauses the paused partitions (a revoked partition is forgotten)
   * @param rebuilds the rebuilds from the source topic (started on assignment, cancelled on revocation)
   * @param health makes the partitions' meters and tracks their health
   * @param groupId the consumer group
   * @param instanceId this consumer's instance id
   * @param assignmentTimeoutMs how long an assignment waits for a window, in milliseconds
   * @param revocationTimeoutMs how long a revocation waits for the owners to drain, in milliseconds
   */
  PartitionAssignment(KafkaConsumer<K, V> consumer, Map<TopicPartition, AssignedPartition<K, V>> owners,
      PartitionWindows windows, OwnerConfig<K, V> ownerConfig, OffsetCommits<K, V> commits, Pauses<K, V> pauses,
      Rebuilds<K, V> rebuilds, ConsumerHealth health, String groupId, String instanceId, long assignmentTimeoutMs,
      long revocationTimeoutMs) {
    this.consumer = consumer;
    this.owners = owners;
    this.windows = windows;
    this.ownerConfig = ownerConfig;
    this.commits = commits;
    this.pauses = pauses;
    this.rebuilds = rebuilds;
    this.health = health;
    this.groupId = groupId;
    this.instanceId = instanceId;
    this.assignmentTimeoutMs = assignmentTimeoutMs;
    this.revocationTimeoutMs = revocationTimeoutMs;
  }

  @Override
  public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
    assign(partitions);
  }

  @Override
  public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
    revoke(partitions, true, "revoked");
  }

  @Override
  public void onPartitionsLost(Collection<TopicPartition> partitions) {
    // Another member may own them already: an offset commit would be refused, so only fence and stop.
    revoke(partitions, false, "lost (another member may own it already)");
  }

  /** @return the partitions this consumer owns now; any thread */
  Set<TopicPartition> assignment() {
    return assignment;
  }

  /** @return the first failure to open a window, or null: the poll loop ends on it */
  RuntimeException windowFailure() {
    return windowFailure;
  }

  /**
   * Ends the rebuilds that finished and starts the retries of failed ones that are due ({@link Rebuilds#collect}); a
   * rebuild that failed leaves its partition unhandled, not the consumer stopped.
   */
  void collectRebuilds() {
    rebuilds.collect();
  }

  /**
   * Revokes every partition this consumer owns: the poll loop ends.
   *
   * @param commit whether the committable offsets are committed first
   */
  void revokeAll(boolean commit) {
    revoke(new ArrayList<>(owners.keySet()), commit, "released (the consumer is stopping)");
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
    Map<TopicPartition, Future<AssignedPartition<K, V>>> starting = new HashMap<>();
    Map<TopicPartition, KafkaMetrics> meters = new HashMap<>();
    long startNanos = System.nanoTime();
    for (TopicPartition tp : fresh) {
      LOG.info("{}: assigned to dedup consumer {} of group {}; opening its window", tp, instanceId, groupId);
      KafkaMetrics metrics = health.assigned(tp);
      meters.put(tp, metrics);
      starting.put(tp, windows.acquire(groupId, tp, instanceId).compose(lease -> {
        metrics.orphanedClaims.increment(lease.releasedClaims());
        health.windowOpened(tp, metrics, lease.partition());
        // The owner runs on its window's event loop and calls the window in-process: no event-bus round trip
        // per decision or commit (docs/kafka.md, "The in-process shortcut").
        PartitionOwner<K, V> owner = new PartitionOwner<>(ownerConfig, tp, lease.partition().context(),
            lease.partition(), metrics);
        return Future.succeededFuture(new AssignedPartition<>(owner, lease));
      }));
    }
    Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new HashSet<>(fresh));
    for (TopicPartition tp : fresh) {
      AssignedPartition<K, V> o;
      try {
        o = await(starting.get(tp), assignmentTimeoutMs, "start the window of " + tp);
      } catch (RuntimeException e) {
        // Keep waiting for the others, so that every owner that did start is known and handed back on the way out.
        // A window that opens after the wait gave up is handed back as soon as it does: nobody else would.
        starting.get(tp).onSuccess(late -> late.owner.stop().eventually(() -> windows.release(late.lease)));
        meters.get(tp).windowOpenFailures.increment();
        health.released(tp, meters.get(tp));
        LOG.error("dedup consumer {}: {}; the consumer stops and leaves the group", instanceId, e.getMessage(),
            e.getCause());
        if (windowFailure == null) {
          windowFailure = e;
        }
        continue;
      }
      owners.put(tp, o);
      OffsetAndMetadata c = committed.get(tp);
      String from;
      if (c != null) {
        o.committed = c.offset();
        consumer.seek(tp, c.offset());
        from = "offset " + c.offset() + " (committed in Kafka)";
      } else if (o.lease.resumeOffset() >= 0) {
        consumer.seek(tp, o.lease.resumeOffset());
        from = "offset " + o.lease.resumeOffset() + " (recorded by the window; Kafka has no committed offset)";
      } else {
        from = "where auto.offset.reset says (no committed offset)";
      }
      logReady(tp, o, (System.nanoTime() - startNanos) / 1_000_000, from);
      // What the store does not cover of the records before Kafka's committed offset is read from the topic while
      // the partition stays paused; the poll loop goes on (docs/kafka.md, "What happens on assignment").
      rebuilds.startIfNeeded(tp, o, c == null ? -1 : c.offset(), meters.get(tp));
    }
    assignment = Set.copyOf(owners.keySet());
  }

  /**
   * Logs the window-ready line of a partition once its window has said how many entries it holds (asked on the
   * window's context, ahead of the partition's first records).
   */
  private void logReady(TopicPartition tp, AssignedPartition<K, V> o, long elapsedMs, String from) {
    int released = o.lease.releasedClaims();
    String claims = released == 0 ? "" : ", released " + released + " claims that " + instanceId
        + " left open when its previous run stopped";
    String window = windows instanceof JournaledPartitionWindows ? "window rebuilt from its journal"
        : "window ready (in memory)";
    o.lease.partition().heldEntries().onComplete(held -> LOG.info("{}: {} in {} ms, {} entries held{}; reading from {}",
        tp, window, elapsedMs, held.succeeded() ? held.result() : "?", claims, from));
  }

  /**
   * Fences, drains and stops the owners of {@code tps} this consumer has, commits their offsets if {@code commit},
   * and hands their windows back; logs one line per partition saying {@code what} happened to it.
   */
  private void revoke(Collection<TopicPartition> tps, boolean commit, String what) {
    List<TopicPartition> mine = new ArrayList<>();
    for (TopicPartition tp : tps) {
      if (owners.containsKey(tp)) {
        mine.add(tp);
      }
    }
    if (mine.isEmpty()) {
      return;
    }
    long startNanos = System.nanoTime();
    rebuilds.cancel(mine, revocationTimeoutMs);
    List<Future<Void>> fences = new ArrayList<>();
    for (TopicPartition tp : mine) {
      PartitionOwner<K, V> owner = owners.get(tp).owner;
      fences.add(owner.fence());
      if (!commit) {
        // No commit follows: a record-first owner's decided records that no commit covers are the next owner's.
        owner.refuseCommits();
      }
    }
    boolean drained = drain(mine, Future.all(fences).mapEmpty(), commit);
    if (!drained) {
      LOG.warn("{} {}: did not drain within revocationTimeoutMs={} ms; what no commit covers is left to the next"
          + " owner (record-first: what a commit covers and no handler has run is lost)", mine, what,
          revocationTimeoutMs);
    }
    long drainMs = (System.nanoTime() - startNanos) / 1_000_000;
    if (commit) {
      commits.commitSync(mine);
    }
    List<Future<?>> stopping = new ArrayList<>();
    for (TopicPartition tp : mine) {
      AssignedPartition<K, V> o = owners.remove(tp);
      health.released(tp, o.owner.metrics());
      LOG.info("{}: {}; {} in {} ms, {}; window handed back", tp, what,
          drained || fences.get(mine.indexOf(tp)).succeeded() ? "drained" : "not drained", drainMs,
          !commit ? "no offset committed" : o.committed >= 0 ? "offset " + o.committed + " committed"
              : "no offset committed yet");
      pauses.forget(tp);
      stopping.add(o.owner.stop().eventually(() -> windows.release(o.lease)));
    }
    assignment = Set.copyOf(owners.keySet());
    try {
      await(Future.all(stopping).mapEmpty(), revocationTimeoutMs, "stop the owners of " + mine);
    } catch (RuntimeException e) {
      LOG.warn("{} {}: stopping their owners failed: {}", mine, what, e.getMessage(), e);
    }
  }

  /**
   * Waits for the fenced owners of {@code tps} to drain, at most {@code revocationTimeoutMs}. With {@code commit}, the
   * member is still in the group's generation: a record-first owner whose decided records wait for a commit
   * ({@link OffsetGate}) gets it here, synchronously, so they are handled before the partition moves; the poll thread
   * looks for such requests every {@value PollLoop#PAUSED_POLL_MS} ms while it waits.
   *
   * @return true if drained in time
   */
  private boolean drain(List<TopicPartition> tps, Future<Void> fenced, boolean commit) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(revocationTimeoutMs);
    CompletableFuture<Void> done = fenced.toCompletionStage().toCompletableFuture();
    while (true) {
      if (commit) {
        commits.commitWantedSync(tps);
      }
      long leftNs = deadline - System.nanoTime();
      if (done.isDone()) {
        return true;
      }
      if (leftNs <= 0) {
        return false;
      }
      try {
        done.get(Math.min(leftNs, TimeUnit.MILLISECONDS.toNanos(PollLoop.PAUSED_POLL_MS)), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting to drain " + tps, e);
      } catch (ExecutionException | TimeoutException e) {
        // A fence never fails; on a timeout, look for wanted commits again.
      }
    }
  }

  /** Blocks the poll thread (never an event loop) until {@code f} completes, at most {@code timeoutMs}. */
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
}
