package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.github.vertxdedup.kafka.testkit.LocalKafkaExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The changelog's transactional producer on a real broker: the entries become visible to a {@code read_committed}
 * reader exactly when the offsets are committed for the group, and a consumer that lost its partition to another
 * member (a zombie) has its transaction refused: neither its entries nor its offsets are committed.
 */
class ChangelogWriterTest {

  @RegisterExtension
  static final LocalKafkaExtension kafka = new LocalKafkaExtension(1);
  private static final AtomicInteger NAMES = new AtomicInteger();

  private static Map<String, Object> config(String group, long maxPollIntervalMs) {
    Map<String, Object> c = new HashMap<>();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    c.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
    c.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
    c.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, Long.toString(maxPollIntervalMs));
    return c;
  }

  /** Polls until the consumer is assigned a partition. */
  private static void awaitAssigned(KafkaConsumer<String, String> c) {
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      c.poll(Duration.ofMillis(100));
      return !c.assignment().isEmpty();
    });
  }

  private static ProducerRecord<byte[], byte[]> record(String topic, ChangelogEntry e) {
    return new ProducerRecord<>(topic, 0, e.recordKey(), e.value());
  }

  /** The entries a read_committed reader sees in partition 0 of the changelog, in order. */
  private static List<ChangelogEntry> committedEntries(String topic) {
    Map<String, Object> c = ChangelogRebuild.readerConfig(config("unused", 300_000), new TopicPartition(topic, 0));
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    Map<String, Object> uncommitted = new HashMap<>(c);
    uncommitted.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
    List<ChangelogEntry> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> r = new KafkaConsumer<>(c);
        KafkaConsumer<byte[], byte[]> all = new KafkaConsumer<>(uncommitted)) {
      TopicPartition tp = new TopicPartition(topic, 0);
      r.assign(List.of(tp));
      r.seekToBeginning(List.of(tp));
      // A transaction's commit returns before its markers reach the partition: until they do, the last stable offset
      // (the read_committed end) lags the high watermark and the committed entries are not readable yet.
      long[] stable = new long[1];
      await().atMost(10, TimeUnit.SECONDS).until(() -> {
        stable[0] = r.endOffsets(List.of(tp)).get(tp);
        return stable[0] >= all.endOffsets(List.of(tp)).get(tp);
      });
      long end = stable[0];
      while (r.position(tp) < end) {
        for (ConsumerRecord<byte[], byte[]> rec : r.poll(Duration.ofMillis(100))) {
          out.add(ChangelogEntry.read(rec.key(), rec.value()));
        }
      }
    }
    return out;
  }

  @Test
  void shouldCommitTheEntriesWithTheOffsetsAndRefuseTheTransactionOfAConsumerThatLostItsPartition()
      throws Exception {
    int n = NAMES.incrementAndGet();
    String source = "writer-source-" + n;
    String group = "writer-g-" + n;
    String changelog = ChangelogTopics.name(group, source);
    kafka.createTopic(source, 1);
    kafka.createTopic(changelog, 1);
    TopicPartition tp = new TopicPartition(source, 0);

    try (KafkaConsumer<String, String> zombie = new KafkaConsumer<>(config(group, 1_000));
        ChangelogWriter writer = new ChangelogWriter(config(group, 1_000),
            ChangelogWriter.transactionalId(group, "zombie"))) {
      zombie.subscribe(List.of(source));
      awaitAssigned(zombie);
      ConsumerGroupMetadata generation = zombie.groupMetadata();
      ChangelogEntry a = ChangelogEntry.accepted("a", "k", null, 0, 1_000, 2_000);
      java.util.concurrent.CompletableFuture<Void> first = writer.commit(List.of(record(changelog, a),
          record(changelog, ChangelogEntry.commit(0, 1))), Map.of(tp, new OffsetAndMetadata(1)), generation);
      // A live member polls: the first transaction also starts the producer, which may take longer than the poll
      // interval.
      while (!first.isDone()) {
        zombie.poll(Duration.ofMillis(50));
      }
      first.get();
      assertThat(committedEntries(changelog)).containsExactly(a, ChangelogEntry.commit(0, 1));
      assertThat(zombie.committed(java.util.Set.of(tp)).get(tp).offset()).isEqualTo(1);

      // The zombie stops polling; past its max.poll.interval.ms the group gives its partition to another member.
      try (KafkaConsumer<String, String> next = new KafkaConsumer<>(config(group, 300_000))) {
        next.subscribe(List.of(source));
        awaitAssigned(next);

        // Still running, the zombie commits what it accepted since, with the generation it had.
        ChangelogEntry b = ChangelogEntry.accepted("b", null, null, 1, 1_100, 2_100);
        ExecutionException refused = assertThrows(ExecutionException.class, () -> writer.commit(
            List.of(record(changelog, b), record(changelog, ChangelogEntry.commit(1, 2))),
            Map.of(tp, new OffsetAndMetadata(2)), generation).get(30, TimeUnit.SECONDS));
        assertThat(refused.getCause()).isInstanceOf(CommitFailedException.class);
        assertThat(committedEntries(changelog)).containsExactly(a, ChangelogEntry.commit(0, 1));
        assertThat(next.committed(java.util.Set.of(tp)).get(tp).offset()).isEqualTo(1);

        // The writer is not broken by a refusal: with the live member's generation the next transaction commits.
        writer.commit(List.of(record(changelog, b), record(changelog, ChangelogEntry.commit(1, 2))),
            Map.of(tp, new OffsetAndMetadata(2)), next.groupMetadata()).get(30, TimeUnit.SECONDS);
        assertThat(committedEntries(changelog)).containsExactly(a, ChangelogEntry.commit(0, 1), b,
            ChangelogEntry.commit(1, 2));
      }
    }
  }

  /**
   * A synchronous commit (a revocation's, a close's) that comes while an async commit's transaction is in flight and
   * another async commit waits: each accepted id's entry is written once, not again with the later transaction.
   */
  @Test
  void shouldWriteEachEntryOnceWhenASyncCommitFollowsAsyncCommits() throws Exception {
    int n = NAMES.incrementAndGet();
    String source = "committer-source-" + n;
    String group = "committer-g-" + n;
    String changelog = ChangelogTopics.name(group, source);
    kafka.createTopic(source, 1);
    kafka.createTopic(changelog, 1);
    TopicPartition tp = new TopicPartition(source, 0);
    ChangelogBuffer buffer = new ChangelogBuffer();
    for (int i = 0; i < 10; i++) {
      buffer.accepted(ChangelogEntry.accepted("id-" + i, null, null, i, 1_000, 2_000));
    }
    long[] committed = {-1};
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config(group, 300_000))) {
      consumer.subscribe(List.of(source));
      awaitAssigned(consumer);
      ChangelogCommitter committer = new ChangelogCommitter(new ChangelogWriter(config(group, 300_000),
          ChangelogWriter.transactionalId(group, "c")), consumer, group,
          p -> new ChangelogCommitter.Partition(buffer, committed[0]), () -> { });
      List<Exception> answers = new ArrayList<>();
      committer.commitAsync(Map.of(tp, new OffsetAndMetadata(5)), (o, e) -> answers.add(e));
      committer.commitAsync(Map.of(tp, new OffsetAndMetadata(7)), (o, e) -> answers.add(e));
      committer.commitSync(Map.of(tp, new OffsetAndMetadata(10)));
      committer.close();
      assertThat(answers).hasSize(2).containsOnlyNulls();
    }
    List<String> ids = committedEntries(changelog).stream()
        .filter(e -> e.kind() == ChangelogEntry.Kind.ACCEPTED).map(ChangelogEntry::id).toList();
    assertThat(ids).containsExactly("id-0", "id-1", "id-2", "id-3", "id-4", "id-5", "id-6", "id-7", "id-8", "id-9");
    assertThat(buffer.size()).isZero();
  }

  /**
   * A changelog producer fenced by another with the same transactional id (a second consumer given the same instance
   * id) can commit no more: the committer then fails every later call, so the poll loop ends and the consumer stops
   * and reports it, rather than leaving its partitions waiting for commits that never come.
   */
  @Test
  void shouldFailTheCommitterOnceItsProducerIsFenced() throws Exception {
    int n = NAMES.incrementAndGet();
    String source = "fenced-source-" + n;
    String group = "fenced-g-" + n;
    String changelog = ChangelogTopics.name(group, source);
    kafka.createTopic(source, 1);
    kafka.createTopic(changelog, 1);
    TopicPartition tp = new TopicPartition(source, 0);
    ChangelogBuffer buffer = new ChangelogBuffer();
    buffer.accepted(ChangelogEntry.accepted("id-0", null, null, 0, 1_000, 2_000));
    String transactionalId = ChangelogWriter.transactionalId(group, "same");
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config(group, 300_000));
        ChangelogWriter other = new ChangelogWriter(config(group, 300_000), transactionalId)) {
      consumer.subscribe(List.of(source));
      awaitAssigned(consumer);
      ChangelogCommitter committer = new ChangelogCommitter(new ChangelogWriter(config(group, 300_000),
          transactionalId), consumer, group, p -> new ChangelogCommitter.Partition(buffer, -1), () -> { });
      committer.commitSync(Map.of(tp, new OffsetAndMetadata(1)));
      // Another producer with the same transactional id starts: it fences this one.
      other.commit(List.of(), Map.of(tp, new OffsetAndMetadata(1)), consumer.groupMetadata()).get(30, TimeUnit.SECONDS);
      assertThrows(RuntimeException.class, () -> committer.commitSync(Map.of(tp, new OffsetAndMetadata(1))));
      IllegalStateException stop = assertThrows(IllegalStateException.class, committer::runCallbacks);
      assertThat(stop.getMessage()).contains(transactionalId).contains("cannot commit any more");
      committer.close();
    }
  }
}
