package io.github.vertxdedup.kafka;

import io.github.vertxdedup.inbox.DedupInbox;
import io.github.vertxdedup.kafka.impl.DedupKafkaConsumerImpl;
import io.github.vertxdedup.kafka.impl.WrappedConsumer;
import io.github.vertxdedup.time.DedupClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.ext.healthchecks.Status;
import io.vertx.kafka.client.consumer.KafkaConsumer;
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
 * partition is the dedup partition), owned by a partition verticle of the dedup service's kind. Records are handed
 * to the partition's event loop; one record at a time per partition, in offset order; dedup decisions are made in
 * batches of up to {@code maxBatch} records.
 *
 * <h2>Two drivers</h2>
 * {@link #create} runs a Kafka client on a thread of its own, so the rebalance callbacks run inside {@code poll}: an
 * assigned partition is not read before its window is ready, and a revoked one is drained, its offsets committed and
 * its owner fenced before the rebalance completes. {@link #wrap} adds the same deduplication to the application's
 * Vert.x {@link KafkaConsumer}, whose rebalance handlers run after the rebalance and cannot hold it back: it pauses a
 * newly assigned partition until its window is ready, commits nothing of a revoked partition once the revocation
 * reaches it, and hands its window to the next owner only once its owner stopped; what its old owner finished after
 * the last commit is read again by the next owner (duplicates, where the window moves with the partition). Which to
 * choose: {@code docs/kafka.md}, "Adding dedup to your own Vert.x consumer".
 *
 * <h2>Outcomes of a record</h2>
 * Accepted: the handler runs (then, in {@link AtomicityMode#EFFECT_FIRST}, the claim is committed). Duplicate: the
 * offset advances, the handler is not called, the partition is never paused for it. In flight (another delivery's
 * claim): the partition pauses and the record is decided again when the lease ends. Conflict, no identity, an
 * identity the window refuses, and a handler that failed {@code maxAttempts} times: the dead-letter handler, then
 * the offset advances; the id stays remembered. The window unavailable (503): back off and decide again. A handler
 * that found nobody to hand the record to (its future failed with a {@code ReplyException} of
 * {@code ReplyFailure.NO_HANDLERS}): the partition pauses and the handler is called again with backoff, without using
 * up an attempt. A record
 * whose timestamp (sent as its event time, {@link DedupKafkaOptions#setEventTimeSource}) is older than the window can
 * cover: handled and counted, or dead-lettered ({@link DedupKafkaOptions#setUncoveredRecords}). Any other verdict
 * fails closed: the dead-letter handler ({@link DeadLetter.Reason#UNEXPECTED_VERDICT}), never a silent skip.
 *
 * <h2>Offsets</h2>
 * {@code enable.auto.commit} must be absent or false ({@link #create} refuses {@code true} and sets it to false when
 * absent) or {@code "false"} ({@link #wrap}). Each partition's committable offset (the offset after the last record of
 * the unbroken run of records done with: handled, dropped as duplicates or dead-lettered, and in effect-first mode
 * their claims' commits answered) is committed to Kafka by the poll thread: with {@code commitAsync} at most once per
 * {@code commitIntervalMs}, and with {@code commitSync} on revocation and on close (with
 * {@link DedupKafkaOptions#setChangelog changelog} on, each commit is a transaction that also writes the accepted
 * ids to the changelog topic). On assignment the consumer resumes
 * at Kafka's committed offset (an operator's rewind is honoured), else at the last offset the partition's window
 * store recorded, else by {@code auto.offset.reset}; records the window holds come back as duplicates.
 *
 * <h2>Failures</h2>
 * If the window of an assigned partition cannot be opened (its journal is unreadable, or another owner does not let it
 * go within {@code assignmentTimeoutMs}), the consumer stops: it finishes what its other partitions decided, commits
 * their committable offsets, hands their windows back, leaves the group (so the partitions go to the group's other
 * members; a wrapped consumer is closed) and calls the {@link #exceptionHandler}. The same happens on any other error that ends the poll thread. A
 * consumer never keeps running with a partition it cannot decide. A partition whose window opened but could not be
 * rebuilt from its source topic (no read ACL, a deleted topic, a record the deserializer rejects) is the exception:
 * it is left unhandled (paused, none of its records handed to the handler) and rebuilt again every
 * {@code backoffMaxMs}, the other partitions flow, and the {@link #exceptionHandler} is called once per episode.
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
   *     are per group) and the deserializers are required; {@code enable.auto.commit} must be absent or false.
   *     Without {@code partition.assignment.strategy} the consumer uses Kafka's {@code CooperativeStickyAssignor}
   *     (a rebalance moves only the partitions it must); a strategy the config names is used as it is
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
   * Adds deduplication to the application's Vert.x consumer. It takes over the consumer's record handling and
   * rebalance handlers: {@link #subscribe} installs a batch handler and the partitions assigned and revoked
   * handlers, sets its {@code pollTimeout} to {@code pollTimeoutMs}, and subscribes it; {@link #close} closes it. The
   * application must not set those handlers, subscribe, seek, commit, pause or resume the consumer itself.
   * Offsets are committed through it ({@link KafkaConsumer#commit(Map)}) every {@code commitIntervalMs}.
   *
   * <p>Compared with {@link #create}: the rebalance does not wait for a revoked partition to drain, so the next owner
   * reads it again from the last commit (up to {@code commitIntervalMs} of records done with, dropped as duplicates
   * where the window moves with the partition: the same Vert.x instance, or {@code dedup.journalDir} on one
   * machine), and waits, paused, until the old owner has finished what it decided and handed the window back. See
   * {@code docs/kafka.md}, "Adding dedup to your own Vert.x consumer".
   *
   * @param vertx the Vert.x instance whose event loops run the windows and the handlers
   * @param consumer the application's Vert.x consumer, not subscribed yet ({@link #subscribe} fails with an
   *     {@link IllegalStateException} if it is)
   * @param kafkaConfig the config the consumer was created with. The group is read from the consumer: its
   *     {@code group.id} (windows are per group, and the journal directory is named after it) and its
   *     {@code group.instance.id} (the instance id unless {@code options.instanceId} is set); the map may leave them
   *     out, and must not name others. {@code enable.auto.commit} cannot be read from the consumer: the map must say
   *     {@code "false"}, and must be the config the consumer was really created with, since a consumer created with
   *     auto-commit on commits the offsets of records not handled yet, which a crash then loses. The consumer's
   *     {@code partition.assignment.strategy} is the one it was created with ({@code wrap} cannot change it): give it
   *     {@code org.apache.kafka.clients.consumer.CooperativeStickyAssignor} so that a rebalance moves only the
   *     partitions it must, as {@link #create}'s consumer does by default
   * @param options the dedup settings, mode and retry policy
   * @param <K> the record key type
   * @param <V> the record value type
   * @return the consumer
   * @throws IllegalArgumentException if the options are invalid, the consumer has no {@code group.id}, the map names
   *     another {@code group.id} or {@code group.instance.id} than the consumer's, or {@code enable.auto.commit} is
   *     absent (Kafka's default is {@code true}) or not {@code "false"}; the message names the key
   * @throws IllegalStateException if the consumer is busy polling (it was subscribed already)
   */
  static <K, V> DedupKafkaConsumer<K, V> wrap(Vertx vertx, KafkaConsumer<K, V> consumer,
      Map<String, String> kafkaConfig, DedupKafkaOptions options) {
    return wrap(vertx, consumer, kafkaConfig, options, DedupClock.system());
  }

  /**
   * Adds deduplication to the application's Vert.x consumer, with windows and leases on {@code clock}.
   *
   * @param vertx the Vert.x instance
   * @param consumer the application's Vert.x consumer, as for
   *     {@link #wrap(Vertx, KafkaConsumer, Map, DedupKafkaOptions)}
   * @param kafkaConfig the config the consumer was created with
   * @param options the dedup settings, mode and retry policy
   * @param clock the clock of the windows and leases
   * @param <K> the record key type
   * @param <V> the record value type
   * @return the consumer
   * @throws IllegalArgumentException as {@link #wrap(Vertx, KafkaConsumer, Map, DedupKafkaOptions)}
   * @throws IllegalStateException as {@link #wrap(Vertx, KafkaConsumer, Map, DedupKafkaOptions)}
   */
  static <K, V> DedupKafkaConsumer<K, V> wrap(Vertx vertx, KafkaConsumer<K, V> consumer,
      Map<String, String> kafkaConfig, DedupKafkaOptions options, DedupClock clock) {
    return new WrappedConsumer<>(vertx, consumer, kafkaConfig, options, clock);
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
   * Sets the transactional inbox and the handler that writes a record's effect in its transaction
   * ({@link AtomicityMode#INBOX}, which the options' {@code mode} must name); instead of {@link #handler}. At
   * {@link #subscribe} the inbox table is checked ({@link DedupInbox#verifySchema}): a missing table or a wrong column
   * fails the subscribe with a message naming what is wrong. Each record's inbox row carries the group, the topic,
   * the partition, the identity, and a remember-until of the transaction's start plus the window {@code W}.
   *
   * @param inbox the inbox (its table, pool and clock); the consumer does not close it
   * @param handler the record's writes, on the transaction's connection
   * @return this
   * @throws IllegalStateException after {@link #subscribe}
   */
  DedupKafkaConsumer<K, V> inbox(DedupInbox inbox, InboxRecordHandler<K, V> handler);

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
   * <p>A consumer made by {@link #create} also binds Micrometer's
   * {@link io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics} to its own Kafka client in that registry,
   * from {@code subscribe} until the client is closed (on {@link #close}, or when the consumer stops on an error),
   * when its meters are removed again: {@code kafka.consumer.*} meters (consumer lag, fetch rate, ...) tagged
   * {@code client.id} and {@code kafka.version}, refreshed every minute for new topics and partitions, on a thread of
   * the binder's. A registry {@code MeterFilter} such as {@code MeterFilter.denyNameStartsWith("kafka.")} leaves them
   * out. A consumer made by {@link #wrap} binds nothing: its Kafka client is the application's, which binds it as it
   * does any other ({@code new KafkaClientMetrics(consumer.unwrap()).bindTo(registry)}).
   *
   * @param registry the registry
   * @return this
   * @throws IllegalStateException after {@link #subscribe}
   */
  DedupKafkaConsumer<K, V> meterRegistry(MeterRegistry registry);

  /**
   * Sets the handler of the failures that stop the consumer: a window that could not be opened for an assigned
   * partition (an {@link IllegalStateException} whose message names the topic-partition, caused by the journal's
   * error; for a wrapped consumer also a failed lookup of the partition's committed offset, or of its seek), or any
   * other error that ends the poll thread. Called once per stopped consumer, on the context that
   * called {@link #subscribe}, after the consumer has left the group; {@link #close} then completes with the same
   * failure. Also called, while the consumer runs on, for a partition left unhandled because its window could not be
   * rebuilt from the source topic (an {@link IllegalStateException} "failed to rebuild the window of
   * &lt;topic-partition&gt; from the source topic", Kafka's exception as its cause): once per episode, until a rebuild
   * of the partition succeeds or it is revoked; each failed attempt counts in {@code dedup.kafka.rebuild.failures}. Each window that fails to open is also counted by {@code dedup.kafka.window.open.failures}. Without a
   * handler the failure is only logged at ERROR: an application that should not run on without its consumer must set
   * one (for example to exit with a non-zero status).
   *
   * @param handler the handler
   * @return this
   * @throws IllegalStateException after {@link #subscribe}
   */
  DedupKafkaConsumer<K, V> exceptionHandler(Handler<Throwable> handler);

  /**
   * Starts the poll thread (or, wrapped, installs the Vert.x consumer's handlers) and subscribes to the topics.
   * Records flow once the group assigns partitions.
   *
   * @param topics the topics, not empty
   * @return completes when subscribed; fails if the Kafka consumer cannot be created or subscribed (with Kafka's
   *     error, once the Kafka client it made is closed), or with
   *     {@link IllegalStateException} if already subscribed, if {@link #close} was called (before, or while this
   *     subscribe was under way: a closed consumer never starts), if the identity or handler is missing, if the mode
   *     is {@link AtomicityMode#INBOX} without {@link #inbox} (or an inbox is set in another mode), if the inbox table
   *     is not usable ({@link DedupInbox#verifySchema}'s message), or if a wrapped Vert.x consumer was already
   *     subscribed
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

  /**
   * The consumer's health now, for a {@code vertx-health-check} procedure of the application's own
   * {@link io.vertx.ext.healthchecks.HealthChecks} (which {@code vertx-health-check}'s {@code HealthCheckHandler}
   * serves over HTTP):
   * <pre>{@code
   * checks.register("payments-consumer", promise -> promise.complete(consumer.health()));
   * }</pre>
   * {@code OK} when the consumer runs (subscribed, not closed or stopped) and every partition assigned to it is
   * handled: its window answers (rebuilt from its journal; a journal write that failed makes the window reopen its
   * journal, and the partition unhealthy until it has), and no rebuild of the window from Kafka runs or has failed
   * since the last that succeeded. A consumer with no partition assigned (a group with more members than partitions)
   * is {@code OK}. Otherwise {@code KO}.
   *
   * <p>The status's data: {@code group}, {@code instanceId}, {@code state} ({@code NOT_SUBSCRIBED}, {@code RUNNING},
   * {@code CLOSING}, {@code CLOSED}, or {@code FAILED} with a {@code failure}: see {@link #exceptionHandler}) and,
   * while it runs, {@code partitions}: per topic-partition ({@code <topic>-<partition>}) its {@code state},
   * {@code OPENING} (its window is being taken or replayed), a window's state ({@code RECOVERING}, {@code STOPPING},
   * {@code FAILED}), {@code REBUILDING}, {@code REBUILD_FAILED} (left unhandled until a rebuild succeeds) or
   * {@code READY}, and a {@code failure} when one is known.
   *
   * <p>Any thread; it reads what the consumer publishes, and blocks on nothing.
   *
   * @return the status
   */
  Status health();

  /** @return the topic-partitions assigned now (a snapshot; readable from any thread) */
  Set<TopicPartition> assignment();

  /** @return the id this consumer's windows and claims carry */
  String instanceId();

  /**
   * Drains every partition (bounded by {@code revocationTimeoutMs}), commits the committable offsets, hands the
   * windows back to their store and closes the Kafka consumer (a wrapped Vert.x consumer too). Idempotent. A closed
   * consumer cannot be subscribed ({@link #subscribe} fails); make a new one.
   *
   * @return completes when closed; fails with the failure that stopped the consumer, if one did (see
   *     {@link #exceptionHandler})
   */
  Future<Void> close();
}
