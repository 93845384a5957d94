package io.github.vertxdedup.kafka;

import io.vertx.core.Future;
import java.io.PrintStream;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the consumer child JVMs of the Kafka crash tests ({@link KafkaConsumerChild}, {@link KafkaInboxConsumerChild})
 * share: the group member's Kafka settings, the lines they print for their driver, and their life until killed.
 * Thread-safe: lines are printed whole, from any thread.
 */
final class ChildConsole {

  private final PrintStream out;
  private final AtomicLong effects = new AtomicLong();

  /** @param out where the driver reads the lines (the child's standard output) */
  ChildConsole(PrintStream out) {
    this.out = out;
  }

  /**
   * The Kafka settings of a crash test's member: static membership and the broker's minimum session timeout (6 s),
   * so that the group gives a killed member's partitions to another member soon and a restarted member takes its own
   * back without a rebalance; 100 records a poll; String keys and values.
   *
   * @param bootstrap the broker's bootstrap servers
   * @param group the group id
   * @param instanceId the static member id
   * @return the consumer config
   */
  static Map<String, String> memberConfig(String bootstrap, String group, String instanceId) {
    return Map.of(
        "bootstrap.servers", bootstrap,
        "group.id", group,
        "group.instance.id", instanceId,
        "session.timeout.ms", "6000",
        "heartbeat.interval.ms", "500",
        "auto.offset.reset", "earliest",
        "max.poll.records", "100",
        "key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer",
        "value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
  }

  /** @param text one whole line for the driver */
  void line(String text) {
    synchronized (out) {
      out.println(text);
      out.flush();
    }
  }

  /** Counts an applied effect; every 100th prints {@code effects N}. */
  void effect() {
    long n = effects.incrementAndGet();
    if (n % 100 == 0) {
      line("effects " + n);
    }
  }

  /**
   * @param <K> the record key type
   * @param <V> the record value type
   * @return a dead-letter handler that prints {@code dead-letter <letter>} and succeeds
   */
  <K, V> DeadLetterHandler<K, V> deadLetters() {
    return d -> {
      line("dead-letter " + d);
      return Future.succeededFuture();
    };
  }

  /**
   * Subscribes, prints {@code subscribed}, and waits until the driver kills this process. SIGTERM (the driver's last
   * stop, not its kills) closes the consumer: it drains, so the handlers of the records whose offsets it committed
   * run before it leaves.
   *
   * @param consumer the child's consumer, not subscribed yet
   * @param topic the topic
   * @throws Exception if the subscription fails or does not complete within 60 s
   */
  void runUntilKilled(DedupKafkaConsumer<?, ?> consumer, String topic) throws Exception {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        consumer.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      } catch (Exception e) {
        e.printStackTrace();
      }
    }));
    consumer.subscribe(Set.of(topic)).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    line("subscribed");
    Thread.currentThread().join();
  }
}
