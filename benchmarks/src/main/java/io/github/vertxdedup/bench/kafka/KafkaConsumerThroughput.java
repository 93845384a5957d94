package io.github.vertxdedup.bench.kafka;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import kafka.testkit.KafkaClusterTestKit;
import kafka.testkit.TestKitNodes;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Records per second through the dedup consumer (both modes) beside a plain Vert.x {@link KafkaConsumer} doing the
 * same handler work, on one in-process KRaft broker, in one JVM and run.
 *
 * <p>The topic is written once: {@code bench.records} records over {@code bench.partitions} partitions, keyed and
 * headed ({@code message-id}) by their id; every tenth record repeats the id of the record 1,001 before it (10 %
 * duplicates, on the same partition). Each scenario reads the whole topic from the start in a new consumer group and
 * is timed from subscribe until every record is through (handled or dropped as a duplicate). The handler work is a
 * credit in a concurrent map; the plain consumer credits duplicates too (it cannot tell them apart).
 *
 * <p>Not a JMH benchmark: the unit of work is a broker round trip, so a main() with rounds in turn is the honest
 * harness. Options: {@code -Dbench.records} (200000), {@code -Dbench.partitions} (4), {@code -Dbench.rounds} (3).
 */
public final class KafkaConsumerThroughput {

  private static final String ID = "message-id";

  private KafkaConsumerThroughput() {}

  /**
   * Runs the scenarios and prints one line per scenario and round.
   *
   * @param args ignored
   * @throws Exception if the broker or a scenario fails
   */
  public static void main(String[] args) throws Exception {
    int records = Integer.getInteger("bench.records", 200_000);
    int partitions = Integer.getInteger("bench.partitions", 4);
    int rounds = Integer.getInteger("bench.rounds", 3);
    Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
    Files.createDirectories(tmp);
    try (KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(
            new TestKitNodes.Builder().setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1).build())
        .setConfigProp("offsets.topic.replication.factor", "1")
        .setConfigProp("offsets.topic.num.partitions", "1")
        .setConfigProp("transaction.state.log.replication.factor", "1")
        .setConfigProp("transaction.state.log.min.isr", "1")
        .setConfigProp("group.initial.rebalance.delay.ms", "0")
        .build()) {
      cluster.format();
      cluster.startup();
      cluster.waitForReadyBrokers();
      String bootstrap = cluster.bootstrapServers();
      String topic = "bench";
      Properties ap = new Properties();
      ap.put("bootstrap.servers", bootstrap);
      try (Admin admin = Admin.create(ap)) {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
      }
      int distinct = produce(bootstrap, topic, records);
      System.out.printf("topic %s: %d records, %d distinct ids, %d partitions%n", topic, records, distinct,
          partitions);
      Vertx vertx = Vertx.vertx();
      try {
        int group = 0;
        for (int round = 1; round <= rounds; round++) {
          for (String scenario : List.of("plain-vertx", "dedup-record-first", "dedup-effect-first")) {
            long ns = switch (scenario) {
              case "plain-vertx" -> plain(vertx, bootstrap, topic, records, "plain-" + group++);
              case "dedup-record-first" -> dedup(vertx, bootstrap, topic, records, distinct, "rf-" + group++,
                  AtomicityMode.RECORD_FIRST);
              default -> dedup(vertx, bootstrap, topic, records, distinct, "ef-" + group++,
                  AtomicityMode.EFFECT_FIRST);
            };
            System.out.printf("round %d %-20s %,12.0f records/s (%.2f s)%n", round, scenario,
                records / (ns / 1e9), ns / 1e9);
          }
        }
      } finally {
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
    }
  }

  private static int produce(String bootstrap, String topic, int records) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("acks", "1");
    p.put("linger.ms", "5");
    p.put("batch.size", "262144");
    int distinct = 0;
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
        new StringSerializer())) {
      for (int i = 0; i < records; i++) {
        // Every tenth record repeats the record 1,001 before it (which is never itself a copy).
        boolean copy = i % 10 == 9 && i >= 1001;
        int idNumber = copy ? i - 1001 : i;
        if (!copy) {
          distinct++;
        }
        String id = "order-" + idNumber;
        ProducerRecord<String, String> r = new ProducerRecord<>(topic, id, "{\"amount\":" + (i % 100) + "}");
        r.headers().add(ID, id.getBytes(StandardCharsets.UTF_8));
        producer.send(r);
      }
      producer.flush();
    }
    return distinct;
  }

  private static Map<String, String> config(String bootstrap, String group) {
    Map<String, String> c = new HashMap<>();
    c.put("bootstrap.servers", bootstrap);
    c.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
    c.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
    c.put("group.id", group);
    c.put("auto.offset.reset", "earliest");
    c.put("max.poll.records", "1000");
    return c;
  }

  private static long plain(Vertx vertx, String bootstrap, String topic, int records, String group)
      throws Exception {
    Map<String, Long> ledger = new ConcurrentHashMap<>();
    CountDownLatch done = new CountDownLatch(1);
    LongAdder seen = new LongAdder();
    Map<String, String> c = config(bootstrap, group);
    c.put("enable.auto.commit", "true");
    KafkaConsumer<String, String> consumer = KafkaConsumer.create(vertx, c);
    consumer.handler(r -> {
      ledger.merge(r.key(), 1L, Long::sum);
      seen.increment();
      if (seen.sum() == records) {
        done.countDown();
      }
    });
    long start = System.nanoTime();
    consumer.subscribe(topic);
    if (!done.await(300, TimeUnit.SECONDS)) {
      throw new IllegalStateException("plain consumer saw " + seen.sum() + " of " + records);
    }
    long ns = System.nanoTime() - start;
    consumer.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    return ns;
  }

  private static long dedup(Vertx vertx, String bootstrap, String topic, int records, int distinct, String group,
      AtomicityMode mode) throws Exception {
    Map<String, Long> ledger = new ConcurrentHashMap<>();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    DedupKafkaOptions options = new DedupKafkaOptions()
        .setDedup(new DedupOptions().setAddress("bench." + group).setWindow(Duration.ofMinutes(10))
            .setPayloadHashes(false))
        .setMode(mode);
    DedupKafkaConsumer<String, String> consumer = DedupKafkaConsumer.<String, String>create(vertx,
            config(bootstrap, group), options)
        .identity(IdentityExtractor.header(ID))
        .handler(r -> {
          ledger.merge(r.key(), 1L, Long::sum);
          return Future.succeededFuture();
        })
        .meterRegistry(registry);
    long start = System.nanoTime();
    consumer.subscribe(topic).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    long deadline = start + TimeUnit.SECONDS.toNanos(300);
    while (settled(registry) < records) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(group + " settled " + settled(registry) + " of " + records);
      }
      Thread.sleep(1);
    }
    long ns = System.nanoTime() - start;
    consumer.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    if (ledger.size() != distinct || ledger.values().stream().anyMatch(v -> v != 1)) {
      throw new IllegalStateException(group + ": ledger holds " + ledger.size() + " ids, expected " + distinct
          + " each credited once");
    }
    return ns;
  }

  private static double settled(SimpleMeterRegistry registry) {
    return registry.find("dedup.kafka.records").counters().stream().mapToDouble(c -> c.count()).sum();
  }
}
