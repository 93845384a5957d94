package io.github.vertxdedup.examples.kafka;

import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * Runs one example consumer until its group has consumed the topic, then closes it and counts the outcome. Shared
 * by the two Kafka examples so that each shows only its consumer. Blocks the calling thread (a {@code main} or test
 * thread, never an event loop).
 */
final class ConsumerRun {

  private ConsumerRun() {}

  /**
   * @param bootstrapServers the cluster
   * @param topic the topic, already published
   * @param group the consumer group
   * @param records records on the topic, copies included
   * @param distinctIds distinct ids on the topic
   * @param applied how many distinct ids the handler has applied so far
   * @param repeated the ids it applied more than once, with their counts
   * @param deadLetters how many records went to the dead-letter handler so far
   * @param factory builds the consumer from a Vert.x instance and the Kafka config
   * @return the counts
   * @throws Exception if the consumer cannot subscribe, stops on an error (a window it cannot open), or the group has
   *     not consumed the topic within 2 minutes
   */
  static RunSummary consume(String bootstrapServers, String topic, String group, int records, int distinctIds,
      IntSupplier applied, Supplier<Map<String, Integer>> repeated, IntSupplier deadLetters,
      BiFunction<Vertx, java.util.Map<String, String>, DedupKafkaConsumer<String, String>> factory) throws Exception {
    Vertx vertx = Vertx.vertx();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try {
      AtomicReference<Throwable> failure = new AtomicReference<>();
      DedupKafkaConsumer<String, String> consumer = factory
          .apply(vertx, Payments.consumerConfig(bootstrapServers, group))
          .meterRegistry(registry)
          .exceptionHandler(failure::set);   // the consumer stopped: a window it could not open, a poll-thread error
      consumer.subscribe(topic).await();
      Payments.awaitConsumed(bootstrapServers, group, topic, Duration.ofMinutes(2), failure::get);
      consumer.close().await();
      long dropped = (long) registry.find("dedup.kafka.duplicates").counters().stream()
          .mapToDouble(c -> c.count()).sum();
      return new RunSummary(records, distinctIds, applied.getAsInt(), repeated.get(), dropped,
          deadLetters.getAsInt());
    } finally {
      vertx.close().await();
    }
  }
}
