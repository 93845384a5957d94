package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupLookup;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.EntryState;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DeadLetter;
import io.github.vertxdedup.kafka.DeadLetterHandler;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.EventTimeSource;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.RecordHandler;
import io.github.vertxdedup.kafka.RecordIdentity;
import io.github.vertxdedup.window.CapacityPolicy;
import io.github.vertxdedup.time.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.kafka.client.consumer.impl.KafkaConsumerRecordImpl;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The partition owner alone, on its window's context; a wrapping window slows the window's commits down, records
 * the events it is asked to decide, or answers a verdict of the test's choosing. What a window holds is looked up
 * over the event bus, where the window also listens.
 */
class PartitionOwnerTest {

  private static final TopicPartition TP = new TopicPartition("orders", 0);
  private static final long LEASE_MS = 1_000;

  @TempDir
  Path dir;
  private Vertx vertx;
  private final ManualClock clock = new ManualClock(1_700_000_000_000L);
  private DedupOptions windowOptions;
  private LocalPartition window;

  /**
   * The window: memory only, W = 10 minutes, its memory beginning at the clock's start, and the service's default
   * {@code uncoveredPolicy} UNKNOWN (the consumer configures its windows with ACCEPT instead: here an event older
   * than the window covers is answered UNKNOWN, a verdict the owner does not handle).
   */
  @BeforeEach
  void setUp() throws Exception {
    vertx = Vertx.vertx();
    windowOptions = new DedupOptions().setAddress("test.owner").setPartitions(1).setWindow(Duration.ofMinutes(10));
    window = get(LocalPartition.deployInMemory(vertx, windowOptions, clock, null));
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static List<KafkaConsumerRecord<String, String>> records(int n) {
    return records(0, n);
  }

  /** @return {@code n} records at offsets {@code fromOffset..}, keyed (and so identified) {@code u-0 .. u-(n-1)} */
  private static List<KafkaConsumerRecord<String, String>> records(long fromOffset, int n) {
    List<KafkaConsumerRecord<String, String>> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(record(fromOffset + i, "u-" + i));
    }
    return out;
  }

  /** @return a record of {@link #TP} at {@code offset}, keyed (and so identified) {@code key}, wrapped as polled */
  private static KafkaConsumerRecord<String, String> record(long offset, String key) {
    return new KafkaConsumerRecordImpl<>(new ConsumerRecord<>(TP.topic(), TP.partition(), offset, key, "v"));
  }

  /** @return window settings with a {@value #LEASE_MS} ms lease, at their own address */
  private DedupOptions shortLease(String address) {
    return new DedupOptions().setAddress(address).setPartitions(1).setWindow(Duration.ofMinutes(10))
        .setLeaseMs(LEASE_MS).setJournalDir(dir.toString()).setJournalSync(SyncPolicy.NONE);
  }

  /** @return a window of its own, deployed, with {@code options}, on a journal in {@code dir} or in memory */
  private LocalPartition deploy(DedupOptions options, boolean journal) throws Exception {
    return get(journal
        ? LocalPartition.deployJournaled(vertx, options, clock, dir.resolve("journal"), null)
        : LocalPartition.deployInMemory(vertx, options, clock, null));
  }

  /** @return what the window deployed with {@code options} holds for {@code id}, asked over the event bus */
  private Future<DedupLookup> lookup(DedupOptions options, String id) {
    return DedupClient.create(vertx, options).lookup(new DedupEvent(id));
  }

  /** @return an effect-first owner of {@code w}, whose lease is {@code options}' */
  private PartitionOwner<String, String> effectFirstOwner(LocalPartition w, DedupOptions options,
      RecordHandler<String, String> handler, SimpleMeterRegistry registry) {
    DedupKafkaOptions o = new DedupKafkaOptions().setMode(AtomicityMode.EFFECT_FIRST).setDedup(options);
    return newOwner(w.context(), w, o, handler, null, registry, () -> { });
  }

  /**
   * @return an owner of {@link #TP} on {@code context} that decides through {@code client}, identifies records by
   *     their key, names {@code instance-1} as its claimer and counts in {@code registry}
   */
  private PartitionOwner<String, String> newOwner(Context context, LocalPartition client, DedupKafkaOptions options,
      RecordHandler<String, String> handler, DeadLetterHandler<String, String> deadLetters,
      SimpleMeterRegistry registry, Runnable wakePoll) {
    AckingWake wake = new AckingWake(wakePoll);
    OwnerConfig<String, String> config = new OwnerConfig<>(vertx, options, IdentityExtractor.recordKey(), handler,
        deadLetters, clock, "instance-1", wake);
    return wake.of(new PartitionOwner<>(config, TP, context, client,
        new KafkaMetrics(registry, "g", TP.topic(), TP.partition())));
  }

  /**
   * The poll thread's part for an owner: each commit a record-first owner asks for before its handlers run is
   * acknowledged at once, as Kafka would ({@link PartitionOwner#committed}); every other wake goes to {@code others}.
   * Called on the owner's context only.
   */
  private static final class AckingWake implements Runnable {
    private final Runnable others;
    private PartitionOwner<?, ?> owner;
    private long asked = -1;

    AckingWake(Runnable others) {
      this.others = others;
    }

    <T extends PartitionOwner<?, ?>> T of(T o) {
      owner = o;
      return o;
    }

    @Override
    public void run() {
      long wanted = owner.wantedNext();
      if (wanted > asked) {
        asked = wanted;
        owner.committed(wanted);
      } else {
        others.run();
      }
    }
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static double count(SimpleMeterRegistry registry, String name) {
    return registry.get(name).counter().count();
  }

  /**
   * One decision run of 300 claims under a 1 s lease, each handler taking 20 ms of the injected clock: the run's
   * handlers take six leases in all, so a handler late in the run would start after its claim's lease ended. Every
   * handler starts with at least half the lease ahead (the owner gives back and claims again the run's unstarted
   * claims when less is left), no commit is refused, and when the producer publishes all 300 ids again none is
   * handled twice.
   */
  @Test
  void shouldStartEveryHandlerOfALongRunWithHalfALeaseAheadAndHandleNoIdTwice() throws Exception {
    int n = 300;
    DedupOptions o = shortLease("test.owner.run");
    LocalPartition w = deploy(o, false);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Map<String, Integer> calls = new ConcurrentHashMap<>();
    List<Long> leaseLeftAtStart = new CopyOnWriteArrayList<>();
    List<EntryState> stateAtStart = new CopyOnWriteArrayList<>();
    PartitionOwner<String, String> owner = effectFirstOwner(w, o, r ->
        lookup(o, r.key()).compose(claim -> {
          stateAtStart.add(claim.state());
          leaseLeftAtStart.add(claim.expiresAtMs() - clock.nowMs());
          calls.merge(r.key(), 1, Integer::sum);
          clock.advanceMs(20);
          return Future.<Void>succeededFuture();
        }), registry);

    owner.offer(records(0, n));
    await().atMost(Duration.ofSeconds(30)).until(() -> owner.committableNext() == n);
    owner.offer(records(n, n));
    await().atMost(Duration.ofSeconds(30)).until(() -> owner.committableNext() == 2L * n);

    assertThat(calls).hasSize(n).allSatisfy((id, c) -> assertThat(c).as(id).isEqualTo(1));
    assertThat(stateAtStart).hasSize(n).containsOnly(EntryState.IN_FLIGHT);
    assertThat(leaseLeftAtStart).as("lease left when a handler starts, ms")
        .allSatisfy(left -> assertThat(left).isGreaterThanOrEqualTo(LEASE_MS / 2));
    assertThat(count(registry, "dedup.kafka.lapsed.claims")).isZero();
    assertThat(count(registry, "dedup.kafka.duplicates")).isEqualTo(n);
  }

  /**
   * A handler slower than the whole lease (1.5 s under 1 s): its commit is refused and counted, and so is the commit of
   * the record handled just before it in the same pass of the pump (its handler completed at once, and its commit
   * waited to go with the next ones). No other delivery claimed either id meanwhile, so the owner records both with a
   * check; the journal keeps them, so after a restart of the window the producer's copies of all three ids are
   * duplicates.
   */
  @Test
  void shouldRecordTheIdOfAHandlerSlowerThanTheLeaseWhenNoOtherDeliveryClaimedIt() throws Exception {
    DedupOptions o = shortLease("test.owner.late");
    LocalPartition w = deploy(o, true);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Map<String, Integer> calls = new ConcurrentHashMap<>();
    RecordHandler<String, String> handler = r -> {
      calls.merge(r.key(), 1, Integer::sum);
      if (r.key().equals("u-1")) {
        clock.advanceMs(LEASE_MS + LEASE_MS / 2);
      }
      return Future.succeededFuture();
    };
    PartitionOwner<String, String> owner = effectFirstOwner(w, o, handler, registry);

    owner.offer(records(0, 3));
    await().atMost(Duration.ofSeconds(30)).until(() -> owner.committableNext() == 3);

    assertThat(count(registry, "dedup.kafka.lapsed.claims")).isEqualTo(2);
    assertThat(count(registry, "dedup.kafka.lapsed.claims.recorded")).isEqualTo(2);
    get(owner.stop());
    get(w.undeploy());
    LocalPartition restarted = deploy(o, true);
    for (String id : new String[] {"u-0", "u-1", "u-2"}) {
      assertThat(get(lookup(o, id)).state()).as(id)
          .isEqualTo(EntryState.REMEMBERED);
    }
    PartitionOwner<String, String> next = effectFirstOwner(restarted, o, handler, registry);
    next.offer(records(3, 3));
    await().atMost(Duration.ofSeconds(30)).until(() -> next.committableNext() == 6);
    assertThat(calls).containsOnly(Map.entry("u-0", 1), Map.entry("u-1", 1), Map.entry("u-2", 1));
  }

  /**
   * A handler slower than the whole lease whose id another delivery claimed after the lease ended: the commit is
   * refused and counted, the owner does not record the id (the other claim holds it, and its commit decides), and
   * nothing is counted as recorded.
   */
  @Test
  void shouldLeaveTheIdToTheDeliveryThatClaimedItAfterASlowHandlersLeaseEnded() throws Exception {
    DedupOptions o = shortLease("test.owner.taken");
    LocalPartition w = deploy(o, false);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    AtomicReference<DedupVerdict> otherClaim = new AtomicReference<>();
    PartitionOwner<String, String> owner = effectFirstOwner(w, o, r -> {
      clock.advanceMs(LEASE_MS + LEASE_MS / 2);
      return w.claim(new DedupEvent(r.key()).setClaimer("instance-2")).compose(other -> {
        otherClaim.set(other.verdict());
        return Future.<Void>succeededFuture();
      });
    }, registry);

    owner.offer(records(0, 1));
    await().atMost(Duration.ofSeconds(30)).until(() -> owner.committableNext() == 1);

    assertThat(otherClaim.get()).as("the other delivery's claim").isEqualTo(DedupVerdict.ACCEPTED);
    assertThat(count(registry, "dedup.kafka.lapsed.claims")).isEqualTo(1);
    assertThat(count(registry, "dedup.kafka.lapsed.claims.recorded")).isZero();
    assertThat(get(lookup(o, "u-0")).state()).isEqualTo(EntryState.IN_FLIGHT);
  }

  /**
   * Effect-first pipelines its commits, but no further than {@code maxUnansweredCommits}: with every commit batch
   * answered 20 ms late, a handler starts only while fewer than {@code maxUnansweredCommits} earlier records wait for
   * their commit's answer (so a kill repeats at most {@code maxUnansweredCommits + 1} records). Without the bound the handlers would run ahead of every commit.
   */
  @Test
  void shouldRunNoHandlerWhileMaxUnansweredCommitsAreUnanswered() {
    int cap = 2;
    AtomicInteger commitsAnswered = new AtomicInteger();
    LocalPartition slowCommits = slowCommits(window, commitsAnswered);
    List<Integer> aheadAtStart = new CopyOnWriteArrayList<>();
    AtomicInteger started = new AtomicInteger();
    Set<String> handled = ConcurrentHashMap.newKeySet();
    DedupKafkaOptions options = new DedupKafkaOptions().setMode(AtomicityMode.EFFECT_FIRST)
        .setMaxUnansweredCommits(cap);
    PartitionOwner<String, String> owner = newOwner(window.context(), slowCommits, options, r -> {
      // Records handled before this one whose commit is not answered yet.
      aheadAtStart.add(started.getAndIncrement() - commitsAnswered.get());
      handled.add(r.key());
      return Future.succeededFuture();
    }, null, new SimpleMeterRegistry(), () -> { });

    owner.offer(records(20));

    await().atMost(Duration.ofSeconds(30)).until(() -> owner.committableNext() == 20);
    assertThat(handled).hasSize(20);
    assertThat(owner.buffered()).isZero();
    assertThat(aheadAtStart).hasSize(20).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(cap - 1));
    assertThat(aheadAtStart).as("the pipeline was used").contains(cap - 1);
  }

  /**
   * What becomes committable reaches the poll thread before the handlers run: record-first publishes the decided
   * prefix and waits for its commit, so a handler sees {@code committableNext} already past its own record; the poll
   * loop is woken for those commits and otherwise once, when the buffered count reaches the resume mark (4,000
   * buffered at most, so 2,000), and the meters count every record once.
   */
  @Test
  void shouldPublishEachCommittableRecordAndWakeThePollLoopAtTheResumeMark() {
    int n = 3_000;
    List<Long> lag = new CopyOnWriteArrayList<>();
    List<Integer> bufferedAtWake = new CopyOnWriteArrayList<>();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    AtomicInteger handled = new AtomicInteger();
    PartitionOwner<String, String>[] holder = newOwnerArray();
    DedupKafkaOptions options = new DedupKafkaOptions().setMode(AtomicityMode.RECORD_FIRST)
        .setMaxBufferedPerPartition(4_000);
    holder[0] = newOwner(window.context(), window, options, r -> {
      lag.add(holder[0].committableNext() - r.offset());
      handled.incrementAndGet();
      return Future.succeededFuture();
    }, null, registry, () -> bufferedAtWake.add(holder[0].buffered()));
    List<KafkaConsumerRecord<String, String>> records = records(n);
    // Every tenth record repeats the id of the one before it: a duplicate, committable without the handler.
    for (int i = 10; i < n; i += 10) {
      KafkaConsumerRecord<String, String> prev = records.get(i - 1);
      records.set(i, record(i, prev.key()));
    }

    holder[0].offer(records);

    await().atMost(Duration.ofSeconds(30)).until(() -> holder[0].buffered() == 0);
    assertThat(holder[0].committableNext()).isEqualTo(n);
    assertThat(handled.get()).isEqualTo(n - (n / 10 - 1));
    assertThat(lag).as("the committable offset a handler sees minus its own offset")
        .allSatisfy(l -> assertThat(l).isPositive());
    assertThat(bufferedAtWake).containsExactly(2_000);
    assertThat(registry.get("dedup.kafka.records").counter().count()).isEqualTo(n);
    assertThat(registry.get("dedup.kafka.duplicates").counter().count()).isEqualTo(n / 10 - 1);
  }

  /**
   * A window at capacity under {@code REJECT} still answers the ids it remembers: a batch of records whose ids are
   * remembered, around a new one the full window refuses, makes the duplicates before the refused record committable
   * without calling the handler, and backs off for the refused record alone (the poll loop is asked to pause). Once the
   * window has room (its entries expired) the refused record is decided again and handled, and the duplicate after it
   * is committable with the verdict its batch gave it.
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldMakeTheDuplicatesOfABatchCommittableAndBackOffOnlyForTheIdsAFullWindowRefuses(AtomicityMode mode)
      throws Exception {
    DedupOptions o = new DedupOptions().setAddress("test.owner.full").setPartitions(1)
        .setWindow(Duration.ofMinutes(10)).setMaxIdsPerPartition(3).setCapacityPolicy(CapacityPolicy.REJECT);
    LocalPartition full = deploy(o, false);
    LocalPartition client = full;
    for (String id : List.of("u-0", "u-1", "u-3")) {
      client.check(new DedupEvent(id)).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    List<String> handled = new CopyOnWriteArrayList<>();
    AtomicInteger wakes = new AtomicInteger();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    DedupKafkaOptions options = new DedupKafkaOptions().setMode(mode).setDedup(o)
        .setBackoffInitialMs(5).setBackoffMaxMs(20);
    PartitionOwner<String, String> owner = newOwner(full.context(), client, options, r -> {
      handled.add(r.key());
      return Future.succeededFuture();
    }, null, registry, wakes::incrementAndGet);

    // u-0, u-1 and u-3 are remembered; u-2 is new and the window holds its 3 entries.
    owner.offer(records(4));

    await().atMost(Duration.ofSeconds(10)).until(() -> owner.committableNext() == 2);
    await().atMost(Duration.ofSeconds(10))
        .until(() -> registry.get("dedup.kafka.unavailable").counter().count() >= 3);
    assertThat(owner.committableNext()).as("the refused record holds the offset").isEqualTo(2);
    assertThat(owner.wantsPause()).isTrue();
    assertThat(handled).isEmpty();
    assertThat(registry.get("dedup.kafka.duplicates").counter().count()).isEqualTo(2);

    // The window's entries expire: u-2 finds room when it is decided again.
    clock.advanceMs(Duration.ofMinutes(10).toMillis());
    await().atMost(Duration.ofSeconds(10)).until(() -> owner.committableNext() == 4);
    assertThat(handled).containsExactly("u-2");
    assertThat(registry.get("dedup.kafka.duplicates").counter().count()).isEqualTo(3);
    assertThat(owner.wantsPause()).isFalse();
  }

  /**
   * Record-first, full window: one check batch refuses the head (a new id and a new business key need two entries,
   * the window has room for one) and records the id behind it. Handlers run in offset order, so a fence that came now
   * and stopped deciding would leave that recorded id unhandled: the next owner would find it a duplicate and its
   * effect would be lost. The fence instead goes on deciding the head, and completes once both are handled.
   */
  @Test
  void shouldFinishARecordCheckedBehindARefusedHeadBeforeTheFenceCompletes() throws Exception {
    DedupOptions o = new DedupOptions().setAddress("test.owner.fence.full").setPartitions(1)
        .setWindow(Duration.ofMinutes(10)).setMaxIdsPerPartition(3).setCapacityPolicy(CapacityPolicy.REJECT);
    LocalPartition full = deploy(o, false);
    LocalPartition client = full;
    for (String id : List.of("x", "y")) {
      get(client.check(new DedupEvent(id)));
    }
    List<String> handled = new CopyOnWriteArrayList<>();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    DedupKafkaOptions options = new DedupKafkaOptions().setMode(AtomicityMode.RECORD_FIRST).setDedup(o)
        .setBackoffInitialMs(5).setBackoffMaxMs(20);
    // Record "a" carries a business key as well as its id; "b" its id only.
    IdentityExtractor<String, String> identity =
        r -> r.key().equals("a") ? new RecordIdentity("a", "key-a", null) : RecordIdentity.of(r.key());
    AckingWake wake = new AckingWake(() -> { });
    OwnerConfig<String, String> config = new OwnerConfig<>(vertx, options, identity, r -> {
      handled.add(r.key());
      return Future.succeededFuture();
    }, null, clock, "instance-1", wake);
    PartitionOwner<String, String> owner = wake.of(new PartitionOwner<>(config, TP, full.context(), client,
        new KafkaMetrics(registry, "g", TP.topic(), TP.partition())));

    owner.offer(List.of(record(0, "a"), record(1, "b")));
    await().atMost(Duration.ofSeconds(10)).until(() -> count(registry, "dedup.kafka.unavailable") >= 1);
    assertThat(get(lookup(o, "b")).state()).as("b was checked behind the refused head")
        .isEqualTo(EntryState.REMEMBERED);
    Future<Void> fence = owner.fence();

    // The remembered ids expire: the head finds room when the fence decides it again.
    clock.advanceMs(Duration.ofMinutes(10).toMillis());
    get(fence);
    assertThat(handled).containsExactly("a", "b");
    assertThat(owner.committableNext()).isEqualTo(2);
  }

  /**
   * Record-first, a revocation no commit covered: the owner checked five records (their ids are recorded) and waits
   * for a commit past them that never comes; its commits are refused, it drains without handling them, and stopping
   * counts the five in {@code dedup.kafka.unhandled}, the loss an operator must be able to see.
   */
  @Test
  void shouldCountTheCheckedRecordsARecordFirstOwnerStopsWithoutHandling() throws Exception {
    List<String> handled = new CopyOnWriteArrayList<>();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    DedupKafkaOptions options = new DedupKafkaOptions().setMode(AtomicityMode.RECORD_FIRST).setDedup(windowOptions);
    // The poll thread's part, left undone: no commit is acknowledged.
    OwnerConfig<String, String> config = new OwnerConfig<>(vertx, options, IdentityExtractor.recordKey(), r -> {
      handled.add(r.key());
      return Future.succeededFuture();
    }, null, clock, "instance-1", () -> { });
    PartitionOwner<String, String> owner = new PartitionOwner<>(config, TP, window.context(), window,
        new KafkaMetrics(registry, "g", TP.topic(), TP.partition()));

    owner.offer(records(5));
    await().atMost(Duration.ofSeconds(10)).until(() -> owner.wantedNext() == 5);
    owner.refuseCommits();
    get(owner.fence());
    assertThat(count(registry, "dedup.kafka.unhandled")).as("nothing counted before the owner stops").isZero();
    get(owner.stop());
    get(owner.stop()); // counted once

    assertThat(handled).isEmpty();
    assertThat(count(registry, "dedup.kafka.unhandled")).isEqualTo(5);
    assertThat(get(lookup(windowOptions, "u-4")).state()).isEqualTo(EntryState.REMEMBERED);
  }

  /**
   * A record is wrapped once: the identity extractor, every attempt of the handler (effect-first gives the claim back
   * and claims again between attempts) and the dead-letter handler see the very instance the poll loop handed over,
   * so its headers are converted to {@code KafkaHeader}s at most once.
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldHandTheIdentityExtractorEveryHandlerAttemptAndTheDeadLetterTheRecordItWasOffered(AtomicityMode mode)
      throws Exception {
    List<KafkaConsumerRecord<String, String>> seen = new CopyOnWriteArrayList<>();
    List<DeadLetter<String, String>> dead = new CopyOnWriteArrayList<>();
    DedupKafkaOptions options = new DedupKafkaOptions().setMode(mode).setMaxAttempts(3)
        .setBackoffInitialMs(1).setBackoffMaxMs(1);
    AckingWake wake = new AckingWake(() -> { });
    OwnerConfig<String, String> config = new OwnerConfig<>(vertx, options, r -> {
      seen.add(r);
      return RecordIdentity.of(r.key());
    }, r -> {
      seen.add(r);
      return Future.failedFuture("the effect failed");
    }, d -> {
      dead.add(d);
      return Future.succeededFuture();
    }, clock, "instance-1", wake);
    PartitionOwner<String, String> owner = wake.of(new PartitionOwner<>(config, TP, window.context(), window,
        new KafkaMetrics(new SimpleMeterRegistry(), "g", TP.topic(), TP.partition())));
    KafkaConsumerRecord<String, String> offered = record(0, "failing");

    owner.offer(List.of(offered));

    await().atMost(Duration.ofSeconds(30)).until(() -> owner.committableNext() == 1);
    assertThat(seen).as("the identity extractor, then three handler attempts").hasSize(4)
        .allSatisfy(r -> assertThat(r).isSameAs(offered));
    assertThat(dead).singleElement().satisfies(d -> {
      assertThat(d.reason()).isEqualTo(DeadLetter.Reason.HANDLER_FAILED);
      assertThat(d.attempts()).isEqualTo(3);
      assertThat(d.record()).isSameAs(offered);
    });
  }

  /**
   * A handler that sends each record over the event bus to an address where nobody listens yet (the application's
   * consumer not deployed): the request fails with NO_HANDLERS, which spends no attempt. The record waits, its
   * partition paused, far beyond {@code maxAttempts} calls, nothing is dead-lettered or done with; once a consumer
   * registers, the record is handed over and becomes committable, and the partition resumes.
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldWaitPausedWithoutSpendingAttemptsWhileNobodyListensAtTheHandlersAddress(AtomicityMode mode)
      throws Exception {
    String address = "test.owner.not.deployed." + mode;
    AtomicInteger calls = new AtomicInteger();
    List<DeadLetter<String, String>> dead = new CopyOnWriteArrayList<>();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    DedupKafkaOptions options = new DedupKafkaOptions().setMode(mode).setMaxAttempts(2)
        .setBackoffInitialMs(1).setBackoffMaxMs(5);
    PartitionOwner<String, String> owner = newOwner(window.context(), window, options, r -> {
      calls.incrementAndGet();
      return vertx.eventBus().request(address, r.key()).mapEmpty();
    }, d -> {
      dead.add(d);
      return Future.succeededFuture();
    }, registry, () -> { });

    owner.offer(records(1));

    await().atMost(Duration.ofSeconds(30)).until(() -> calls.get() >= 10);
    assertThat(dead).as("nobody listening is no handler failure").isEmpty();
    // Record-first commits the decided record's offset before its handler runs; effect-first once it is done with.
    assertThat(owner.committableNext()).isEqualTo(mode == AtomicityMode.RECORD_FIRST ? 1 : -1);
    assertThat(owner.wantsPause()).isTrue();

    List<String> received = new CopyOnWriteArrayList<>();
    vertx.eventBus().<String>consumer(address, m -> {
      received.add(m.body());
      m.reply("ok");
    });
    await().atMost(Duration.ofSeconds(30)).until(() -> owner.committableNext() == 1);
    assertThat(received).containsExactly("u-0");
    assertThat(dead).isEmpty();
    assertThat(owner.wantsPause()).isFalse();
    assertThat(count(registry, "dedup.kafka.handler.failures")).isZero();
  }

  /** A record of {@link #TP} whose id is its key, with a create-time timestamp (or none: {@code NO_TIMESTAMP}). */
  private static KafkaConsumerRecord<String, String> stamped(long offset, String key, long timestampMs) {
    return new KafkaConsumerRecordImpl<>(new ConsumerRecord<>(TP.topic(), TP.partition(), offset, timestampMs,
        timestampMs == ConsumerRecord.NO_TIMESTAMP ? TimestampType.NO_TIMESTAMP_TYPE : TimestampType.CREATE_TIME,
        0, 0, key, "v", new RecordHeaders(), Optional.empty()));
  }

  /**
   * An owner over {@code client} whose handler adds each record's key to {@code handled} and whose dead-letter
   * handler collects into {@code dead}, with meters in {@code registry}.
   */
  private PartitionOwner<String, String> owner(LocalPartition client, DedupKafkaOptions options, List<String> handled,
      List<DeadLetter<String, String>> dead, SimpleMeterRegistry registry) {
    return newOwner(window.context(), client, options, r -> {
      handled.add(r.key());
      return Future.succeededFuture();
    }, d -> {
      dead.add(d);
      return Future.succeededFuture();
    }, registry, () -> { });
  }

  /**
   * With {@link EventTimeSource#RECORD_TIMESTAMP} (the default) the check (record-first) or claim (effect-first) of a
   * record carries its timestamp as event time, and a record without a timestamp carries none; with
   * {@link EventTimeSource#NONE} no record carries one.
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldSendTheRecordTimestampAsTheEventTimeOfItsCheckOrClaim(AtomicityMode mode) {
    Map<String, Optional<Long>> eventTimes = new ConcurrentHashMap<>();
    LocalPartition recording = recordingDecisions(window, eventTimes);
    long now = clock.nowMs();
    List<String> handled = new CopyOnWriteArrayList<>();
    PartitionOwner<String, String> stamping = owner(recording, new DedupKafkaOptions().setMode(mode), handled,
        new CopyOnWriteArrayList<>(), new SimpleMeterRegistry());
    stamping.offer(List.of(stamped(0, "stamped", now), stamped(1, "unstamped", ConsumerRecord.NO_TIMESTAMP),
        stamped(2, "ahead", now + 3_600_000)));
    await().atMost(Duration.ofSeconds(30)).until(() -> stamping.committableNext() == 3);

    PartitionOwner<String, String> none = owner(recording, new DedupKafkaOptions().setMode(mode)
        .setEventTimeSource(EventTimeSource.NONE), handled, new CopyOnWriteArrayList<>(), new SimpleMeterRegistry());
    none.offer(List.of(stamped(3, "not-sent", now)));
    await().atMost(Duration.ofSeconds(30)).until(() -> none.committableNext() == 4);

    assertThat(eventTimes).containsExactlyInAnyOrderEntriesOf(Map.of("stamped", Optional.of(now),
        "unstamped", Optional.empty(), "ahead", Optional.of(now + 3_600_000), "not-sent", Optional.empty()));
    assertThat(handled).containsExactly("stamped", "unstamped", "ahead", "not-sent");
  }

  /**
   * A verdict the owner does not handle fails closed. Here the window answers UNKNOWN for a record stamped before its
   * memory began (its {@code uncoveredPolicy} is UNKNOWN, which the consumer never configures): the record goes to
   * the dead-letter handler with {@link DeadLetter.Reason#UNEXPECTED_VERDICT} naming the verdict, counted in
   * {@code dedup.kafka.dead.letters{reason=unexpected_verdict}}, and only then committable; the handler never sees
   * it, and the record after it is handled as usual.
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldDeadLetterAnUnknownVerdictInsteadOfMakingItCommittableUnseen(AtomicityMode mode) throws Exception {
    List<String> handled = new CopyOnWriteArrayList<>();
    List<DeadLetter<String, String>> dead = new CopyOnWriteArrayList<>();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    PartitionOwner<String, String> owner = owner(window, new DedupKafkaOptions().setMode(mode),
        handled, dead, registry);

    owner.offer(List.of(stamped(0, "old", clock.nowMs() - 60_000), stamped(1, "new", clock.nowMs())));

    await().atMost(Duration.ofSeconds(30)).until(() -> owner.committableNext() == 2);
    assertThat(handled).containsExactly("new");
    assertThat(dead).singleElement().satisfies(d -> {
      assertThat(d.reason()).isEqualTo(DeadLetter.Reason.UNEXPECTED_VERDICT);
      assertThat(d.record().key()).isEqualTo("old");
      assertThat(d.detail()).contains("answered UNKNOWN").contains("id 'old'");
    });
    assertThat(registry.get("dedup.kafka.dead.letters").tag("reason", "unexpected_verdict").counter().count())
        .isEqualTo(1);
    assertThat(registry.get("dedup.kafka.records").counter().count()).isEqualTo(2);
    assertThat(lookup(windowOptions, "old")
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).state())
        .as("UNKNOWN records nothing").isEqualTo(EntryState.ABSENT);
  }

  /**
   * Any other verdict the owner does not handle fails closed the same way: a client that answers the decision of one
   * record with a verdict meant for another action (COMMITTED, RELEASED: no window answers a check or a claim so)
   * sends that record to the dead-letter handler, never to the handler and never committable unseen.
   */
  @ParameterizedTest
  @CsvSource({"RECORD_FIRST, COMMITTED", "RECORD_FIRST, RELEASED", "EFFECT_FIRST, COMMITTED",
      "EFFECT_FIRST, RELEASED"})
  void shouldDeadLetterAVerdictMeantForAnotherAction(AtomicityMode mode, DedupVerdict verdict) {
    List<String> handled = new CopyOnWriteArrayList<>();
    List<DeadLetter<String, String>> dead = new CopyOnWriteArrayList<>();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    PartitionOwner<String, String> owner = owner(answeringFor(window, "odd", verdict),
        new DedupKafkaOptions().setMode(mode), handled, dead, registry);

    owner.offer(List.of(stamped(0, "a", clock.nowMs()), stamped(1, "odd", clock.nowMs()),
        stamped(2, "b", clock.nowMs())));

    await().atMost(Duration.ofSeconds(30)).until(() -> owner.committableNext() == 3);
    assertThat(handled).containsExactly("a", "b");
    assertThat(dead).singleElement().satisfies(d -> {
      assertThat(d.reason()).isEqualTo(DeadLetter.Reason.UNEXPECTED_VERDICT);
      assertThat(d.record().key()).isEqualTo("odd");
      assertThat(d.detail()).contains("answered " + verdict);
    });
    assertThat(registry.get("dedup.kafka.dead.letters").tag("reason", "unexpected_verdict").counter().count())
        .isEqualTo(1);
  }

  @SuppressWarnings("unchecked")
  private static PartitionOwner<String, String>[] newOwnerArray() {
    return (PartitionOwner<String, String>[]) new PartitionOwner<?, ?>[1];
  }

  /**
   * An effect-first handler that fails after its partition was fenced (revoked) gives its claim back and is not
   * retried by this owner: the fence completes without waiting out a backoff (here a minute), the handler ran once,
   * and the id is free for the next owner.
   */
  @Test
  void shouldGiveBackAClaimWhoseHandlerFailsAfterTheFenceWithoutRetrying() throws Exception {
    Promise<Void> running = Promise.promise();
    AtomicInteger calls = new AtomicInteger();
    DedupKafkaOptions options = new DedupKafkaOptions().setMode(AtomicityMode.EFFECT_FIRST)
        .setBackoffInitialMs(60_000).setBackoffMaxMs(60_000);
    PartitionOwner<String, String> owner = newOwner(window.context(), window, options, r -> {
      calls.incrementAndGet();
      return running.future();
    }, null, new SimpleMeterRegistry(), () -> { });
    owner.offer(records(1));
    await().atMost(Duration.ofSeconds(30)).until(() -> calls.get() == 1);

    Future<Void> fence = owner.fence();
    window.context().runOnContext(v -> running.fail("the effect failed"));

    fence.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(calls.get()).isEqualTo(1);
    assertThat(lookup(windowOptions, "u-0")
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).state())
        .isEqualTo(EntryState.ABSENT);
    assertThat(owner.committableNext()).as("nothing committable: the next owner reads the record again").isEqualTo(-1);
  }

  /**
   * The window, recording the event time of every event it is asked to check or claim (singly or
   * in a batch) by id, {@code Optional.empty()} for none.
   */
  private static LocalPartition recordingDecisions(LocalPartition window, Map<String, Optional<Long>> eventTimes) {
    return (LocalPartition) Proxy.newProxyInstance(LocalPartition.class.getClassLoader(),
        new Class<?>[] {LocalPartition.class}, (proxy, method, args) -> {
          switch (method.getName()) {
            case "check", "claim" -> record((DedupEvent) args[0], eventTimes);
            case "checkBatch", "claimBatch" -> ((List<?>) args[0]).forEach(e -> record((DedupEvent) e, eventTimes));
            default -> { }
          }
          return method.invoke(window, args);
        });
  }

  private static void record(DedupEvent e, Map<String, Optional<Long>> eventTimes) {
    eventTimes.put(e.getId(), Optional.ofNullable(e.getEventTimeMs()));
  }

  /**
   * A test seam: the window, except that the decision (check or claim, single or batch) of the
   * event whose id is {@code id} is answered {@code verdict}, whatever the window decided.
   */
  @SuppressWarnings("unchecked")
  private static LocalPartition answeringFor(LocalPartition window, String id, DedupVerdict verdict) {
    return (LocalPartition) Proxy.newProxyInstance(LocalPartition.class.getClassLoader(),
        new Class<?>[] {LocalPartition.class}, (proxy, method, args) -> {
          Object result = method.invoke(window, args);
          DedupResult forced = DedupResult.of(verdict, 0);
          return switch (method.getName()) {
            case "check", "claim" -> id.equals(((DedupEvent) args[0]).getId())
                ? ((Future<DedupResult>) result).map(r -> forced) : result;
            case "checkBatch", "claimBatch" -> ((Future<List<DedupBatchResult>>) result).map(rs -> {
              List<?> events = (List<?>) args[0];
              List<DedupBatchResult> out = new ArrayList<>(rs);
              for (int i = 0; i < events.size(); i++) {
                if (id.equals(((DedupEvent) events.get(i)).getId())) {
                  out.set(i, DedupBatchResult.decided(forced));
                }
              }
              return out;
            });
            default -> result;
          };
        });
  }

  /**
   * The window, with each {@code commitBatch} answered 20 ms late (after adding its size to
   * {@code answered}); every other call goes straight through.
   */
  @SuppressWarnings("unchecked")
  private LocalPartition slowCommits(LocalPartition window, AtomicInteger answered) {
    return (LocalPartition) Proxy.newProxyInstance(LocalPartition.class.getClassLoader(),
        new Class<?>[] {LocalPartition.class}, (proxy, method, args) -> {
          Object result = method.invoke(window, args);
          if (!method.getName().equals("commitBatch")) {
            return result;
          }
          int n = ((List<?>) args[0]).size();
          Promise<Object> late = Promise.promise();
          ((Future<Object>) result).onComplete(ar -> vertx.setTimer(20, t -> {
            answered.addAndGet(n);
            late.handle(ar);
          }));
          return late.future();
        });
  }

  @Test
  void shouldNameTheLimitAnUncoveredRecordPassed() {
    long now = 1_700_000_000_000L;
    long w = 600_000;
    long b = 10_000;
    assertThat(FailurePolicy.notCoveredDetail(stamped(0, "k", now - 1_800_000), now, w, b))
        .contains("1800000 ms old, older than the window (600000 ms)");
    assertThat(FailurePolicy.notCoveredDetail(stamped(0, "k", now - 599_000), now, w, b))
        .contains("599000 ms old, older than the window reaches back (600000 ms, at bucket precision of 10000 ms)");
    assertThat(FailurePolicy.notCoveredDetail(stamped(0, "k", now - 60_000), now, w, b))
        .contains("60000 ms old, inside the window (600000 ms) but older than the window's memory, which began later");
  }
}
