package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.UncoveredPolicy;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.time.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.kafka.client.consumer.impl.KafkaConsumerRecordImpl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetCommitCallback;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The record-first gate ({@link OffsetGate}) between a {@link PartitionOwner} and the {@link OffsetCommits} of the
 * poll thread, with a {@link GroupCommitter} the test answers by hand, on an in-memory window: a handler starts only
 * once the commit of an offset past its record was acknowledged, one commit covers a decided run, and the handlers of
 * records whose commit was refused never run. The test thread plays the poll thread.
 */
class OffsetGateTest {

  private static final TopicPartition TP = new TopicPartition("orders", 0);
  /** Records per decided run. */
  private static final int MAX_BATCH = 5;

  private Vertx vertx;
  private final ManualClock clock = new ManualClock(1_700_000_000_000L);
  private PartitionWindows windows;
  private PartitionWindows.Lease lease;
  private final Map<TopicPartition, AssignedPartition<String, String>> owners = new HashMap<>();
  private final HandCommitter committer = new HandCommitter();
  /** The offset Kafka acknowledged last, as the handlers see it when they start. */
  private final AtomicLong acknowledged = new AtomicLong(-1);
  /** Per handled record: its offset, and the acknowledged offset when its handler started. */
  private final List<long[]> handled = new CopyOnWriteArrayList<>();
  /** The offsets of the records sent to the dead-letter handler. */
  private final List<Long> deadLettered = new CopyOnWriteArrayList<>();
  /** The offset whose handler does not complete until {@link #release} is completed; -1: none. */
  private long held = -1;
  private final Promise<Void> release = Promise.promise();
  private PartitionOwner<String, String> owner;
  private OffsetCommits<String, String> commits;

  @BeforeEach
  void setUp() throws Exception {
    vertx = Vertx.vertx();
  }

  /**
   * Opens the window (runs of {@value #MAX_BATCH} records) and its owner.
   *
   * @param maxUnansweredOffsetCommits the owner's {@code maxUnansweredOffsetCommits}
   */
  private void start(int maxUnansweredOffsetCommits) throws Exception {
    DedupOptions dedup = new DedupOptions().setAddress("test.gate").setPartitions(1)
        .setWindow(Duration.ofMinutes(10)).setUncoveredPolicy(UncoveredPolicy.ACCEPT).setMaxBatch(MAX_BATCH);
    windows = PartitionWindows.create(vertx, dedup, clock, null, 10_000);
    lease = get(windows.acquire("g", TP, "instance-1"));
    DedupKafkaOptions options = new DedupKafkaOptions().setMode(AtomicityMode.RECORD_FIRST).setDedup(dedup)
        .setMaxUnansweredOffsetCommits(maxUnansweredOffsetCommits);
    OwnerConfig<String, String> config = new OwnerConfig<>(vertx, options, IdentityExtractor.recordKey(), r -> {
      handled.add(new long[] {r.offset(), acknowledged.get()});
      return r.offset() == held ? release.future() : Future.succeededFuture();
    }, d -> {
      deadLettered.add(d.record().offset());
      return Future.succeededFuture();
    }, clock, "instance-1", () -> { });
    owner = new PartitionOwner<>(config, TP, lease.partition().context(), lease.partition(),
        new KafkaMetrics(new SimpleMeterRegistry(), "g", TP.topic(), TP.partition()));
    owners.put(TP, new AssignedPartition<>(owner, lease));
    commits = new OffsetCommits<>(committer, owners, windows, 60_000);
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /**
   * Five new ids are decided in one run; their handlers wait until the commit of offset 5, asked for once and sent
   * at once (not after {@code commitIntervalMs}, a minute here), is acknowledged; then each starts with the
   * acknowledged offset already past its record.
   */
  @Test
  void shouldStartEachHandlerOnlyOnceKafkaAcknowledgedTheCommitOfItsRun() throws Exception {
    start(DedupKafkaOptions.DEFAULT_MAX_UNANSWERED_OFFSET_COMMITS);
    owner.offer(records(0, 5));

    await().atMost(Duration.ofSeconds(10)).until(() -> owner.wantedNext() == 5);
    commits.commitWanted();
    assertThat(committer.sent).containsExactly(Map.of(TP, new OffsetAndMetadata(5)));
    commits.commitWanted(); // asked once, sent once
    assertThat(committer.sent).hasSize(1);
    assertThat(owner.committableNext()).as("the decided prefix is committable").isEqualTo(5);

    acknowledged.set(5);
    committer.answer(null);

    await().atMost(Duration.ofSeconds(10)).until(() -> handled.size() == 5);
    assertThat(handled).allSatisfy(h -> assertThat(h[1]).as("acknowledged when offset %d started", h[0])
        .isGreaterThan(h[0]));
    assertThat(owners.get(TP).committed).isEqualTo(5);
  }

  /**
   * A run is handled after its commit; the next run's commit is refused (this member left the group's generation):
   * none of its handlers runs, and once the partition is reported lost its owner drains at once, leaving the decided
   * records to the next owner. Their ids are recorded in this (now stale) window, which is what record-first allows:
   * the next owner, starting at the committed offset 3, applies them once.
   */
  @Test
  void shouldNeverRunTheHandlersOfARunWhoseCommitWasRefused() throws Exception {
    start(DedupKafkaOptions.DEFAULT_MAX_UNANSWERED_OFFSET_COMMITS);
    owner.offer(records(0, 3));
    await().atMost(Duration.ofSeconds(10)).until(() -> owner.wantedNext() == 3);
    commits.commitWanted();
    acknowledged.set(3);
    committer.answer(null);
    await().atMost(Duration.ofSeconds(10)).until(() -> handled.size() == 3);

    owner.offer(records(3, 3));
    await().atMost(Duration.ofSeconds(10)).until(() -> owner.wantedNext() == 6);
    commits.commitWanted();
    assertThat(committer.sent).hasSize(2).last().isEqualTo(Map.of(TP, new OffsetAndMetadata(6)));
    committer.answer(new CommitFailedException());
    commits.commitWanted(); // not sent again at once: a refused commit waits commitIntervalMs
    assertThat(committer.sent).hasSize(2);

    // onPartitionsLost: fenced, no commit follows; the owner drains without handling what it holds.
    Future<Void> fenced = owner.fence();
    owner.refuseCommits();
    get(fenced);
    get(owner.stop());

    assertThat(handled).extracting(h -> h[0]).containsExactly(0L, 1L, 2L);
    assertThat(owners.get(TP).committed).isEqualTo(3);
    assertThat(get(lease.partition().check(new DedupEvent("u-3"))).verdict()).as("recorded before the refusal")
        .isEqualTo(DedupVerdict.DUPLICATE);
  }

  /**
   * Twelve records in runs of five: while the commit of the first run is on its way the owner decides the next runs
   * and asks for their commits, until {@code maxUnansweredOffsetCommits} commits are awaited (1: only the first run
   * is decided; 2: two runs; 4: all three, the last one of two records). No handler starts before an acknowledgement
   * past its record, and one acknowledgement answers every commit asked for before it.
   */
  @ParameterizedTest
  @CsvSource({"1, 5", "2, 10", "4, 12"})
  void shouldDecideRunsAheadOnlyWhileFewerThanMaxUnansweredOffsetCommitsAreAwaited(int maxUnanswered,
      long decidedNext) throws Exception {
    start(maxUnanswered);

    owner.offer(records(0, 12));
    await().atMost(Duration.ofSeconds(10)).until(() -> owner.wantedNext() == decidedNext);
    settle();
    assertThat(owner.wantedNext()).as("decided no further").isEqualTo(decidedNext);
    assertThat(owner.committableNext()).isEqualTo(decidedNext);
    assertThat(handled).isEmpty();

    commits.commitWanted();
    acknowledged.set(decidedNext);
    committer.answer(null);
    // The handlers of the acknowledged runs run; the runs left undecided are decided and their commits asked for.
    long acked = decidedNext;
    while (acked < 12) {
      long before = acked;
      await().atMost(Duration.ofSeconds(10)).until(() -> owner.wantedNext() > before);
      commits.commitWanted();
      acked = owners.get(TP).sent;
      acknowledged.set(acked);
      committer.answer(null);
    }

    await().atMost(Duration.ofSeconds(10)).until(() -> handled.size() == 12);
    assertThat(handled).allSatisfy(h -> assertThat(h[1]).as("acknowledged when offset %d started", h[0])
        .isGreaterThan(h[0]));
    assertThat(handled).extracting(h -> h[0]).isSorted();
  }

  /**
   * A record without identity stops the runs checked ahead (nothing behind it is checked before it is dead-lettered at
   * the head). Its offset is covered by the commit of the run before it; when the partition is lost after Kafka
   * acknowledged that commit, the drain still handles the run and dead-letters the record without identity, since
   * the next owner starts after them, and checks nothing after it.
   */
  @Test
  void shouldFinishTheRecordsACommitCoveredWhenFencedAndCheckNothingBehindARecordWithoutIdentity() throws Exception {
    start(DedupKafkaOptions.DEFAULT_MAX_UNANSWERED_OFFSET_COMMITS);
    held = 0;
    List<KafkaConsumerRecord<String, String>> offered = new ArrayList<>(records(0, 5));
    offered.add(new KafkaConsumerRecordImpl<>(new ConsumerRecord<>(TP.topic(), TP.partition(), 5, null, "v")));
    offered.addAll(records(6, 5));
    owner.offer(offered);

    await().atMost(Duration.ofSeconds(10)).until(() -> owner.wantedNext() == 6);
    settle();
    assertThat(owner.wantedNext()).as("nothing checked behind the record without identity").isEqualTo(6);

    commits.commitWanted();
    acknowledged.set(6);
    committer.answer(null);
    await().atMost(Duration.ofSeconds(10)).until(() -> handled.size() == 1); // offset 0's handler holds

    Future<Void> fenced = owner.fence(); // onPartitionsLost: no commit follows
    owner.refuseCommits();
    release.complete();
    get(fenced);
    get(owner.stop());

    assertThat(handled).extracting(h -> h[0]).containsExactly(0L, 1L, 2L, 3L, 4L);
    assertThat(deadLettered).as("covered by the acknowledged commit: the next owner starts after it")
        .containsExactly(5L);
    assertThat(get(lease.partition().check(new DedupEvent("u-6"))).verdict()).as("never checked here")
        .isEqualTo(DedupVerdict.ACCEPTED);
  }

  /** Waits until the owner's context has run everything queued before this call. */
  private void settle() throws Exception {
    Promise<Void> p = Promise.promise();
    lease.partition().context().runOnContext(v -> p.complete());
    get(p.future());
  }

  /** @return {@code n} records at offsets {@code from..}, keyed (and so identified) {@code u-<offset>} */
  private static List<KafkaConsumerRecord<String, String>> records(long from, int n) {
    List<KafkaConsumerRecord<String, String>> out = new ArrayList<>();
    for (long o = from; o < from + n; o++) {
      out.add(new KafkaConsumerRecordImpl<>(new ConsumerRecord<>(TP.topic(), TP.partition(), o, "u-" + o, "v")));
    }
    return out;
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** A committer whose async commits the test answers, in order, as Kafka would on the poll thread. */
  private static final class HandCommitter implements GroupCommitter {
    final List<Map<TopicPartition, OffsetAndMetadata>> sent = new ArrayList<>();
    private final List<OffsetCommitCallback> unanswered = new ArrayList<>();

    @Override
    public void commitAsync(Map<TopicPartition, OffsetAndMetadata> offsets, OffsetCommitCallback callback) {
      sent.add(Map.copyOf(offsets));
      unanswered.add(callback);
    }

    @Override
    public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
      throw new UnsupportedOperationException("not used by these tests");
    }

    /** Answers the oldest unanswered commit: accepted if {@code failure} is null, else refused with it. */
    void answer(Exception failure) {
      unanswered.remove(0).onComplete(failure == null ? sent.get(sent.size() - 1 - unanswered.size()) : null,
          failure);
    }
  }
}
