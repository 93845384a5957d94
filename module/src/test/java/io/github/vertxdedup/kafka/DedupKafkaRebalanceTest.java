package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaTestSupport.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.kafka.KafkaMachines.Running;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Rebalances of {@code create}'s consumer under its default assignor, Kafka's {@code CooperativeStickyAssignor}: a
 * member that joins takes only the partitions that move to it; the others stay with their owner, window and all,
 * through the rebalance. Two "machines" are two Vert.x instances with journal directories of their own.
 */
class DedupKafkaRebalanceTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  @RegisterExtension
  final KafkaMachines machines = new KafkaMachines(broker, "test.kafka.rebalance");

  /** The rebuilds each partition's window went through on one machine. */
  private static long rebuilds(Running r, TopicPartition tp) {
    return r.registry().find("dedup.kafka.rebuild.duration").tag("topic", tp.topic())
        .tag("partition", Integer.toString(tp.partition())).timers().stream().mapToLong(Timer::count).sum();
  }

  @Test
  void shouldKeepTheRetainedPartitionsOwnedAndRebuildOnlyTheMovedOnesWhenASecondConsumerJoins() throws Exception {
    String topic = "rebalance-join";
    String group = "g-rebalance-join";
    broker.createTopic(topic, 4);
    KafkaTestSupport.Ledger ledger = new KafkaTestSupport.Ledger();
    // The machines' config (KafkaTestSupport.consumerConfig) names no assignor.
    Running a = machines.start(group, topic, AtomicityMode.EFFECT_FIRST, "A", ledger);
    machines.publish(topic, 0, 400);
    broker.awaitCommitted(group, topic, 400);
    assertThat(a.consumer().assignment()).hasSize(4);
    // One partition verticle per window on machine A.
    Set<String> windowsBefore = Set.copyOf(a.vertx().deploymentIDs());
    assertThat(windowsBefore).hasSize(4);

    Running b = machines.start(group, topic, AtomicityMode.EFFECT_FIRST, "B", ledger);
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
        .until(() -> a.consumer().assignment().size() == 2 && b.consumer().assignment().size() == 2);
    Set<TopicPartition> kept = Set.copyOf(a.consumer().assignment());
    Set<TopicPartition> moved = Set.copyOf(b.consumer().assignment());

    // The producer publishes every id again under new offsets, and some new ones.
    machines.publish(topic, 0, 400);
    machines.publish(topic, 400, 420);
    broker.awaitCommitted(group, topic, 820);

    assertThat(ledger.size()).isEqualTo(420);
    assertThat(ledger.creditedMoreThanOnce()).isEmpty();
    // A kept the windows of the partitions it retained: none was handed back and opened again, none rebuilt.
    assertThat(a.consumer().assignment()).isEqualTo(kept);
    assertThat(windowsBefore).containsAll(a.vertx().deploymentIDs());
    assertThat(a.vertx().deploymentIDs()).hasSize(2);
    for (TopicPartition tp : kept) {
      assertThat(rebuilds(a, tp)).as("rebuilds of %s on A", tp).isZero();
    }
    // B rebuilt each partition that moved to it, once, and dropped their re-published ids.
    for (TopicPartition tp : moved) {
      assertThat(rebuilds(b, tp)).as("rebuilds of %s on B", tp).isEqualTo(1);
    }
    assertThat(count(b.registry(), "dedup.kafka.rebuild.ids")).isPositive()
        .isEqualTo(count(b.registry(), "dedup.kafka.duplicates"));
    assertThat(count(a.registry(), "dedup.kafka.duplicates") + count(b.registry(), "dedup.kafka.duplicates"))
        .isEqualTo(400);
  }
}
