package io.github.vertxdedup.kafka.impl;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transactional producer of one consumer's changelog ({@code changelog} on), and the thread its blocking calls
 * run on. Each {@link #commit} is one Kafka transaction: the changelog entries, then the consumer's offsets sent with
 * {@code sendOffsetsToTransaction(offsets, groupMetadata)}, then the commit. So the entries become visible to a
 * {@code read_committed} reader exactly when the offsets are committed for the group, and never without them.
 *
 * <h2>Fencing (KIP-447)</h2>
 * The {@code transactional.id} is per consumer instance ({@link #transactionalId}), and the group coordinator checks
 * the generation in the group metadata: a consumer that lost its partitions (a zombie: paused too long, cut off from
 * the group) has its transaction refused ({@code CommitFailedException}, or {@code FencedInstanceIdException} under
 * static membership) and aborted, so neither its entries nor its offsets are committed. A newer process with the
 * same instance id fences this producer ({@code ProducerFencedException} at its {@code initTransactions}); this
 * writer then refuses every later commit instead of starting a producer again, which would fence the newer one in
 * turn.
 *
 * <h2>Failures</h2>
 * A transaction that fails otherwise is aborted and its future fails; the caller sends the entries again with a
 * later commit. If the abort fails too, the producer is closed and a new one started with the next commit (its
 * {@code initTransactions} ends whatever the old one left open). An error that no new producer mends (fenced,
 * refused by an ACL, a broker without transactions) fails this commit and every later one with it.
 *
 * <p>Thread-safe: {@link #commit} from any thread (the poll thread); the producer is used by this writer's thread
 * only. Commits run one after the other, in the order they were submitted.
 */
final class ChangelogWriter implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(DedupKafkaConsumerImpl.class);
  /** Producer configs taken over from the consumer's only if they do not belong to the consumer alone. */
  private static final Set<String> NOT_INHERITED = Set.of(ProducerConfig.CLIENT_ID_CONFIG,
      ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
      ProducerConfig.INTERCEPTOR_CLASSES_CONFIG, ProducerConfig.TRANSACTIONAL_ID_CONFIG,
      ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, ProducerConfig.ACKS_CONFIG);

  private final Map<String, Object> config;
  private final ExecutorService thread;
  /** The producer; this writer's thread only. Null before the first commit, or after one was closed. */
  private KafkaProducer<byte[], byte[]> producer;
  /** An error no new producer mends; this writer's thread only. */
  /** Set once the producer can commit no more (fenced, not authorized): every later transaction fails with it. */
  private volatile RuntimeException fatal;

  /**
   * @param kafkaConfig the consumer's config: the producer takes its connection and security settings
   * @param transactionalId the producer's {@code transactional.id} ({@link #transactionalId})
   */
  ChangelogWriter(Map<String, Object> kafkaConfig, String transactionalId) {
    this.config = producerConfig(kafkaConfig, transactionalId);
    this.thread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "dedup-kafka-changelog-" + transactionalId);
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * @param groupId the consumer group
   * @param instanceId the consumer's instance id
   * @return the {@code transactional.id} of the consumer's changelog producer: {@code <group.id>-<instanceId>-dedup}
   */
  /**
   * @return the failure after which this writer commits no more transactions (its producer was fenced by another
   *     with the same transactional id, or is not authorized), or null; any thread
   */
  RuntimeException fatal() {
    return fatal;
  }

  static String transactionalId(String groupId, String instanceId) {
    return groupId + "-" + instanceId + "-dedup";
  }

  /** The producer's config: the consumer's connection and security settings, transactional, idempotent. */
  static Map<String, Object> producerConfig(Map<String, Object> kafkaConfig, String transactionalId) {
    Map<String, Object> c = new HashMap<>();
    Set<String> known = ProducerConfig.configNames();
    for (Map.Entry<String, Object> e : kafkaConfig.entrySet()) {
      if (known.contains(e.getKey()) && !NOT_INHERITED.contains(e.getKey())) {
        c.put(e.getKey(), e.getValue());
      }
    }
    Object clientId = kafkaConfig.get(ProducerConfig.CLIENT_ID_CONFIG);
    c.put(ProducerConfig.CLIENT_ID_CONFIG, (clientId != null ? clientId : transactionalId) + "-changelog");
    c.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    c.put(ProducerConfig.ACKS_CONFIG, "all");
    c.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    c.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    return c;
  }

  /**
   * Writes the records and commits the offsets for the group in one transaction, on this writer's thread.
   *
   * @param records the changelog entries
   * @param offsets the offsets to commit (the next record to read, per source partition)
   * @param group the consumer's group metadata ({@code consumer.groupMetadata()}, taken on the poll thread): the
   *     coordinator refuses the transaction if its generation is stale
   * @return completes once the transaction committed, or exceptionally with why it did not (it was aborted, or
   *     never begun): the Kafka client's exception, e.g. {@code CommitFailedException} for a stale generation
   */
  CompletableFuture<Void> commit(List<ProducerRecord<byte[], byte[]>> records,
      Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata group) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    try {
      thread.execute(() -> {
        try {
          transaction(records, offsets, group);
          done.complete(null);
        } catch (RuntimeException e) {
          done.completeExceptionally(e);
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      done.completeExceptionally(new IllegalStateException("the changelog writer is closed", e));
    }
    return done;
  }

  private void transaction(List<ProducerRecord<byte[], byte[]>> records,
      Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata group) {
    if (fatal != null) {
      throw fatal;
    }
    KafkaProducer<byte[], byte[]> p;
    try {
      p = producer();
    } catch (RuntimeException e) {
      throw failed(e, null);
    }
    try {
      p.beginTransaction();
      for (ProducerRecord<byte[], byte[]> r : records) {
        p.send(r);
      }
      p.sendOffsetsToTransaction(offsets, group);
      p.commitTransaction();
    } catch (RuntimeException e) {
      throw failed(e, p);
    }
  }

  private KafkaProducer<byte[], byte[]> producer() {
    if (producer == null) {
      KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(config);
      try {
        p.initTransactions();
      } catch (RuntimeException e) {
        p.close(Duration.ZERO);
        throw e;
      }
      producer = p;
    }
    return producer;
  }

  /**
   * Ends a failed transaction: aborts it, or closes the producer; remembers an error no new producer mends. The
   * transaction's own error may not say that the producer was fenced (a call that timed out while the fence arrived):
   * the abort then fails with the fence as its cause, and that is remembered too. A new producer started after a fence
   * would take the transactional id back from the producer that fenced this one.
   */
  private RuntimeException failed(RuntimeException e, KafkaProducer<byte[], byte[]> p) {
    if (isFatal(e)) {
      return cannotCommit(e);
    }
    if (p != null) {
      try {
        p.abortTransaction();
      } catch (RuntimeException abort) {
        if (isFatal(abort)) {
          cannotCommit(abort);
          return e;
        }
        LOG.debug("aborting a changelog transaction failed; a new producer is started with the next commit: {}",
            abort.toString());
        closeProducer();
      }
    }
    return e;
  }

  /** Remembers {@code cause} as the error after which this writer commits nothing more, and closes the producer. */
  private RuntimeException cannotCommit(RuntimeException cause) {
    fatal = new IllegalStateException("the changelog producer " + config.get(ProducerConfig.TRANSACTIONAL_ID_CONFIG)
        + " cannot commit any more: " + cause, cause);
    LOG.error("{}", fatal.getMessage());
    closeProducer();
    return cause;
  }

  /** A producer fenced by a newer one of its transactional id, refused by an ACL, or a broker that cannot help. */
  private static boolean isFatal(RuntimeException e) {
    return e instanceof ProducerFencedException || e instanceof AuthorizationException
        || e instanceof UnsupportedVersionException || e instanceof OutOfOrderSequenceException
        || (e instanceof KafkaException && e.getCause() instanceof ProducerFencedException);
  }

  private void closeProducer() {
    if (producer != null) {
      try {
        producer.close(Duration.ZERO);
      } catch (RuntimeException ignored) {
        // Closing is best effort: the producer is dropped either way.
      }
      producer = null;
    }
  }

  /**
   * Closes the producer after the commits submitted before, waiting at most {@code timeoutMs}. Any thread but the
   * writer's.
   *
   * @param timeoutMs the longest wait, milliseconds
   */
  void close(long timeoutMs) {
    if (thread.isShutdown()) {
      return;
    }
    thread.execute(this::closeProducer);
    thread.shutdown();
    try {
      if (!thread.awaitTermination(timeoutMs, TimeUnit.MILLISECONDS)) {
        LOG.warn("the changelog producer did not close within {} ms", timeoutMs);
        thread.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      thread.shutdownNow();
    }
  }

  @Override
  public void close() {
    close(5_000);
  }
}
