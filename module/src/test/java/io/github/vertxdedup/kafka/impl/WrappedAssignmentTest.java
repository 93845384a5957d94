package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.UncoveredPolicy;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.RecordHandler;
import io.github.vertxdedup.testing.LogCapture;
import io.github.vertxdedup.time.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.clients.consumer.RetriableCommitFailedException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fence of a wrapped Vert.x consumer ({@link WrappedConsumer}, {@link WrappedAssignment}), step by step: the
 * Vert.x consumer runs over Kafka's {@link MockConsumer}, whose rebalances the test triggers inside a {@code poll}, as
 * the group coordinator would, and the window of the partition is held or probed through the same in-memory window
 * store, under other instance ids.
 */
class WrappedAssignmentTest {

  private static final String TOPIC = "orders";
  private static final String GROUP = "billing";
  private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

  private Vertx vertx;
  private Context context;
  private RecordingConsumer mock;
  private DedupKafkaConsumer<String, String> wrapped;
  private final ManualClock clock = new ManualClock(1_700_000_000_000L);
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    context = vertx.getOrCreateContext();
    mock = new RecordingConsumer();
    mock.updateBeginningOffsets(Map.of(TP, 0L));
  }

  @AfterEach
  void tearDown() throws Exception {
    if (wrapped != null) {
      get(wrapped.close());
    }
    get(vertx.close());
  }

  private static DedupOptions dedup() {
    return new DedupOptions().setAddress("test.wrapped").setWindow(Duration.ofMinutes(10))
        .setUncoveredPolicy(UncoveredPolicy.ACCEPT);
  }

  private static DedupKafkaOptions options(AtomicityMode mode) {
    return new DedupKafkaOptions().setDedup(dedup()).setMode(mode).setBackoffInitialMs(1).setBackoffMaxMs(20)
        .setPollTimeoutMs(20).setCommitIntervalMs(20);
  }

  private static Map<String, String> config(String autoCommit) {
    Map<String, String> c = new HashMap<>();
    c.put("group.id", GROUP);
    if (autoCommit != null) {
      c.put("enable.auto.commit", autoCommit);
    }
    return c;
  }

  /** The window store of the partition's other owners: same Vert.x instance, so the same windows; no waiting. */
  private PartitionWindows otherOwners() {
    return PartitionWindows.create(vertx, dedup(), clock, null, 0);
  }

  /** Wraps a Vert.x consumer over {@link #mock} (created on {@link #context}) and subscribes it. */
  private DedupKafkaConsumer<String, String> wrap(AtomicityMode mode, RecordHandler<String, String> handler)
      throws Exception {
    wrapped = on(() -> {
      KafkaConsumer<String, String> kafka = KafkaConsumer.create(vertx, mock);
      DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>wrap(vertx, kafka, config("false"),
              options(mode), clock)
          .identity(IdentityExtractor.recordKey())
          .handler(handler)
          .meterRegistry(registry);
      return c.subscribe(TOPIC).map(c);
    });
    return wrapped;
  }

  private Future<Void> credit(String id) {
    handled.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
    return Future.succeededFuture();
  }

  private static ConsumerRecord<String, String> record(long offset, String id) {
    return new ConsumerRecord<>(TOPIC, 0, offset, id, "v");
  }

  /** A {@link MockConsumer} that keeps every offset commit it was asked for (its {@code committed} answers 0 for a
   * partition not assigned). */
  private static final class RecordingConsumer extends MockConsumer<String, String> {
    final List<Map<TopicPartition, OffsetAndMetadata>> commits = new CopyOnWriteArrayList<>();
    /** While set, every offset commit fails with it. */
    volatile RuntimeException commitFailure;
    /** So many of the next resumes fail, as Kafka's consumer fails one of a partition it does not hold. */
    final AtomicInteger resumeFailures = new AtomicInteger();
    /** Offset commits asked for, refused ones included. */
    final AtomicInteger commitAttempts = new AtomicInteger();
    /** While set, a rebalance to no partition calls no assigned listener: the next rebalance completes it (eager). */
    volatile boolean eager;

    RecordingConsumer() {
      super(OffsetResetStrategy.EARLIEST);
    }

    /** The group the consumer was created with (Kafka's mock answers a dummy one). */
    @Override
    public ConsumerGroupMetadata groupMetadata() {
      return new ConsumerGroupMetadata(GROUP);
    }

    /** Subscribes with a listener that leaves out an empty assignment while {@link #eager} is set. */
    @Override
    public synchronized void subscribe(Collection<String> topics, ConsumerRebalanceListener listener) {
      super.subscribe(topics, new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
          listener.onPartitionsRevoked(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
          if (!(eager && partitions.isEmpty())) {
            listener.onPartitionsAssigned(partitions);
          }
        }
      });
    }

    @Override
    public synchronized void resume(Collection<TopicPartition> partitions) {
      if (resumeFailures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw new IllegalStateException("No current assignment for partition " + partitions);
      }
      super.resume(partitions);
    }

    @Override
    public synchronized void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
      commitAttempts.incrementAndGet();
      RuntimeException failure = commitFailure;
      if (failure != null) {
        throw failure;
      }
      commits.add(Map.copyOf(offsets));
      super.commitSync(offsets);
    }

    /** Commits as another member of the group would: neither counted nor refused. */
    synchronized void commitByAnotherMember(Map<TopicPartition, OffsetAndMetadata> offsets) {
      super.commitSync(offsets);
    }
  }

  /** @return the highest offset committed for {@link #TP}, or -1 if none */
  private long committed() {
    return mock.commits.stream().filter(c -> c.containsKey(TP)).mapToLong(c -> c.get(TP).offset()).max().orElse(-1);
  }

  /**
   * Wraps a record-first consumer whose offset commits Kafka refuses (a rebalance in progress), assigns it {@link #TP}
   * and delivers {@code ids} from offset 0: they are checked (their ids recorded), and their handlers wait for a commit
   * past them that is refused. Rebalances are eager from then on.
   */
  private DedupKafkaConsumer<String, String> checkedWithCommitsRefused(String... ids) throws Exception {
    mock.commitFailure = new RebalanceInProgressException("the group is rebalancing");
    DedupKafkaConsumer<String, String> c = wrap(AtomicityMode.RECORD_FIRST, r -> credit(r.key()));
    mock.schedulePollTask(() -> {
      mock.rebalance(List.of(TP));
      for (int i = 0; i < ids.length; i++) {
        mock.addRecord(record(i, ids[i]));
      }
    });
    await().atMost(Duration.ofSeconds(30)).until(() -> mock.commitAttempts.get() >= 1);
    assertThat(handled).isEmpty();
    mock.eager = true;
    return c;
  }

  /**
   * Revokes {@link #TP} from the consumer (an eager rebalance: no assignment follows yet) and takes its window for
   * {@code owner} once the revoked owner has handed it back.
   */
  private PartitionWindows.Lease revokedThenTakenBy(PartitionWindows others, String owner) {
    mock.schedulePollTask(() -> mock.rebalance(List.of()));
    return await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
        .until(() -> get(others.acquire(GROUP, TP, owner)), lease -> lease != null);
  }

  /**
   * Waits until the partition's owner here runs again and has asked for a commit, lets commits through, and waits
   * until {@code offset} is committed and {@code done} holds, and behind what the consumer's context has queued.
   */
  private void commitsPassOnceStarted(DedupKafkaConsumer<String, String> c, long offset,
      java.util.concurrent.Callable<Boolean> done) throws Exception {
    await().atMost(Duration.ofSeconds(30)).until(() -> mock.commitAttempts.get() >= 2 && c.assignment().contains(TP));
    mock.commitFailure = null;
    await().atMost(Duration.ofSeconds(30)).until(() -> committed() == offset && done.call());
    on(() -> Future.succeededFuture());
  }

  private double unhandled() {
    return registry.find("dedup.kafka.unhandled").counters().stream().mapToDouble(u -> u.count()).sum();
  }

  private double duplicates() {
    return registry.find("dedup.kafka.duplicates").counters().stream().mapToDouble(c -> c.count()).sum();
  }

  /** Runs {@code work} on {@link #context} and waits for its future; also a barrier behind what is queued there. */
  private <T> T on(Supplier<Future<T>> work) throws Exception {
    CompletableFuture<T> f = new CompletableFuture<>();
    context.runOnContext(v -> work.get().onComplete(ar -> {
      if (ar.succeeded()) {
        f.complete(ar.result());
      } else {
        f.completeExceptionally(ar.cause());
      }
    }));
    return f.get(30, TimeUnit.SECONDS);
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  @Test
  void shouldRefuseAConsumerThatCommitsOffsetsByItself() {
    KafkaConsumer<String, String> kafka = KafkaConsumer.create(vertx, mock);
    assertThatThrownBy(() -> DedupKafkaConsumer.wrap(vertx, kafka, config("true"), options(AtomicityMode.EFFECT_FIRST)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("enable.auto.commit must be \"false\"").hasMessageContaining("was true");
    // Kafka's default is true: a config without the key is refused too.
    assertThatThrownBy(() -> DedupKafkaConsumer.wrap(vertx, kafka, config(null), options(AtomicityMode.EFFECT_FIRST)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("enable.auto.commit must be \"false\"").hasMessageContaining("is absent");
    assertThat(DedupKafkaConsumer.wrap(vertx, kafka, config("FALSE"), options(AtomicityMode.EFFECT_FIRST)))
        .isNotNull();
  }

  @Test
  void shouldRefuseTheChangelog() {
    KafkaConsumer<String, String> kafka = KafkaConsumer.create(vertx, mock);
    assertThatThrownBy(() -> DedupKafkaConsumer.wrap(vertx, kafka, config("false"),
        options(AtomicityMode.EFFECT_FIRST).setChangelog(true)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("changelog must be false for a wrapped consumer");
  }

  @Test
  void shouldRefuseAVertxConsumerThatIsAlreadySubscribed() throws Exception {
    KafkaConsumer<String, String> kafka = on(() -> {
      KafkaConsumer<String, String> k = KafkaConsumer.create(vertx, mock);
      return k.subscribe(TOPIC).map(k);
    });
    DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>wrap(vertx, kafka, config("false"),
            options(AtomicityMode.EFFECT_FIRST))
        .identity(IdentityExtractor.recordKey()).handler(r -> credit(r.key()));
    wrapped = c;
    assertThatThrownBy(() -> get(c.subscribe(TOPIC))).isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already subscribed to [orders]: wrap it before it subscribes");
  }

  /** A closed wrapped consumer cannot be subscribed: the Vert.x consumer is not subscribed behind its back. */
  @Test
  void shouldRefuseToSubscribeAfterClose() throws Exception {
    KafkaConsumer<String, String> kafka = KafkaConsumer.create(vertx, mock);
    DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>wrap(vertx, kafka, config("false"),
            options(AtomicityMode.EFFECT_FIRST))
        .identity(IdentityExtractor.recordKey()).handler(r -> credit(r.key()));
    get(c.close());
    assertThatThrownBy(() -> get(c.subscribe(TOPIC))).isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(IllegalStateException.class).hasMessageContaining("the consumer is closed");
    assertThat(mock.subscription()).isEmpty();
  }

  /**
   * {@code close} overtakes a {@code subscribe} still asking the Vert.x consumer for its subscription: the subscribe
   * fails, and the closed Vert.x consumer is neither given handlers nor subscribed.
   */
  @Test
  void shouldFailASubscribeThatCloseOvertook() throws Exception {
    KafkaConsumer<String, String> kafka = KafkaConsumer.create(vertx, mock);
    DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>wrap(vertx, kafka, config("false"),
            options(AtomicityMode.EFFECT_FIRST))
        .identity(IdentityExtractor.recordKey()).handler(r -> credit(r.key()));
    CompletableFuture<Future<Void>> subscribed = new CompletableFuture<>();
    CompletableFuture<Future<Void>> closed = new CompletableFuture<>();
    context.runOnContext(v -> {
      subscribed.complete(c.subscribe(TOPIC));
      closed.complete(c.close());
    });
    assertThatThrownBy(() -> get(subscribed.get(30, TimeUnit.SECONDS))).isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(IllegalStateException.class)
        .hasMessageContaining("the consumer was closed while it subscribed");
    get(closed.get(30, TimeUnit.SECONDS));
    assertThat(mock.subscription()).isEmpty();
    assertThat(mock.closed()).isTrue();
  }

  /**
   * The group (and static instance id) are the consumer's: a config map that names another is refused, naming the
   * key, and one without {@code group.id} takes the consumer's, after which the windows are the consumer's group's.
   */
  @Test
  void shouldTakeTheGroupFromTheConsumerAndRefuseAMapThatNamesAnother() throws Exception {
    KafkaConsumer<String, String> kafka = KafkaConsumer.create(vertx, mock);
    Map<String, String> otherGroup = config("false");
    otherGroup.put("group.id", "shipping");
    assertThatThrownBy(() -> DedupKafkaConsumer.wrap(vertx, kafka, otherGroup, options(AtomicityMode.EFFECT_FIRST)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kafkaConfig group.id is shipping but the Vert.x consumer's is billing");
    Map<String, String> staticMember = config("false");
    staticMember.put("group.instance.id", "node-1");
    assertThatThrownBy(() -> DedupKafkaConsumer.wrap(vertx, kafka, staticMember,
            options(AtomicityMode.EFFECT_FIRST)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kafkaConfig group.instance.id is node-1 but the Vert.x consumer has none");

    Map<String, String> noGroup = config("false");
    noGroup.remove("group.id");
    wrapped = on(() -> {
      DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>wrap(vertx,
              KafkaConsumer.create(vertx, mock), noGroup, options(AtomicityMode.EFFECT_FIRST), clock)
          .identity(IdentityExtractor.recordKey()).handler(r -> credit(r.key())).meterRegistry(registry);
      return c.subscribe(TOPIC).map(c);
    });
    mock.schedulePollTask(() -> {
      mock.rebalance(List.of(TP));
      mock.addRecord(record(0, "a"));
    });
    await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 1);
    assertThatThrownBy(() -> get(otherOwners().acquire(GROUP, TP, "probe")))
        .as("the window of the consumer's group is held").hasMessageContaining("still held by " + wrapped.instanceId());
  }

  /**
   * Offset commits that keep failing are logged at WARN naming the partition and the cause (one failure alone, as
   * during a rebalance, stays at DEBUG); once the broker takes them again the offsets are committed.
   */
  @Test
  void shouldWarnNamingThePartitionWhenOffsetCommitsKeepFailing() throws Exception {
    try (LogCapture log = LogCapture.of(WrappedConsumer.class.getName(), Level.WARN)) {
      mock.commitFailure = new RetriableCommitFailedException("the coordinator is out of reach");
      wrap(AtomicityMode.RECORD_FIRST, r -> credit(r.key()));
      mock.schedulePollTask(() -> {
        mock.rebalance(List.of(TP));
        mock.addRecord(record(0, "a"));
        mock.addRecord(record(1, "b"));
      });
      await().atMost(Duration.ofSeconds(10)).until(() -> log.at(Level.WARN).stream()
          .anyMatch(l -> l.message().contains("offset commit failed")));
      assertThat(log.at(Level.WARN)).filteredOn(l -> l.message().contains("offset commit failed")).first()
          .satisfies(l -> assertThat(l.message()).startsWith("[orders-0]: offset commit failed 2 times in a row")
              .contains("the coordinator is out of reach"));
      assertThat(committed()).isEqualTo(-1);
      mock.commitFailure = null;
      await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 2);
    }
  }

  /**
   * The rebalance handlers run after the rebalance: the partition is assigned, and its first records delivered,
   * while another owner still holds its window. They wait, kept and paused, with no owner started, until the window
   * is handed over; then each id is handled once, in offset order, and the partition is resumed.
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldKeepAPartitionsRecordsPausedUntilItsWindowIsHandedOver(AtomicityMode mode) throws Exception {
    PartitionWindows others = otherOwners();
    PartitionWindows.Lease held = get(others.acquire(GROUP, TP, "previous-owner"));
    DedupKafkaConsumer<String, String> c = wrap(mode, r -> credit(r.key()));
    mock.schedulePollTask(() -> {
      mock.rebalance(List.of(TP));
      mock.addRecord(record(0, "a"));
      mock.addRecord(record(1, "b"));
      mock.addRecord(record(2, "a"));
    });
    await().atMost(Duration.ofSeconds(30)).until(() -> mock.paused().contains(TP));
    // The poll that assigned the partition returned its first records before the pause took effect.
    assertThat(mock.position(TP)).isEqualTo(3);
    mock.addRecord(record(3, "c"));
    mock.addRecord(record(4, "b"));
    on(() -> Future.succeededFuture()); // behind the delivery of that poll, queued before the pause was asked for
    assertThat(handled).as("nothing handled while another owner holds the window").isEmpty();
    assertThat(c.assignment()).isEmpty();
    assertThat(mock.position(TP)).as("nothing read while paused").isEqualTo(3);

    get(others.release(held));
    await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 5);
    assertThat(handled).containsOnlyKeys("a", "b", "c").allSatisfy((id, n) -> assertThat(n.get()).isOne());
    assertThat(duplicates()).isEqualTo(2);
    assertThat(c.assignment()).containsExactly(TP);
    assertThat(mock.paused()).isEmpty();
  }

  /**
   * The resume of a partition whose window was handed over fails once (Kafka's consumer refuses a resume of a
   * partition it does not hold at that moment): it is resumed again, and its records are read and handled, instead of
   * the partition staying paused with nothing to wake it.
   */
  @Test
  void shouldResumeAPartitionAgainWhenItsResumeFailed() throws Exception {
    PartitionWindows others = otherOwners();
    PartitionWindows.Lease held = get(others.acquire(GROUP, TP, "previous-owner"));
    DedupKafkaConsumer<String, String> c = wrap(AtomicityMode.EFFECT_FIRST, r -> credit(r.key()));
    mock.schedulePollTask(() -> {
      mock.rebalance(List.of(TP));
      mock.addRecord(record(0, "a"));
    });
    await().atMost(Duration.ofSeconds(30)).until(() -> mock.paused().contains(TP));
    mock.addRecord(record(1, "b"));
    mock.addRecord(record(2, "c"));
    mock.resumeFailures.set(1);

    get(others.release(held));
    await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 3);
    assertThat(mock.resumeFailures).as("the failed resume was tried").hasValue(0);
    assertThat(handled).containsOnlyKeys("a", "b", "c").allSatisfy((id, n) -> assertThat(n.get()).isOne());
    assertThat(c.assignment()).containsExactly(TP);
    assertThat(mock.paused()).isEmpty();
  }

  /**
   * Record-first, an eager rebalance that refuses the commit in flight and gives the partition back to this consumer:
   * the revoked owner checked {@code a} and {@code b} (their ids recorded) and never handled them; its next owner
   * here, reading them again, finds them recorded and handles each once instead of dropping them as duplicates. The
   * copy of {@code a} is a duplicate, and nothing is counted in {@code dedup.kafka.unhandled}.
   */
  @Test
  void shouldHandleWhatARevokedRecordFirstOwnerCheckedWhenThePartitionComesBack() throws Exception {
    DedupKafkaConsumer<String, String> c = checkedWithCommitsRefused("a", "b", "a");
    mock.schedulePollTask(() -> {
      mock.rebalance(List.of());
      mock.rebalance(List.of(TP));
      // Nothing was committed: the partition is read again from its start.
      mock.addRecord(record(0, "a"));
      mock.addRecord(record(1, "b"));
      mock.addRecord(record(2, "a"));
    });
    commitsPassOnceStarted(c, 3, () -> handled.size() == 2);
    assertThat(handled).containsOnlyKeys("a", "b").allSatisfy((id, n) -> assertThat(n.get()).isOne());
    assertThat(unhandled()).isZero();
    assertThat(duplicates()).isEqualTo(1);
  }

  /**
   * As above, but the next assignment is revoked again while its window is not ready yet (another owner holds it):
   * what the first owner left is kept for the assignment after, which gives the partition back, and its owner handles
   * {@code a} and {@code b} once; nothing is counted in {@code dedup.kafka.unhandled}.
   */
  @Test
  void shouldKeepWhatARevokedOwnerLeftAcrossAnAssignmentRevokedBeforeItsWindowWasReady() throws Exception {
    DedupKafkaConsumer<String, String> c = checkedWithCommitsRefused("a", "b");
    // Once the revoked owner handed the window back, another owner holds it: the next start here waits for it.
    PartitionWindows others = otherOwners();
    PartitionWindows.Lease blocker = revokedThenTakenBy(others, "blocker");
    mock.schedulePollTask(() -> mock.rebalance(List.of(TP)));
    await().atMost(Duration.ofSeconds(30)).until(() -> mock.paused().contains(TP)); // assigned: paused, starting
    java.util.concurrent.CountDownLatch revokedAgain = new java.util.concurrent.CountDownLatch(1);
    mock.schedulePollTask(() -> {
      mock.rebalance(List.of());
      revokedAgain.countDown();
    });
    assertThat(revokedAgain.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    on(() -> Future.succeededFuture()); // the revocation has reached the consumer
    assertThat(c.assignment()).isEmpty();
    get(others.release(blocker));

    mock.schedulePollTask(() -> {
      mock.rebalance(List.of(TP));
      mock.addRecord(record(0, "a"));
      mock.addRecord(record(1, "b"));
    });
    commitsPassOnceStarted(c, 2, () -> true);
    assertThat(handled).containsOnlyKeys("a", "b").allSatisfy((id, n) -> assertThat(n.get()).isOne());
    assertThat(unhandled()).isZero();
  }

  /**
   * As above, but the next owner reads past what the revoked owner left (Kafka delivers from offset 2, as after an
   * offset reset forward): those records will not come again, so they are counted in {@code dedup.kafka.unhandled}
   * as soon as a later record is read, not when the owner stops.
   */
  @Test
  void shouldCountWhatARevokedOwnerLeftOnceTheNextOwnerHereReadsPastIt() throws Exception {
    DedupKafkaConsumer<String, String> c = checkedWithCommitsRefused("a", "b");
    mock.schedulePollTask(() -> {
      mock.rebalance(List.of());
      mock.rebalance(List.of(TP));
      mock.addRecord(record(2, "c"));
    });
    commitsPassOnceStarted(c, 3, () -> handled.containsKey("c"));
    assertThat(handled).containsOnlyKeys("c");
    assertThat(c.assignment()).as("still running: counted before its owner stops").containsExactly(TP);
    assertThat(unhandled()).isEqualTo(2);
  }

  /**
   * As above, but this consumer misses the generation between (a lost partition): another member of the group owns
   * the partition meanwhile, handles {@code a} and {@code b} and commits past {@code a} only before it loses the
   * partition. Handing {@code b} over would apply it twice, so nothing is handed over: read again from the group's
   * offset, {@code b} is a duplicate (the window recorded it), {@code c} is handled, and the two records the revoked
   * owner left ({@code a} and {@code b}) are counted in {@code dedup.kafka.unhandled}.
   */
  @Test
  void shouldNotHandOverWhatARevokedOwnerLeftWhenAnotherMemberCommittedThePartitionSince() throws Exception {
    DedupKafkaConsumer<String, String> c = checkedWithCommitsRefused("a", "b");
    // This consumer misses the generation between (an eager rebalance whose assignment it never learnt, a lost
    // partition): it sees the revocation, then the partition back.
    // Meanwhile another member owns the partition with the same window (one store here), handles a and b, and
    // commits past a.
    PartitionWindows others = otherOwners();
    PartitionWindows.Lease other = revokedThenTakenBy(others, "another-member");
    others.offsetsCommitted(other, 1);
    mock.commitByAnotherMember(Map.of(TP, new OffsetAndMetadata(1)));
    get(others.release(other));
    mock.schedulePollTask(() -> {
      mock.rebalance(List.of(TP));
      mock.addRecord(record(1, "b"));
      mock.addRecord(record(2, "c"));
    });
    commitsPassOnceStarted(c, 3, () -> handled.containsKey("c"));
    assertThat(handled).containsOnlyKeys("c");
    assertThat(unhandled()).isEqualTo(2);
    assertThat(duplicates()).isEqualTo(1);
  }

  /**
   * A partition revoked while its owner's handler runs: no offset of it is committed once the revocation reached the
   * consumer, and its window is not handed over before the owner finished what it decided. The next owner finds the
   * in-flight record recorded; in effect-first mode the claim of the record behind it, whose handler had not
   * started, was given back for the next owner to take, while record-first finished it (its id was already
   * recorded).
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldCommitNothingOfARevokedPartitionAndHandItsWindowOverOnceItsOwnerFinished(AtomicityMode mode)
      throws Exception {
    Promise<Void> slow = Promise.promise();
    AtomicInteger slowCalls = new AtomicInteger();
    DedupKafkaConsumer<String, String> c = wrap(mode, r -> {
      if (r.key().equals("slow")) {
        slowCalls.incrementAndGet();
        return slow.future();
      }
      return credit(r.key());
    });
    mock.schedulePollTask(() -> {
      mock.rebalance(List.of(TP));
      mock.addRecord(record(0, "x"));
      mock.addRecord(record(1, "slow"));
      mock.addRecord(record(2, "y"));
    });
    // Record-first commits the decided run (x, slow, y) before its handlers run; effect-first what is done with (x).
    long highest = mode == AtomicityMode.RECORD_FIRST ? 3 : 1;
    await().atMost(Duration.ofSeconds(30)).until(() -> slowCalls.get() == 1 && committed() == highest);

    mock.schedulePollTask(() -> mock.rebalance(List.of()));
    await().atMost(Duration.ofSeconds(30)).until(() -> c.assignment().isEmpty());
    PartitionWindows others = otherOwners();
    assertThatThrownBy(() -> get(others.acquire(GROUP, TP, "next-owner")))
        .as("the window stays with the revoked owner while its handler runs")
        .hasMessageContaining("still held by " + c.instanceId());

    credit("slow");
    context.runOnContext(v -> slow.complete());
    PartitionWindows.Lease next = await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
        .until(() -> get(others.acquire(GROUP, TP, "next-owner")), lease -> lease != null);
    assertThat(committed()).as("nothing committed after the revocation").isEqualTo(highest);
    assertThat(get(next.partition().check(new DedupEvent("slow"))).verdict()).isEqualTo(DedupVerdict.DUPLICATE);
    if (mode == AtomicityMode.EFFECT_FIRST) {
      assertThat(handled).containsOnlyKeys("x", "slow");
      assertThat(get(next.partition().check(new DedupEvent("y"))).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
    } else {
      assertThat(handled).containsOnlyKeys("x", "slow", "y");
      assertThat(get(next.partition().check(new DedupEvent("y"))).verdict()).isEqualTo(DedupVerdict.DUPLICATE);
    }
    assertThat(slowCalls).hasValue(1);
    get(others.release(next));
  }

  /**
   * Kafka has no offset of the group, the window store recorded one (a deleted group, expired offsets): the consumer
   * seeks there, and drops the records it read before the seek, which come again from the seek position.
   */
  @Test
  void shouldSeekToTheOffsetTheWindowRecordedWhenKafkaHasNone() throws Exception {
    PartitionWindows others = otherOwners();
    PartitionWindows.Lease earlier = get(others.acquire(GROUP, TP, "earlier-owner"));
    others.offsetsCommitted(earlier, 2);
    get(others.release(earlier));
    wrap(AtomicityMode.RECORD_FIRST, r -> credit(r.key()));
    mock.schedulePollTask(() -> {
      mock.rebalance(List.of(TP));
      for (int i = 0; i < 4; i++) {
        mock.addRecord(record(i, "id-" + i));
      }
    });
    await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> mock.position(TP) == 2);
    mock.addRecord(record(2, "id-2"));
    mock.addRecord(record(3, "id-3"));
    await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 4);
    assertThat(handled).containsOnlyKeys("id-2", "id-3").allSatisfy((id, n) -> assertThat(n.get()).isOne());
    assertThat(duplicates()).isZero();
  }
}
