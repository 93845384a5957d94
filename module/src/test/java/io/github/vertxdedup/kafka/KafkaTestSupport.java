package io.github.vertxdedup.kafka;

import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.kafka.testkit.LocalKafka;
import io.github.vertxdedup.kafka.testkit.LocalKafkaExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A broker-side toolkit for the consumer tests: a {@link LocalKafka} broker, a producer with message-id headers,
 * committed offsets, a ledger. A JUnit 5 extension: register it on a static field
 * ({@code @RegisterExtension static final KafkaTestSupport broker = new KafkaTestSupport();}); it starts the broker,
 * the producer and the admin client before the class's first test and closes them after its last.
 */
final class KafkaTestSupport implements BeforeAllCallback, AfterAllCallback {

  static final String MESSAGE_ID = "message-id";

  private final LocalKafkaExtension kafka = new LocalKafkaExtension(1);
  private KafkaProducer<String, String> producer;
  /** Sends the producer gave up on and no check has reported yet. */
  private final Queue<Exception> sendFailures = new ConcurrentLinkedQueue<>();
  private Admin admin;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    kafka.beforeAll(context);
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    // A send the broker never accepts fails after 30 s instead of the default 120 s, so the test names it sooner
    // (the request timeout stays at its default, 30 s, the most that setting allows beside this one).
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
    producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    Properties a = new Properties();
    a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    admin = Admin.create(a);
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    try {
      if (producer != null) {
        producer.close(Duration.ofSeconds(5));
      }
      if (admin != null) {
        admin.close(Duration.ofSeconds(5));
      }
    } finally {
      kafka.afterAll(context); // the broker stops even if a client failed to start or to close
    }
  }

  /** @return the admin client of the broker; closed after the class's last test */
  Admin admin() {
    return admin;
  }

  /** @return the broker's {@code bootstrap.servers} */
  String bootstrapServers() {
    return kafka.bootstrapServers();
  }

  /** Creates a topic on the broker, as {@link LocalKafka#createTopic(String, int)}. */
  void createTopic(String topic, int partitions) throws Exception {
    kafka.createTopic(topic, partitions);
  }

  /** Consumer config: earliest, short session (6 s, the broker's minimum), dynamic membership. */
  Map<String, String> consumerConfig(String group) {
    Map<String, String> c = new HashMap<>();
    c.put("bootstrap.servers", kafka.bootstrapServers());
    c.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
    c.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
    c.put("group.id", group);
    c.put("auto.offset.reset", "earliest");
    c.put("session.timeout.ms", "6000");
    c.put("heartbeat.interval.ms", "500");
    c.put("max.poll.records", "500");
    return c;
  }

  /** Sends a record keyed by its id (so copies land on one partition) with the id in the message-id header. */
  void send(String topic, String id, String value) {
    ProducerRecord<String, String> r = new ProducerRecord<>(topic, id, value);
    if (id != null) {
      r.headers().add(MESSAGE_ID, id.getBytes(StandardCharsets.UTF_8));
    }
    producer.send(r, this::sent);
  }

  /** As {@link #send}, to partition {@code partition}; a null {@code id} sends a record without key or header. */
  void send(String topic, int partition, String id, String value) {
    ProducerRecord<String, String> r = new ProducerRecord<>(topic, partition, id, value);
    if (id != null) {
      r.headers().add(MESSAGE_ID, id.getBytes(StandardCharsets.UTF_8));
    }
    producer.send(r, this::sent);
  }

  /** As {@link #send}, with the record's timestamp (its create time) set to {@code timestampMs}. */
  void sendAt(String topic, String id, String value, long timestampMs) {
    ProducerRecord<String, String> r = new ProducerRecord<>(topic, null, timestampMs, id, value);
    r.headers().add(MESSAGE_ID, id.getBytes(StandardCharsets.UTF_8));
    producer.send(r, this::sent);
  }

  /** Sends a record to a partition without any identity. */
  void sendWithoutId(String topic, String key, String value) {
    producer.send(new ProducerRecord<>(topic, key, value), this::sent);
  }

  /**
   * Records a send the producer gave up on (its delivery timeout passed): a test that waits for records would
   * otherwise wait out its own limit without saying why.
   */
  private void sent(RecordMetadata metadata, Exception failure) {
    if (failure != null) {
      sendFailures.add(failure);
    }
  }

  /**
   * Fails at once if a send failed since the last check, and forgets those failures: each is reported once, by the
   * test that flushed or waited for its records (each test uses topics of its own), so that a rerun of that test, or
   * the next test, starts clean.
   */
  void requireNoFailedSend() {
    List<Exception> failed = new ArrayList<>();
    Exception e;
    while ((e = sendFailures.poll()) != null) {
      failed.add(e);
    }
    if (!failed.isEmpty()) {
      throw new AssertionError(failed.size() + " record(s) could not be sent to the test broker; first: "
          + failed.get(0), failed.get(0));
    }
  }

  /** Waits until every record sent so far is acknowledged (or failed), then fails if any send failed. */
  void flush() {
    producer.flush();
    requireNoFailedSend();
  }

  /** @return the sum of the group's committed offsets over the topic's partitions */
  long committed(String group, String topic) throws Exception {
    Map<TopicPartition, OffsetAndMetadata> m = admin.listConsumerGroupOffsets(group)
        .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
    long sum = 0;
    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : m.entrySet()) {
      if (e.getKey().topic().equals(topic) && e.getValue() != null) {
        sum += e.getValue().offset();
      }
    }
    return sum;
  }

  /**
   * Waits until the group's committed offsets over the topic add up to {@code total}. On timeout the failure names,
   * per partition, the group's committed offset and the topic's end offset, and the group's state: whether the
   * records were missing from the broker, unread, or read but not committed.
   */
  void awaitCommitted(String group, String topic, long total) {
    try {
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
          .until(() -> {
            requireNoFailedSend();
            return committed(group, topic) == total;
          });
    } catch (ConditionTimeoutException e) {
      throw new AssertionError("committed offsets of group " + group + " on " + topic + " did not reach " + total
          + " within 60 s: " + offsetsReport(group, topic), e);
    }
  }

  /** Committed and end offsets per partition of the topic, and the group's state, for a failure message. */
  private String offsetsReport(String group, String topic) {
    try {
      Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
          .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
      int partitions = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic)
          .partitions().size();
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      for (int p = 0; p < partitions; p++) {
        latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
      }
      Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = admin.listOffsets(latest).all()
          .get(10, TimeUnit.SECONDS);
      StringBuilder b = new StringBuilder();
      for (int p = 0; p < partitions; p++) {
        TopicPartition tp = new TopicPartition(topic, p);
        OffsetAndMetadata c = committed.get(tp);
        b.append(tp).append(" committed ").append(c == null ? "none" : c.offset()).append(" end ")
            .append(ends.get(tp).offset()).append("; ");
      }
      b.append("group state ").append(admin.describeConsumerGroups(List.of(group)).all().get(10, TimeUnit.SECONDS)
          .get(group).state());
      return b.toString();
    } catch (Exception e) {
      return "(offsets not available: " + e + ")";
    }
  }

  /** @return how many members the group has now (0 once every consumer of it has left) */
  int members(String group) throws Exception {
    return admin.describeConsumerGroups(List.of(group)).all().get(10, TimeUnit.SECONDS).get(group).members().size();
  }

  /** Moves the (empty) group's committed offsets of the topic back to 0. */
  void rewind(String group, String topic, int partitions) throws Exception {
    rewind(group, topic, partitions, 0);
  }

  /** Moves the (empty) group's committed offsets of the topic's partitions back to {@code offset}. */
  void rewind(String group, String topic, int partitions, long offset) throws Exception {
    Map<TopicPartition, OffsetAndMetadata> zero = new HashMap<>();
    for (int p = 0; p < partitions; p++) {
      zero.put(new TopicPartition(topic, p), new OffsetAndMetadata(offset));
    }
    await().atMost(Duration.ofSeconds(60)).ignoreExceptions().pollInterval(Duration.ofMillis(100)).until(() -> {
      admin.alterConsumerGroupOffsets(group, zero).all().get(10, TimeUnit.SECONDS);
      return true;
    });
  }

  /** Deletes the (empty) group, and with it every offset it committed to Kafka. */
  void deleteGroup(String group) {
    await().atMost(Duration.ofSeconds(60)).ignoreExceptions().pollInterval(Duration.ofMillis(100)).until(() -> {
      admin.deleteConsumerGroups(java.util.List.of(group)).all().get(10, TimeUnit.SECONDS);
      return true;
    });
  }

  static double count(MeterRegistry registry, String name) {
    return registry.find(name).counters().stream().mapToDouble(c -> c.count()).sum();
  }

  /** What the handler applied: credits per id. */
  static final class Ledger {
    final Map<String, AtomicInteger> credits = new ConcurrentHashMap<>();

    Future<Void> credit(String id) {
      credits.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
      return Future.succeededFuture();
    }

    int size() {
      return credits.size();
    }

    /**
     * Waits until {@code ids} distinct ids were credited. In record-first mode the group's committed offset runs ahead
     * of the handlers by the run being handled, so a test that waited for a committed offset waits for this too
     * before it counts what was applied.
     *
     * @param ids how many distinct ids
     */
    void awaitSize(int ids) {
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).until(() -> size() >= ids);
    }

    /** @return handler calls over every id */
    int total() {
      return credits.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    Map<String, Integer> creditedMoreThanOnce() {
      Map<String, Integer> m = new HashMap<>();
      credits.forEach((k, v) -> {
        if (v.get() > 1) {
          m.put(k, v.get());
        }
      });
      return m;
    }
  }
}
