package io.github.vertxdedup.kafka;

import io.github.vertxdedup.kafka.impl.DedupKafkaConsumerImpl;
import io.github.vertxdedup.time.DedupClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * An idempotent Kafka consumer: every record's identity is checked against a dedup window before its handler runs,
 * so the handler's effect is applied once per id within the window even across producer retries, broker
 * redeliveries, consumer restarts and rebalances. See {@code docs/kafka.md}.
 *
 * <h2>Shape</h2>
 * One window per assigned topic-partition (copies of a record come back on the same partition, so the Kafka
 * partition is the dedup partition), owned by a partition verticle of the dedup service's kind. The Kafka client
 * runs on a thread of its own, so the rebalance callbacks run inside {@code poll}: an assigned partition is not read
 * before its window is ready, and a revoked one is drained, its offsets committed and its owner fenced before the
 * rebalance completes. Records are handed to the partition's event loop; one record at a time per partition, in
 * offset order; dedup decisions are made in batches of up to {@code maxBatch} records.
 *
 * <h2>Outcomes of a record</h2>
 * Accepted: the handler runs (then, in {@link AtomicityMode#EFFECT_FIRST}, the claim is committed). Duplicate: the
 * offset advances, the handler is not called, the partition is never paused for it. In flight (another delivery's
 * claim): the partition pauses and the record is decided again when the lease ends. Conflict, no identity, an
 * identity the window refuses, and a handler that failed {@code maxAttempts} times: the dead-letter handler, then
 * the offset advances; the id stays remembered. The window unavailable (503): back off and decide again. A record
 * whose timestamp (sent as its event time, {@link DedupKafkaOptions#setEventTimeSource}) is older than the window can
 * cover: handled and counted, or dead-lettered ({@link DedupKafkaOptions#setUncoveredRecords}). Any other verdict
 * fails closed: the dead-letter handler ({@link DeadLetter.Reason#UNEXPECTED_VERDICT}), never a silent skip.
 *
 * <h2>Offsets</h2>
 * {@code enable.auto.commit} is forced off. Each partition's committable offset (the offset after the last record of
 * the unbroken run of records done with: handled, dropped as duplicates or dead-lettered, and in effect-first mode
 * their claims' commits answered) is committed to Kafka by the poll thread: with {@code commitAsync} at most once per
 * {@code commitIntervalMs}, and with {@code commitSync} on revocation and on close. On assignment the consumer resumes
 * at Kafka's committed offset (an operator's rewind is honoured), else at the last offset the partition's window
 * store recorded, else by {@code auto.offset.reset}; records the window holds come back as duplicates.
 *
 * <h2>Failures</h2>
 * If the window of an assigned partition cannot be opened (its journal is unreadable, or another owner does not let it
 * go within {@code assignmentTimeoutMs}), the consumer stops: it finishes what its other partitions decided, commits
 * their committable offsets, hands their windows back, leaves the group (so the partitions go to the group's other
 * members) and calls the {@link #exceptionHandler}. The same happens on any other error that ends the poll thread. A
 * consumer never keeps running with a partition it cannot decide.
 *
 * <p>Thread-safety: the setters must be called before {@link #subscribe}; {@link #subscribe} and {@link #close}
 * may be called from any thread and complete on the caller's context.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
public interface DedupKafkaConsumer<K, V> {

  /**
   * Creates a consumer. Nothing connects before {@link #subscribe}.
   *
   * @param vertx the Vert.x instance whose event loops run the windows and the handlers
   * @param kafkaConfig the Kafka consumer config: {@code bootstrap.servers}, {@code group.id} (required: windows
   *     are per group) and the deserializers are required; {@code enable.auto.commit} must be absent or false
   * @param options the dedup settings, mode and retry policy
   * @param <K> the record key type
   * @param <V> the record value type
   * @return the consumer
   * @throws IllegalArgumentException if the options or the config are invalid (the message names the field)
   */
  static <K, V> DedupKafkaConsumer<K, V> create(Vertx vertx, Map<String, String> kafkaConfig,
      DedupKafkaOptions options) {
    return create(vertx, kafkaConfig, options, DedupClock.system());
  }

  /**
   * Creates a consumer whose windows and leases use {@code clock}.
   *
   * @param vertx the Vert.x instance
   * @param kafkaConfig the Kafka consumer config, as for {@link #create(Vertx, Map, DedupKafkaOptions)}
   * @param options the dedup settings, mode and retry policy
   * @param clock the clock of the windows and leases
   * @param <K> the record key type
   * @param <V> the record value type
   * @return the consumer
   * @throws IllegalArgumentException if the options or the config are invalid
   */
  static <K, V> DedupKafkaConsumer<K, V> create(Vertx vertx, Map<String, String> kafkaConfig,
      DedupKafkaOptions options, DedupClock clock) {
    return new DedupKafkaConsumerImpl<>(vertx, kafkaConfig, options, clock);
  }

  /**
   * Sets how a record's identity is found (required).
   *
   * @param identity the extractor
   * @return this
   * @throws IllegalStateException after {@link #subscribe}
   */
  DedupKafkaConsumer<K, V> identity(IdentityExtractor<K, V> identity);

  /**
   * Sets the record handler (required).
   *
   * @param handler the handler
   * @return this
   * @throws IllegalStateException after {@link #subscribe}
   */
  DedupKafkaConsumer<K, V> handler(RecordHandler<K, V> handler);

  /**
   * Sets the dead-letter handler. Without one, dead letters are logged at WARN (naming the partition, the offset and
   * the reason) and counted, then skipped. {@link DeadLetterHandler#toTopic} is one that sends them to a Kafka topic.
   *
   * @param deadLetterHandler the handler
   * @return this
   * @throws IllegalStateException after {@link #subscribe}
   */
  DedupKafkaConsumer<K, V> deadLetterHandler(DeadLetterHandler<K, V> deadLetterHandler);

  /**
   * Sets the registry of the consumer's meters ({@code dedup.kafka.*}) and of its windows' meters
   * ({@code dedup.*}). Defaults to the registry of {@code vertx-micrometer-metrics}, else Micrometer's global one.
   *
   * @param registry the registry
   * @return this
   * @throws IllegalStateException after {@link #subscribe}
   */
  DedupKafkaConsumer<K, V> meterRegistry(MeterRegistry registry);

  /**
   * Sets the handler of the failures that stop the consumer: a window that could not be opened for an assigned
   * partition (an {@link IllegalStateException} whose message names the topic-partition, caused by the journal's
   * error), or any other error that ends the poll thread. Called once per stopped consumer, on the context that
   * called {@link #subscribe}, after the consumer has left the group; {@link #close} then completes with the same
   * failure. Each window that fails to open is also counted by {@code dedup.kafka.window.open.failures}. Without a
   * handler the failure is only logged at ERROR: an application that should not run on without its consumer must set
   * one (for example to exit with a non-zero status).
   *
   * @param handler the handler
   * @return this
   * @throws IllegalStateException after {@link #subscribe}
   */
  DedupKafkaConsumer<K, V> exceptionHandler(Handler<Throwable> handler);

  /**
   * Starts the poll thread and subscribes to the topics. Records flow once the group assigns partitions.
   *
   * @param topics the topics, not empty
   * @return completes when subscribed; fails if the Kafka consumer cannot be created, or with
   *     {@link IllegalStateException} if already subscribed or closed, or if the identity or handler is missing
   */
  Future<Void> subscribe(Set<String> topics);

  /**
   * Subscribes to one topic.
   *
   * @param topic the topic
   * @return see {@link #subscribe(Set)}
   */
  default Future<Void> subscribe(String topic) {
    return subscribe(Set.of(topic));
  }

  /** @return the topic-partitions assigned now (a snapshot; readable from any thread) */
  Set<TopicPartition> assignment();

  /** @return the id this consumer's windows and claims carry */
  String instanceId();

  /**
   * Drains every partition (bounded by {@code revocationTimeoutMs}), commits the committable offsets, hands the
   * windows back to their store and closes the Kafka consumer. Idempotent.
   *
   * @return completes when closed; fails with the failure that stopped the consumer, if one did (see
   *     {@link #exceptionHandler})
   */
  Future<Void> close();
}
