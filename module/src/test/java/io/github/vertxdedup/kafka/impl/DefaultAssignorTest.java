package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Vertx;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The assignor of {@code create}'s consumer: cooperative unless the Kafka config names one. */
class DefaultAssignorTest {

  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private Map<String, Object> configOf(Map<String, String> kafkaConfig) {
    return new DedupKafkaConsumerImpl<String, String>(vertx, kafkaConfig, new DedupKafkaOptions().setDedup(new DedupOptions().setWindowMs(60_000)),
        new ManualClock(0)).config;
  }

  @Test
  void shouldUseTheCooperativeStickyAssignorWhenTheConfigNamesNone() {
    Map<String, String> c = new HashMap<>(Map.of("group.id", "g"));
    assertThat(configOf(c).get(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG))
        .isEqualTo(CooperativeStickyAssignor.class.getName());
    assertThat(c).doesNotContainKey(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG); // the caller's map is left
  }

  @Test
  void shouldKeepTheAssignorTheConfigNames() {
    Map<String, String> c = Map.of("group.id", "g",
        ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, RangeAssignor.class.getName());
    assertThat(configOf(c).get(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG))
        .isEqualTo(RangeAssignor.class.getName());
  }
}
