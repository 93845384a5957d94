package io.github.vertxdedup.examples.kafka;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Kafka side of the examples: publishing {@code payment.succeeded} events with producer-side duplicates, the
 * consumer config, and waiting until a group has consumed a topic. Plain Kafka clients, called from {@code main}
 * threads (they block; never call them on an event loop).
 */
public final class Payments {

  /** The header that carries a payment's id (the record key carries it too). */
  public static final String MESSAGE_ID = "message-id";

  private Payments() {}

  /**
   * What {@link #publish} sent.
   *
   * @param records records sent, copies included
   * @param distinctIds distinct payment ids sent
   */
  public record Published(int records, int distinctIds) {}

  /**
   * Publishes payments {@code pay-0 .. pay-<count-1>}, each keyed by its id (so every copy lands on the partition of
   * the first) with the id in the {@code message-id} header and the value {@code {"paymentId":..,"amountCents":..}}.
   * With probability {@code duplicateRate} a payment is sent once more, right after the first copy, as a producer
   * retry after a lost acknowledgement would send it. Blocks until the broker has acknowledged every record.
   *
   * @param bootstrapServers the cluster
   * @param topic the topic
   * @param count payments, at least 1
   * @param duplicateRate 0.0 .. 1.0
   * @param seed the seed of the random choice of copies (same seed, same records)
   * @return the records and distinct ids sent
   * @throws IllegalArgumentException if {@code count} or {@code duplicateRate} is out of range
   * @throws IllegalStateException if the broker did not acknowledge a record (the message counts them and gives the
   *     first failure): what the caller then reads from the topic is not what this method says it sent
   */
  public static Published publish(String bootstrapServers, String topic, int count, double duplicateRate, long seed) {
    return publish(bootstrapServers, topic, 0, count, duplicateRate, seed);
  }

  /**
   * As {@link #publish(String, String, int, double, long)}, with the payments {@code pay-<firstId> ..
   * pay-<firstId+count-1>}: a program that publishes batch after batch gives each its own ids.
   *
   * @param bootstrapServers the cluster
   * @param topic the topic
   * @param firstId the number of the first payment, at least 0
   * @param count payments, at least 1
   * @param duplicateRate 0.0 .. 1.0
   * @param seed the seed of the random choice of copies
   * @return the records and distinct ids sent
   * @throws IllegalArgumentException if {@code firstId}, {@code count} or {@code duplicateRate} is out of range
   * @throws IllegalStateException as {@link #publish(String, String, int, double, long)}
   */
  public static Published publish(String bootstrapServers, String topic, int firstId, int count,
      double duplicateRate, long seed) {
    if (firstId < 0) {
      throw new IllegalArgumentException("firstId must be at least 0 but was " + firstId);
    }
    if (count < 1) {
      throw new IllegalArgumentException("count must be at least 1 but was " + count);
    }
    if (!(duplicateRate >= 0.0 && duplicateRate <= 1.0)) {
      throw new IllegalArgumentException("duplicateRate must be in [0, 1] but was " + duplicateRate);
    }
    SplittableRandom random = new SplittableRandom(seed);
    int records = 0;
    List<Future<RecordMetadata>> sends = new ArrayList<>();
    try (KafkaProducer<String, String> producer = producer(bootstrapServers)) {
      for (int i = firstId; i < firstId + count; i++) {
        String id = "pay-" + i;
        String value = "{\"paymentId\":\"" + id + "\",\"amountCents\":" + (100 + i % 9_900) + "}";
        int copies = random.nextDouble() < duplicateRate ? 2 : 1;
        for (int c = 0; c < copies; c++) {
          sends.add(producer.send(record(topic, id, value)));
          records++;
        }
      }
      producer.flush();
    }
    requireAcknowledged(sends, topic);
    return new Published(records, count);
  }

  /**
   * Publishes one record with an id that was already used and another value: not a redelivery but an identity
   * conflict (the same id with another payload: an id reused for another event, which must be looked at, not dropped).
   *
   * @param bootstrapServers the cluster
   * @param topic the topic
   * @param id the reused id
   * @param amountCents the new amount
   * @throws IllegalStateException if the broker did not acknowledge the record
   */
  public static void publishConflict(String bootstrapServers, String topic, String id, long amountCents) {
    Future<RecordMetadata> send;
    try (KafkaProducer<String, String> producer = producer(bootstrapServers)) {
      send = producer.send(record(topic, id, "{\"paymentId\":\"" + id + "\",\"amountCents\":" + amountCents
          + "}"));
      producer.flush();
    }
    requireAcknowledged(List.of(send), topic);
  }

  /** Fails with the count of unacknowledged records and the first cause; the sends are complete (flushed). */
  private static void requireAcknowledged(List<Future<RecordMetadata>> sends, String topic) {
    int failed = 0;
    Throwable first = null;
    for (Future<RecordMetadata> send : sends) {
      try {
        send.get();
      } catch (ExecutionException e) {
        failed++;
        first = first == null ? e.getCause() : first;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while checking the sends to " + topic, e);
      }
    }
    if (failed > 0) {
      throw new IllegalStateException(failed + " of " + sends.size() + " records were not acknowledged by the broker"
          + " (topic " + topic + "); first: " + first, first);
    }
  }

  /**
   * The consumer config of the examples: string keys and values, read from the start of the topic.
   *
   * @param bootstrapServers the cluster
   * @param group the consumer group (each group has its own dedup windows)
   * @return a new mutable map
   */
  public static Map<String, String> consumerConfig(String bootstrapServers, String group) {
    // tag::kafka-config[]
    Map<String, String> config = new HashMap<>();
    config.put("bootstrap.servers", bootstrapServers);
    config.put("group.id", group);                      // windows are per group: <journalDir>/<group>/<topic>-<p>
    config.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
    config.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
    config.put("auto.offset.reset", "earliest");         // enable.auto.commit stays off: the consumer commits
    // end::kafka-config[]
    return config;
  }

  /**
   * Waits until the group's committed offsets reach the end of every partition of the topic: every record,
   * duplicates included, has been handled or dropped. Polls the broker every 100 ms.
   *
   * @param bootstrapServers the cluster
   * @param group the consumer group
   * @param topic the topic
   * @param timeout how long to wait at most
   * @param consumerFailure the consumer's failure once it stopped on an error (its exception handler's argument),
   *     else {@code null}; checked on every poll so that a dead consumer ends the wait at once
   * @throws TimeoutException if the group has not caught up within {@code timeout}
   * @throws IllegalStateException if the consumer stopped on an error before the group caught up
   * @throws Exception if the broker does not answer
   */
  public static void awaitConsumed(String bootstrapServers, String group, String topic, Duration timeout,
      Supplier<Throwable> consumerFailure) throws Exception {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    long deadline = System.nanoTime() + timeout.toNanos();
    try (Admin admin = Admin.create(p)) {
      List<TopicPartition> partitions = admin.describeTopics(List.of(topic)).allTopicNames()
          .get(30, TimeUnit.SECONDS).get(topic).partitions().stream()
          .map(info -> new TopicPartition(topic, info.partition())).collect(Collectors.toList());
      Map<TopicPartition, Long> end = new HashMap<>();
      admin.listOffsets(partitions.stream().collect(Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest())))
          .all().get(30, TimeUnit.SECONDS).forEach((tp, info) -> end.put(tp, info.offset()));
      while (true) {
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
            .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        boolean caughtUp = end.entrySet().stream().allMatch(e -> {
          OffsetAndMetadata c = committed.get(e.getKey());
          return e.getValue() == 0 || (c != null && c.offset() >= e.getValue());
        });
        if (caughtUp) {
          return;
        }
        Throwable failure = consumerFailure.get();
        if (failure != null) {
          throw new IllegalStateException("the consumer of group " + group + " stopped before it consumed " + topic
              + ": " + failure.getMessage(), failure);
        }
        if (System.nanoTime() > deadline) {
          throw new TimeoutException("group " + group + " has not consumed " + topic + " within " + timeout
              + ": committed " + committed + ", end " + end);
        }
        Thread.sleep(100);
      }
    }
  }

  /**
   * A payload hash for {@code IdentityExtractor.withPayloadHash}: hex SHA-256 of the UTF-8 bytes of a value.
   *
   * @param value the record value (its canonical form: the producer must serialise a payload the same way each time)
   * @return 64 hex digits
   */
  public static String sha256(String value) {
    try {
      return java.util.HexFormat.of().formatHex(
          MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  private static KafkaProducer<String, String> producer(String bootstrapServers) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    // A record the broker cannot take fails after 35 s instead of the default two minutes (publish then says so);
    // the client requires at least linger.ms + request.timeout.ms (5 + 30,000).
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "35000");
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }

  private static ProducerRecord<String, String> record(String topic, String id, String value) {
    // tag::keyed-record[]
    ProducerRecord<String, String> record = new ProducerRecord<>(topic, id, value);   // key = id: one partition
    record.headers().add("message-id", id.getBytes(StandardCharsets.UTF_8));         // the same id on every copy
    // end::keyed-record[]
    return record;
  }
}
