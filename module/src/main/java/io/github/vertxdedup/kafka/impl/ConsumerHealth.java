package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.impl.service.PartitionState;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.Status;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;

/**
 * The partitions a consumer has taken, as its health sees them: each one's meters ({@link KafkaMetrics}, made here,
 * so that every partition the drivers take is known), its window once the store handed it over, and through the
 * meters' object the state of its rebuilds. Both drivers ({@link PartitionAssignment}, {@link WrappedAssignment})
 * report to it: {@link #assigned} when a partition arrives, {@link #windowOpened} when its window is ready,
 * {@link #released} when it leaves.
 *
 * <p>A partition is healthy when its window answers ({@link PartitionState#READY}: its journal, if any, replayed and
 * writable) and no rebuild of it from Kafka runs or has failed since the last one that succeeded; until then its
 * records wait. {@link #status} is {@code OK} when every partition taken is healthy.
 *
 * <p>Thread-safe: the drivers write from the poll thread or the wrapped consumer's context, {@link #status} reads
 * from any thread.
 */
final class ConsumerHealth {

  /** A partition's state in {@link #status}, beside the window's own states. */
  static final String OPENING = "OPENING";
  static final String REBUILDING = "REBUILDING";
  static final String REBUILD_FAILED = "REBUILD_FAILED";

  private final MeterRegistry registry;
  private final String groupId;
  private final Map<TopicPartition, Entry> partitions = new ConcurrentHashMap<>();

  /** One partition taken: its meters, and its window once ready. */
  private static final class Entry {
    final KafkaMetrics metrics;
    volatile LocalPartition window;

    Entry(KafkaMetrics metrics) {
      this.metrics = metrics;
    }
  }

  /**
   * @param registry where the partitions' meters are registered
   * @param groupId the consumer group
   */
  ConsumerHealth(MeterRegistry registry, String groupId) {
    this.registry = registry;
    this.groupId = groupId;
  }

  /**
   * A partition arrives: makes its meters and tracks it as opening its window.
   *
   * @param tp the partition
   * @return its meters
   */
  KafkaMetrics assigned(TopicPartition tp) {
    KafkaMetrics metrics = new KafkaMetrics(registry, groupId, tp.topic(), tp.partition());
    partitions.put(tp, new Entry(metrics));
    return metrics;
  }

  /**
   * The partition's window is ready: from now on its state is the window's and its rebuilds'.
   *
   * @param tp the partition
   * @param metrics its meters, as {@link #assigned} returned them (a later assignment's entry is left alone)
   * @param window its window
   */
  void windowOpened(TopicPartition tp, KafkaMetrics metrics, LocalPartition window) {
    Entry e = partitions.get(tp);
    if (e != null && e.metrics == metrics) {
      e.window = window;
    }
  }

  /**
   * The partition left (revoked, lost, released, or its window failed to open).
   *
   * @param tp the partition
   * @param metrics its meters, as {@link #assigned} returned them (a later assignment's entry is left alone)
   */
  void released(TopicPartition tp, KafkaMetrics metrics) {
    partitions.computeIfPresent(tp, (k, e) -> e.metrics == metrics ? null : e);
  }

  /**
   * The partitions' health: {@code OK} if every partition taken is healthy (none taken included), else {@code KO}.
   * Its data: {@code partitions}, an object with one entry per partition, {@code <topic>-<partition>}, holding its
   * {@code state} ({@value #OPENING}, a window's {@link PartitionState} name, {@value #REBUILDING},
   * {@value #REBUILD_FAILED}, or {@code READY}) and, when known, a {@code failure}.
   *
   * @param data the consumer's own fields, completed here
   * @return the status
   */
  Status status(JsonObject data) {
    JsonObject states = new JsonObject();
    boolean ok = true;
    Map.Entry<TopicPartition, Entry>[] taken = partitions.entrySet().toArray(new Map.Entry[0]);
    java.util.Arrays.sort(taken, Comparator.comparing((Map.Entry<TopicPartition, Entry> e) -> e.getKey().topic())
        .thenComparingInt(e -> e.getKey().partition()));
    for (Map.Entry<TopicPartition, Entry> t : taken) {
      JsonObject p = state(t.getValue());
      ok &= "READY".equals(p.getString("state"));
      states.put(t.getKey().toString(), p);
    }
    data.put("partitions", states);
    return ok ? Status.OK(data) : Status.KO(data);
  }

  private static JsonObject state(Entry e) {
    LocalPartition w = e.window;
    if (w == null) {
      return new JsonObject().put("state", OPENING);
    }
    PartitionState s = w.state();
    if (s != PartitionState.READY) {
      JsonObject p = new JsonObject().put("state", s.name());
      return w.failure().isEmpty() ? p : p.put("failure", w.failure());
    }
    String rebuildFailure = e.metrics.rebuildFailure();
    if (e.metrics.rebuilding()) {
      JsonObject p = new JsonObject().put("state", REBUILDING);
      return rebuildFailure == null ? p : p.put("failure", rebuildFailure);
    }
    if (rebuildFailure != null) {
      return new JsonObject().put("state", REBUILD_FAILED).put("failure", rebuildFailure);
    }
    return new JsonObject().put("state", "READY");
  }
}
