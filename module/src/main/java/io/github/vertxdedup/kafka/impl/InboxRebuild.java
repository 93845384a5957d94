package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.inbox.InboxRow;
import io.github.vertxdedup.time.DedupClock;
import io.micrometer.core.instrument.LongTaskTimer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link io.github.vertxdedup.kafka.AtomicityMode#INBOX}: rebuilds a newly assigned partition's window from the inbox
 * table, the mode's durable memory. Its live rows are exactly the ids whose effects committed (a rolled-back
 * transaction leaves none), each with its own remember-until, so the window learns every id the database would call a
 * duplicate, without reading the source topic. The rows are read in pages of {@code maxBatch} (keyset order
 * {@code (first_seen_ms, event_id)}, so a page costs one indexed range read) and put into the window as checks with
 * their remember-until ({@link WindowRestore}); a row that expires meanwhile is left out. The partition stays paused
 * until the rebuild ends; a failure (the database unreachable) is retried by {@link Rebuilds} every
 * {@code backoffMaxMs}, the partition unhandled meanwhile. The window is a filter: whatever it misses, the inbox's
 * unique key still decides.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class InboxRebuild<K, V> extends WindowRebuild<Long> {

  private static final Logger LOG = LoggerFactory.getLogger(DedupKafkaConsumerImpl.class);

  private final InboxCalls<K, V> inbox;
  private final DedupClock clock;
  private final int pageSize;
  private final KafkaMetrics metrics;
  private final WindowRestore<InboxRow> restore;

  /**
   * @param tp the partition
   * @param inbox the inbox
   * @param partition the partition's window, ready
   * @param clock the clock of the windows
   * @param pageSize rows per page and per check batch ({@code dedup.maxBatch})
   * @param metrics the partition's meters ({@code dedup.kafka.rebuild.*})
   */
  InboxRebuild(TopicPartition tp, InboxCalls<K, V> inbox, LocalPartition partition, DedupClock clock, int pageSize,
      KafkaMetrics metrics) {
    super(tp, "dedup-inbox-rebuild-" + tp);
    this.inbox = inbox;
    this.clock = clock;
    this.pageSize = pageSize;
    this.metrics = metrics;
    this.restore = new WindowRestore<>(partition, this::events, this::cancelled, metrics, "restored");
  }

  /** The checks of a page's rows that are still live now, each remembered until its row's remember-until. */
  private List<DedupEvent> events(List<InboxRow> rows) {
    long now = clock.nowMs();
    List<DedupEvent> events = new ArrayList<>(rows.size());
    for (InboxRow row : rows) {
      if (row.rememberUntilMs() > now) {
        events.add(new DedupEvent(row.id()).setKey(row.businessKey()).setPayloadHash(row.payloadHash())
            .setRememberUntilMs(row.rememberUntilMs()));
      }
    }
    return events;
  }

  @Override
  void run() {
    long startedNs = System.nanoTime();
    LongTaskTimer.Sample running = metrics.rebuildsInProgress.start();
    long rows = 0;
    try {
      InboxRow after = null;
      while (!cancelled()) {
        List<InboxRow> page = inbox.liveRows(tp, after, pageSize).toCompletionStage().toCompletableFuture()
            .get(PartitionRebuild.CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        if (!page.isEmpty()) {
          restore.send(page);
          rows += page.size();
          after = page.get(page.size() - 1);
        }
        if (page.size() < pageSize) {
          break;
        }
      }
      restore.drain();
      long durationMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNs);
      metrics.rebuildDuration.record(durationMs, TimeUnit.MILLISECONDS);
      LOG.info("{}: window {} from the inbox table in {} ms: {} live rows read, {} ids restored", tp,
          cancelled() ? "rebuild cancelled" : "rebuilt", durationMs, rows, restore.restoredIds());
      done.complete(restore.restoredIds());
    } catch (Throwable e) {
      metrics.rebuildFailures.increment();
      done.completeExceptionally(new IllegalStateException("failed to rebuild the window of " + tp
          + " from the inbox table: " + e, e));
    } finally {
      running.stop();
    }
  }
}
