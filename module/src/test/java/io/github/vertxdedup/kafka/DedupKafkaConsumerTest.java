package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.kafka.KafkaTestSupport.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.testing.LogCapture;
import io.github.vertxdedup.time.DedupClock;
import io.github.vertxdedup.time.ManualClock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.kafka.client.producer.KafkaHeader;
import io.vertx.kafka.client.producer.KafkaProducer;
import io.vertx.kafka.client.producer.KafkaProducerRecord;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The dedup consumer on a real broker: effects applied once per id, dead letters, offsets. */
class DedupKafkaConsumerTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  private static final AtomicInteger NAMES = new AtomicInteger();

  private Vertx vertx;
  private SimpleMeterRegistry registry;
  private final List<DedupKafkaConsumer<String, String>> consumers = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    registry = new SimpleMeterRegistry();
  }

  @AfterEach
  void tearDown() throws Exception {
    for (DedupKafkaConsumer<String, String> c : consumers) {
      c.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static String name(String prefix) {
    return prefix + "-" + NAMES.incrementAndGet();
  }

  private static DedupKafkaOptions options(AtomicityMode mode) {
    return new DedupKafkaOptions()
        .setDedup(new DedupOptions().setAddress("test.kafka").setWindow(Duration.ofMinutes(10)))
        .setMode(mode)
        .setMaxAttempts(3)
        .setBackoffInitialMs(1)
        .setBackoffMaxMs(20)
        .setPollTimeoutMs(20)
        .setCommitIntervalMs(20);
  }

  /**
   * One test's broker side: a topic of its own (created with {@code partitions} partitions), a group of its own, the
   * ledger the default handler credits and the dead letters the default dead-letter handler collects.
   */
  private record Fixture(String topic, String group, KafkaTestSupport.Ledger ledger,
      List<DeadLetter<String, String>> dead) {
  }

  private static Fixture fixture(String topicPrefix, int partitions) throws Exception {
    Fixture f = new Fixture(name(topicPrefix), name("g"), new KafkaTestSupport.Ledger(), new CopyOnWriteArrayList<>());
    broker.createTopic(f.topic(), partitions);
    return f;
  }

  /**
   * A consumer of the fixture's group, not subscribed yet and closed after the test: identity from the message-id
   * header, a handler crediting the record key to the fixture's ledger, dead letters collected in the fixture,
   * meters in this test's registry. A test replaces what it needs (they can be set again before {@link #subscribe}).
   */
  private DedupKafkaConsumer<String, String> consumer(Fixture f, DedupKafkaOptions options, DedupClock clock) {
    DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>create(vertx,
            broker.consumerConfig(f.group()), options, clock)
        .identity(IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID))
        .handler(r -> f.ledger().credit(r.key()))
        .deadLetterHandler(d -> {
          f.dead().add(d);
          return Future.succeededFuture();
        })
        .meterRegistry(registry);
    consumers.add(c);
    return c;
  }

  /** Subscribes {@code c} to the fixture's topic and waits for it (30 s at most). */
  private static DedupKafkaConsumer<String, String> subscribe(Fixture f, DedupKafkaConsumer<String, String> c)
      throws Exception {
    c.subscribe(f.topic()).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    return c;
  }

  /**
   * Waits until the group's committed offsets of the fixture's topic add up to {@code records} and as many records of
   * it are done with (counted in {@code dedup.kafka.records}): record-first commits a decided run's offsets before its
   * handlers run, so a committed offset alone does not say the handlers ran.
   */
  private void awaitDone(Fixture f, long records) {
    broker.awaitCommitted(f.group(), f.topic(), records);
    await().atMost(Duration.ofSeconds(30)).until(() -> registry.find("dedup.kafka.records").tag("topic", f.topic())
        .counters().stream().mapToDouble(Counter::count).sum() >= records);
  }

  /** The default {@link #consumer} on the system clock, subscribed. */
  private DedupKafkaConsumer<String, String> start(Fixture f, DedupKafkaOptions options) throws Exception {
    return subscribe(f, consumer(f, options, DedupClock.system()));
  }

  /** @return the value of the record's last message-id header, read from its {@code KafkaHeader}s, or null */
  private static String header(KafkaConsumerRecord<String, String> r) {
    String id = null;
    for (KafkaHeader h : r.headers()) {
      if (h.key().equals(KafkaTestSupport.MESSAGE_ID)) {
        id = h.value().toString(StandardCharsets.UTF_8);
      }
    }
    return id;
  }

  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldCreditEachIdOnceWhenTheProducerPublishesItSeveralTimes(AtomicityMode mode) throws Exception {
    Fixture f = fixture("producer-dups", 3);
    start(f, options(mode));
    for (int copy = 0; copy < 3; copy++) {
      for (int i = 0; i < 100; i++) {
        broker.send(f.topic(), "id-" + i, "v");
      }
    }
    broker.flush();
    awaitDone(f, 300);
    assertThat(f.ledger().size()).isEqualTo(100);
    assertThat(f.ledger().creditedMoreThanOnce()).isEmpty();
    assertThat(f.dead()).isEmpty();
    assertThat(count(registry, "dedup.kafka.duplicates")).isEqualTo(200);
  }

  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldSkipRedeliveriesAfterARestartAndARewindOfTheCommittedOffsets(AtomicityMode mode) throws Exception {
    Fixture f = fixture("redeliveries", 2);
    DedupKafkaConsumer<String, String> first = start(f, options(mode));
    for (int i = 0; i < 50; i++) {
      broker.send(f.topic(), "id-" + i, "v");
    }
    broker.flush();
    awaitDone(f, 50);
    first.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    // The broker redelivers everything: the group's offsets go back to the start, as after a crash before commit.
    broker.rewind(f.group(), f.topic(), 2);
    for (int i = 50; i < 70; i++) {
      broker.send(f.topic(), "id-" + i, "v");
    }
    broker.flush();
    start(f, options(mode));
    awaitDone(f, 70);
    assertThat(f.ledger().size()).isEqualTo(70);
    assertThat(f.ledger().creditedMoreThanOnce()).isEmpty();
    assertThat(count(registry, "dedup.kafka.duplicates")).isEqualTo(50);
    assertThat(f.dead()).isEmpty();
  }

  /**
   * A record accepted although its Kafka timestamp is more than the window W before now (by the injected clock) is
   * counted as a probable redelivery beyond the window, per topic-partition; its verdict and handling are unchanged.
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldCountAcceptedRecordsOlderThanTheWindowWithoutChangingTheirVerdict(AtomicityMode mode)
      throws Exception {
    Fixture f = fixture("beyond-window", 1);
    long now = System.currentTimeMillis();
    long w = Duration.ofMinutes(10).toMillis();
    subscribe(f, consumer(f, options(mode), new ManualClock(now)));
    broker.sendAt(f.topic(), "old", "v", now - w - 60_000);       // beyond the window: counted
    broker.sendAt(f.topic(), "old", "v", now - w - 60_000);       // its copy: a duplicate, not counted again
    broker.sendAt(f.topic(), "edge", "v", now - w);               // exactly W old: inside the window
    broker.sendAt(f.topic(), "fresh", "v", now - 60_000);         // inside the window
    broker.sendAt(f.topic(), "older", "v", now - 3 * w);          // beyond: counted
    broker.flush();
    awaitDone(f, 5);
    assertThat(f.ledger().credits).as("every id handled, once").containsOnlyKeys("old", "edge", "fresh", "older");
    assertThat(f.ledger().creditedMoreThanOnce()).isEmpty();
    assertThat(f.dead()).isEmpty();
    assertThat(registry.get("dedup.kafka.redeliveries.beyond.window").tag("topic", f.topic()).tag("partition", "0")
        .counter().count()).isEqualTo(2);
    assertThat(count(registry, "dedup.kafka.duplicates")).isEqualTo(1);
  }

  /**
   * Records sent to the window with their timestamp as event time (the default): one stamped before the window's
   * memory began (the consumer's first start over a backlog) and one older than W cannot be covered, and by
   * default they are handled and counted in {@code dedup.kafka.uncovered.accepts}, never dead-lettered; the one older
   * than W also in {@code dedup.kafka.redeliveries.beyond.window}. A timestamp far in the future counts as now. The
   * window recorded their ids: a copy is a duplicate.
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldHandleAndCountRecordsTheWindowCannotCoverFor(AtomicityMode mode) throws Exception {
    Fixture f = fixture("uncovered-accepted", 1);
    long now = System.currentTimeMillis();
    long w = Duration.ofMinutes(10).toMillis();
    subscribe(f, consumer(f, options(mode), new ManualClock(now)));
    sendAroundTheWindow(f, now, w);
    awaitDone(f, 5);
    assertThat(f.ledger().credits).as("every id handled, once")
        .containsOnlyKeys("backlog", "ancient", "current", "ahead");
    assertThat(f.ledger().creditedMoreThanOnce()).isEmpty();
    assertThat(f.dead()).isEmpty();
    assertThat(count(registry, "dedup.kafka.uncovered.accepts")).isEqualTo(2);
    assertThat(count(registry, "dedup.kafka.redeliveries.beyond.window")).isEqualTo(1);
    assertThat(count(registry, "dedup.kafka.duplicates")).isEqualTo(1);
  }

  /**
   * With {@code uncoveredRecords} DEAD_LETTER the records the window does not cover go to the dead-letter handler
   * with reason UNCOVERED, the detail naming the record's age and the window; their ids stay remembered (a copy is a
   * duplicate, not a second dead letter), and the records it covers are handled.
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldDeadLetterRecordsTheWindowCannotCoverForWhenAskedTo(AtomicityMode mode) throws Exception {
    Fixture f = fixture("uncovered-dead", 1);
    long now = System.currentTimeMillis();
    long w = Duration.ofMinutes(10).toMillis();
    subscribe(f, consumer(f, options(mode).setUncoveredRecords(UncoveredRecordPolicy.DEAD_LETTER),
        new ManualClock(now)));
    sendAroundTheWindow(f, now, w);
    awaitDone(f, 5);
    assertThat(f.ledger().credits).containsOnlyKeys("current", "ahead");
    assertThat(f.ledger().creditedMoreThanOnce()).isEmpty();
    assertThat(f.dead()).hasSize(2).allSatisfy(d -> assertThat(d.reason()).isEqualTo(DeadLetter.Reason.UNCOVERED));
    assertThat(f.dead().get(0).record().key()).isEqualTo("backlog");
    assertThat(f.dead().get(0).detail()).contains("its timestamp is 60000 ms old, inside the window (600000 ms) but"
        + " older than the window's memory");
    assertThat(f.dead().get(1).record().key()).isEqualTo("ancient");
    assertThat(f.dead().get(1).detail()).contains("its timestamp is 1800000 ms old, older than the window"
        + " (600000 ms)");
    assertThat(count(registry, "dedup.kafka.duplicates")).as("the copy of ancient").isEqualTo(1);
    assertThat(registry.get("dedup.kafka.dead.letters").tag("topic", f.topic()).tag("reason", "uncovered")
        .counter().count()).isEqualTo(2);
    assertThat(count(registry, "dedup.kafka.uncovered.accepts")).isZero();
    assertThat(count(registry, "dedup.kafka.redeliveries.beyond.window")).isZero();
  }

  /**
   * Five records around a window W whose memory began at {@code now} (a consumer on a {@code ManualClock} stopped at
   * {@code now}): {@code backlog} a minute before now (before the window's memory), {@code ancient} 3 W before now
   * and a copy of it, {@code current} at now, {@code ahead} 2 W after now.
   */
  private static void sendAroundTheWindow(Fixture f, long now, long w) {
    broker.sendAt(f.topic(), "backlog", "v", now - 60_000);
    broker.sendAt(f.topic(), "ancient", "v", now - 3 * w);
    broker.sendAt(f.topic(), "ancient", "v", now - 3 * w);
    broker.sendAt(f.topic(), "current", "v", now);
    broker.sendAt(f.topic(), "ahead", "v", now + 2 * w);
    broker.flush();
  }

  /**
   * The consumer calls its windows in-process (the partition verticle's in-process client, on the window's own
   * context): a run in either mode sends no event-bus message to a window, and the ledger is still credited once per
   * id. (The bound on unanswered commits is tested on the owner alone, in {@code PartitionOwnerTest}.)
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldDecideAndCommitInProcessWithoutEventBusMessages(AtomicityMode mode) throws Exception {
    Fixture f = fixture("in-process", 2);
    AtomicInteger windowMessages = new AtomicInteger();
    vertx.eventBus().addInboundInterceptor(ctx -> {
      if (ctx.message().address().startsWith("test.kafka")) {
        windowMessages.incrementAndGet();
      }
      ctx.next();
    });
    start(f, options(mode));
    for (int i = 0; i < 40; i++) {
      broker.send(f.topic(), "p-" + (i % 30), "v");
    }
    broker.flush();
    awaitDone(f, 40);
    assertThat(f.ledger().size()).isEqualTo(30);
    assertThat(f.ledger().creditedMoreThanOnce()).isEmpty();
    assertThat(f.dead()).isEmpty();
    assertThat(windowMessages.get()).isZero();
  }

  /**
   * A claim that lapses while its record is handled answers 409 inside the owner's {@code commitBatch} (counted in
   * {@code dedup.kafka.lapsed.claims}): the owner records the id with a check, as no other delivery claimed it, the
   * record's offset is committed, and the other commits of the batch and the later records go on. A copy of the slow
   * record published afterwards is a duplicate.
   */
  @Test
  void shouldCommitARecordWhoseClaimLapsedInsideACommitBatchAndGoOn() throws Exception {
    Fixture f = fixture("lapsed", 1);
    ManualClock clock = new ManualClock(System.currentTimeMillis());
    DedupKafkaOptions options = options(AtomicityMode.EFFECT_FIRST).setDedup(new DedupOptions()
        .setAddress("test.kafka").setWindow(Duration.ofMinutes(10)).setLeaseMs(5_000));
    subscribe(f, consumer(f, options, clock)
        .handler(r -> {
          if (r.key().equals("slow")) {
            clock.advanceMs(6_000); // the handler outlasts the lease
          }
          return f.ledger().credit(r.key());
        }));
    broker.send(f.topic(), "before", "v");
    broker.send(f.topic(), "slow", "v");
    broker.send(f.topic(), "after", "v");
    broker.flush();
    awaitDone(f, 3);
    assertThat(count(registry, "dedup.kafka.lapsed.claims")).as("the slow record's claim at least").isPositive();
    assertThat(count(registry, "dedup.kafka.lapsed.claims.recorded"))
        .isEqualTo(count(registry, "dedup.kafka.lapsed.claims"));
    broker.send(f.topic(), "slow", "v");
    broker.flush();
    awaitDone(f, 4);
    assertThat(f.ledger().credits).containsOnlyKeys("before", "slow", "after");
    assertThat(f.ledger().creditedMoreThanOnce()).isEmpty();
    assertThat(f.dead()).isEmpty();
  }

  /**
   * Effect-first on a real broker, as a user sizing the lease for one handler call would run it: a 1 s lease,
   * handlers of 20 ms (of the injected clock), 300 ids claimed in runs of up to 1,000, so a run's handlers together
   * outlast its lease. Every id is published again once the first copies are committed: none is credited twice, and no
   * commit was refused.
   */
  @Test
  void shouldCreditNoIdTwiceWhenTheHandlersOfARunTogetherOutlastTheLease() throws Exception {
    Fixture f = fixture("long-run", 1);
    ManualClock clock = new ManualClock(System.currentTimeMillis());
    DedupKafkaOptions options = options(AtomicityMode.EFFECT_FIRST).setDedup(new DedupOptions()
        .setAddress("test.kafka").setWindow(Duration.ofMinutes(10)).setLeaseMs(1_000));
    subscribe(f, consumer(f, options, clock)
        .handler(r -> {
          clock.advanceMs(20);
          return f.ledger().credit(r.key());
        }));
    for (int i = 0; i < 300; i++) {
      broker.send(f.topic(), "id-" + i, "v");
    }
    broker.flush();
    awaitDone(f, 300);
    for (int i = 0; i < 300; i++) {
      broker.send(f.topic(), "id-" + i, "v");
    }
    broker.flush();
    awaitDone(f, 600);
    assertThat(f.ledger().size()).isEqualTo(300);
    assertThat(f.ledger().creditedMoreThanOnce()).isEmpty();
    assertThat(count(registry, "dedup.kafka.lapsed.claims")).isZero();
    assertThat(count(registry, "dedup.kafka.duplicates")).isEqualTo(300);
  }

  @Test
  void shouldCommitPastADuplicateAtTheNextOffsetWithoutErrorOrPause() throws Exception {
    Fixture f = fixture("next-offset", 1);
    start(f, options(AtomicityMode.EFFECT_FIRST));
    broker.send(f.topic(), "a", "v");
    broker.send(f.topic(), "a", "v");
    broker.send(f.topic(), "b", "v");
    broker.flush();
    awaitDone(f, 3);
    assertThat(f.ledger().credits).containsOnlyKeys("a", "b");
    assertThat(f.ledger().creditedMoreThanOnce()).isEmpty();
    assertThat(f.dead()).isEmpty();
    assertThat(count(registry, "dedup.kafka.duplicates")).isEqualTo(1);
    assertThat(count(registry, "dedup.kafka.in.flight.waits")).isZero();
    assertThat(count(registry, "dedup.kafka.unavailable")).isZero();
  }

  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldRetryAFailingHandlerThenDeadLetterItKeepingOrderAndTheIdRemembered(AtomicityMode mode)
      throws Exception {
    Fixture f = fixture("handler-fails", 1);
    List<String> log = new CopyOnWriteArrayList<>();
    Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    subscribe(f, consumer(f, options(mode), DedupClock.system())
        .handler(r -> {
          int n = calls.computeIfAbsent(r.key(), k -> new AtomicInteger()).incrementAndGet();
          if (r.key().equals("bad") || (r.key().equals("flaky") && n < 3)) {
            return Future.failedFuture(new IllegalStateException("boom " + n));
          }
          log.add("handled:" + r.key());
          return Future.succeededFuture();
        })
        .deadLetterHandler(d -> {
          f.dead().add(d);
          log.add("dead:" + d.record().key());
          return Future.succeededFuture();
        }));
    for (String id : List.of("ok-1", "bad", "flaky", "ok-2", "bad")) {
      broker.send(f.topic(), id, "v");
    }
    broker.flush();
    awaitDone(f, 5);
    assertThat(log).containsExactly("handled:ok-1", "dead:bad", "handled:flaky", "handled:ok-2");
    assertThat(f.dead()).singleElement().satisfies(d -> {
      assertThat(d.reason()).isEqualTo(DeadLetter.Reason.HANDLER_FAILED);
      assertThat(d.attempts()).isEqualTo(3);
      assertThat(d.cause()).hasMessage("boom 3");
    });
    assertThat(calls.get("bad")).hasValue(3);
    assertThat(calls.get("flaky")).hasValue(3);
    assertThat(count(registry, "dedup.kafka.handler.failures")).isEqualTo(5);
    // The second "bad" is a duplicate: the dead-letter path owns the id.
    assertThat(count(registry, "dedup.kafka.duplicates")).isEqualTo(1);
  }

  /**
   * Record-first commits before the effect: each handler, as it starts, reads the group's committed offset from the
   * broker (an admin request, off the event loop) and finds it already past its own record, so a machine lost while
   * the handler runs leaves the record to nobody. Copies of ids are still dropped, every id handled once.
   */
  @Test
  void shouldStartARecordFirstHandlerOnlyOnceKafkaHasItsOffsetCommitted() throws Exception {
    Fixture f = fixture("gate", 1);
    Map<Long, Long> committedAtStart = new ConcurrentHashMap<>();
    subscribe(f, consumer(f, options(AtomicityMode.RECORD_FIRST), DedupClock.system())
        .handler(r -> vertx.<Void>executeBlocking(() -> {
          committedAtStart.put(r.offset(), broker.committed(f.group(), f.topic()));
          return null;
        }).compose(v -> f.ledger().credit(r.key()))));
    for (int i = 0; i < 60; i++) {
      broker.send(f.topic(), "id-" + i, "v");
      if (i % 6 == 5) {
        broker.send(f.topic(), "id-" + (i - 3), "v"); // a copy
      }
    }
    broker.flush();
    awaitDone(f, 70);

    assertThat(f.ledger().size()).isEqualTo(60);
    assertThat(f.ledger().creditedMoreThanOnce()).isEmpty();
    assertThat(committedAtStart).hasSize(60).allSatisfy((offset, committed) ->
        assertThat(committed).as("the group's committed offset when the handler of offset %d started", offset)
            .isGreaterThan(offset));
  }

  @Test
  void shouldDeadLetterARecordWithoutIdentityAndAdvanceItsOffset() throws Exception {
    Fixture f = fixture("no-id", 1);
    start(f, options(AtomicityMode.RECORD_FIRST));
    broker.sendWithoutId(f.topic(), "anonymous", "v");
    broker.send(f.topic(), "x", "v");
    broker.flush();
    awaitDone(f, 2);
    assertThat(f.ledger().credits).containsOnlyKeys("x");
    assertThat(f.dead()).singleElement().satisfies(d -> {
      assertThat(d.reason()).isEqualTo(DeadLetter.Reason.NO_IDENTITY);
      assertThat(d.record().key()).isEqualTo("anonymous");
      assertThat(d.record().offset()).isZero();
    });
  }

  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldDeadLetterAConflictingPayloadWithItsReason(AtomicityMode mode) throws Exception {
    Fixture f = fixture("conflict", 1);
    subscribe(f, consumer(f, options(mode), DedupClock.system())
        .identity(IdentityExtractor.<String, String>header(KafkaTestSupport.MESSAGE_ID)
            .withPayloadHash(KafkaConsumerRecord::value))
        .handler(r -> f.ledger().credit(header(r))));
    broker.send(f.topic(), "c1", "amount=10");
    broker.send(f.topic(), "c1", "amount=99");
    broker.send(f.topic(), "c1", "amount=10");
    broker.flush();
    awaitDone(f, 3);
    assertThat(f.ledger().credits).containsOnlyKeys("c1");
    assertThat(f.ledger().creditedMoreThanOnce()).isEmpty();
    assertThat(f.dead()).singleElement().satisfies(d -> {
      assertThat(d.reason()).isEqualTo(DeadLetter.Reason.CONFLICT);
      assertThat(d.record().value()).isEqualTo("amount=99");
      assertThat(d.detail()).contains("another payload hash");
    });
    assertThat(count(registry, "dedup.kafka.duplicates")).isEqualTo(1);
  }

  /**
   * Two consumers of one group share the partitions while records flow: the second joins after round 1, the first
   * leaves after round 3. Every round publishes 200 new ids and 20 copies (10 %) of ids picked at random among those
   * published before the round (in round 0, before the copy), so copies of many distinct ids reach every partition,
   * and many of them arrive after their partition has moved. No id is applied twice, every copy is a duplicate.
   */
  @ParameterizedTest
  @EnumSource(value = AtomicityMode.class, names = "INBOX", mode = EnumSource.Mode.EXCLUDE)  // INBOX: KafkaInboxTest
  void shouldApplyNoIdTwiceWhilePartitionsMoveBetweenTwoConsumers(AtomicityMode mode) throws Exception {
    int partitions = 4;
    Fixture f = fixture("rebalance", partitions);
    DedupKafkaConsumer<String, String> a = start(f, options(mode));
    DedupKafkaConsumer<String, String> b = null;
    Random random = new Random(7919);
    Map<Integer, Set<String>> copiedPerPartition = new HashMap<>();
    int sent = 0;
    int ids = 0;
    for (int round = 0; round < 5; round++) {
      int before = ids;
      for (int i = 0; i < 200; i++) {
        broker.send(f.topic(), "id-" + ids++, "v");
        sent++;
        if (i % 10 == 9) {
          String copy = "id-" + random.nextInt(round == 0 ? ids : before);
          broker.send(f.topic(), copy, "v");
          copiedPerPartition.computeIfAbsent(partitionOf(copy, partitions), p -> new HashSet<>()).add(copy);
          sent++;
        }
      }
      broker.flush();
      if (round == 1) {
        b = start(f, options(mode));
        DedupKafkaConsumer<String, String> joined = b;
        await().atMost(Duration.ofSeconds(60))
            .until(() -> a.assignment().size() == 2 && joined.assignment().size() == 2);
      } else if (round == 3) {
        a.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        DedupKafkaConsumer<String, String> left = b;
        await().atMost(Duration.ofSeconds(60)).until(() -> left.assignment().size() == 4);
      }
      int expected = ids;
      await().atMost(Duration.ofSeconds(60)).until(() -> f.ledger().size() == expected);
    }
    assertThat(copiedPerPartition).as("distinct ids copied, per partition").hasSize(partitions)
        .allSatisfy((p, copied) -> assertThat(copied).hasSizeGreaterThanOrEqualTo(15));
    awaitDone(f, sent);
    assertThat(f.ledger().size()).isEqualTo(ids);
    assertThat(f.ledger().creditedMoreThanOnce()).isEmpty();
    assertThat(f.dead()).isEmpty();
    assertThat(count(registry, "dedup.kafka.duplicates")).isEqualTo(sent - ids);
  }

  /** The partition the producer's default partitioner gives a record keyed {@code key}: murmur2 of its bytes. */
  private static int partitionOf(String key, int partitions) {
    return Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8))) % partitions;
  }

  /**
   * Dead letters to Kafka, on the broker: a record whose handler keeps failing goes to the dead-letter topic through
   * a Vert.x producer, with its key, value and headers and the dead letter's reason, detail, attempts and source.
   * The dead letter is acknowledged before its offset is committed: once the source offsets are committed, the
   * dead-letter topic's end offset already counts it.
   */
  @Test
  void shouldSendADeadLetterToATopicAndCommitItsOffsetOnlyOnceTheBrokerHasIt() throws Exception {
    Fixture f = fixture("to-dlq", 1);
    String dlq = f.topic() + ".dead";
    broker.createTopic(dlq, 1);
    KafkaProducer<String, String> producer = KafkaProducer.create(vertx, Map.of(
        "bootstrap.servers", broker.bootstrapServers(),
        "key.serializer", StringSerializer.class.getName(),
        "value.serializer", StringSerializer.class.getName(),
        "acks", "all"));
    subscribe(f, consumer(f, options(AtomicityMode.EFFECT_FIRST), DedupClock.system())
        .handler(r -> r.key().equals("poison") ? Future.failedFuture("cannot apply " + r.value())
            : f.ledger().credit(r.key()))
        .deadLetterHandler(DeadLetterHandler.toTopic(producer, dlq)));
    for (String id : List.of("a", "poison", "b")) {
      get(producer.send(KafkaProducerRecord.create(f.topic(), id, "value-of-" + id)
          .addHeader(KafkaTestSupport.MESSAGE_ID, id).addHeader("trace", "t-" + id)));
    }

    awaitDone(f, 3);

    assertThat(f.ledger().credits).containsOnlyKeys("a", "b");
    try (KafkaConsumer<String, String> reader = new KafkaConsumer<>(
        new HashMap<String, Object>(broker.consumerConfig(name("dlq-reader"))), new StringDeserializer(),
        new StringDeserializer())) {
      TopicPartition tp = new TopicPartition(dlq, 0);
      assertThat(reader.endOffsets(List.of(tp))).as("acknowledged before the source offset was committed")
          .containsEntry(tp, 1L);
      reader.assign(List.of(tp));
      reader.seekToBeginning(List.of(tp));
      List<ConsumerRecord<String, String>> read = new ArrayList<>();
      await().atMost(Duration.ofSeconds(30)).until(() -> {
        reader.poll(Duration.ofMillis(100)).forEach(read::add);
        return !read.isEmpty();
      });
      ConsumerRecord<String, String> dead = read.get(0);
      assertThat(dead.key()).isEqualTo("poison");
      assertThat(dead.value()).isEqualTo("value-of-poison");
      Map<String, String> headers = new LinkedHashMap<>();
      dead.headers().forEach(h -> headers.put(h.key(), new String(h.value(), StandardCharsets.UTF_8)));
      assertThat(headers.keySet()).containsExactly(KafkaTestSupport.MESSAGE_ID, "trace",
          DeadLetterHandler.REASON_HEADER, DeadLetterHandler.DETAIL_HEADER, DeadLetterHandler.ATTEMPTS_HEADER,
          DeadLetterHandler.SOURCE_TOPIC_HEADER, DeadLetterHandler.SOURCE_PARTITION_HEADER,
          DeadLetterHandler.SOURCE_OFFSET_HEADER);
      assertThat(headers).containsEntry(KafkaTestSupport.MESSAGE_ID, "poison")
          .containsEntry("trace", "t-poison")
          .containsEntry(DeadLetterHandler.REASON_HEADER, "HANDLER_FAILED")
          .containsEntry(DeadLetterHandler.ATTEMPTS_HEADER, "3")
          .containsEntry(DeadLetterHandler.SOURCE_TOPIC_HEADER, f.topic())
          .containsEntry(DeadLetterHandler.SOURCE_PARTITION_HEADER, "0")
          .containsEntry(DeadLetterHandler.SOURCE_OFFSET_HEADER, "1");
      assertThat(headers.get(DeadLetterHandler.DETAIL_HEADER)).startsWith("the handler failed 3 times; last: ")
          .endsWith("cannot apply value-of-poison");
    }
    get(producer.close());
  }

  /**
   * What a production user reads at INFO: for each partition one line per lifecycle event (assigned, window ready,
   * then revoked, lost or released), here through a rebalance (a second consumer joins) and the close of both
   * consumers, and nothing per record although hundreds of records, duplicates and a dead letter went through. A
   * dead letter with no dead-letter handler is a WARN line naming the partition, the offset and the reason.
   */
  @Test
  void shouldLogEachPartitionLifecycleEventOnceAtInfoAndNothingPerRecord() throws Exception {
    Fixture f = fixture("lifecycle", 2);
    List<LogCapture.Line> lines;
    try (LogCapture capture = LogCapture.of("io.github.vertxdedup", Level.INFO)) {
      DedupKafkaConsumer<String, String> a = subscribe(f, withoutDeadLetterHandler(f));
      await().atMost(Duration.ofSeconds(60)).until(() -> a.assignment().size() == 2);
      for (int i = 0; i < 200; i++) {
        broker.send(f.topic(), "id-" + i, "v");
        if (i % 10 == 9) {
          broker.send(f.topic(), "id-" + i, "v");
        }
      }
      broker.sendWithoutId(f.topic(), "anonymous", "v");
      broker.flush();
      awaitDone(f, 221);
      DedupKafkaConsumer<String, String> b = subscribe(f, withoutDeadLetterHandler(f));
      await().atMost(Duration.ofSeconds(60)).until(() -> a.assignment().size() == 1 && b.assignment().size() == 1);
      for (int i = 200; i < 300; i++) {
        broker.send(f.topic(), "id-" + i, "v");
      }
      broker.flush();
      awaitDone(f, 321);
      get(a.close());
      await().atMost(Duration.ofSeconds(60)).until(() -> b.assignment().size() == 2);
      get(b.close());
      lines = capture.lines();
    }

    assertThat(f.ledger().size()).isEqualTo(300);
    List<LogCapture.Line> info = lines.stream().filter(l -> l.level() == Level.INFO).toList();
    Pattern event = Pattern.compile("(" + Pattern.quote(f.topic()) + "-[01]): (assigned to dedup consumer"
        + "|window ready \\(in memory\\) in \\d+ ms, \\d+ entries held; reading from"
        + "|revoked; |lost |released \\(the consumer is stopping\\); ).*");
    assertThat(info).as("every INFO line is a partition's lifecycle event")
        .allSatisfy(l -> assertThat(l.message()).matches(event));
    Map<String, StringBuilder> perPartition = new TreeMap<>();
    for (LogCapture.Line l : info) {
      Matcher m = event.matcher(l.message());
      assertThat(m.matches()).isTrue();
      char kind = m.group(2).startsWith("assigned") ? 'A' : m.group(2).startsWith("window") ? 'R' : 'E';
      perPartition.computeIfAbsent(m.group(1), p -> new StringBuilder()).append(kind);
    }
    assertThat(perPartition).as("per partition: assigned, ready, revoked/lost/released; again for each assignment")
        .hasSize(2).allSatisfy((tp, kinds) -> assertThat(kinds.toString()).matches("(ARE)+"));
    assertThat(info).as("the second consumer's join revoked a partition of the first")
        .anySatisfy(l -> assertThat(l.message()).contains(": revoked; "));
    assertThat(info).filteredOn(l -> l.message().contains(": released (the consumer is stopping)"))
        .as("released by the first consumer (one partition), then by the second (both)").hasSize(3);
    String anonymous = f.topic() + "-" + partitionOf("anonymous", 2);
    assertThat(lines).filteredOn(l -> l.level() == Level.WARN)
        .singleElement().extracting(LogCapture.Line::message, InstanceOfAssertFactories.STRING)
        .startsWith(anonymous + ": dead letter at offset ")
        .contains("(NO_IDENTITY), and no dead-letter handler: the identity extractor found no id in the record");
  }

  /**
   * A subscribe that Kafka refuses after the consumer's client was made (a blank topic name) fails with Kafka's own
   * error and leaves nothing of the client behind: its JMX beans are unregistered and, with the consumer group
   * protocol (whose client runs a background thread from its construction), that thread has ended.
   */
  @ParameterizedTest
  @ValueSource(strings = {"classic", "consumer"})
  void shouldCloseItsKafkaClientAndFailWithKafkasCauseWhenTheSubscribeIsRefused(String protocol) throws Exception {
    Fixture f = fixture("refused", 1);
    String clientId = name("refused-client");
    Map<String, String> config = new HashMap<>(broker.consumerConfig(f.group()));
    config.put("client.id", clientId);
    config.put("group.protocol", protocol);
    if (protocol.equals("consumer")) {
      // The consumer protocol's client refuses the classic group's session and heartbeat settings.
      config.remove("session.timeout.ms");
      config.remove("heartbeat.interval.ms");
    }
    long threadsBefore = clientThreads();
    DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>create(vertx, config,
            options(AtomicityMode.EFFECT_FIRST))
        .identity(IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID))
        .handler(r -> f.ledger().credit(r.key()))
        .meterRegistry(registry);

    Future<Void> subscribed = c.subscribe(Set.of(" "));

    assertThat(subscribed.toCompletionStage().toCompletableFuture())
        .failsWithin(Duration.ofSeconds(30)).withThrowableOfType(ExecutionException.class)
        .havingCause().isInstanceOf(IllegalArgumentException.class)
        .withMessageContaining("cannot contain null or empty topic");
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(clientThreads())
        .as("Kafka client threads left running").isEqualTo(threadsBefore));
    assertThat(ManagementFactory.getPlatformMBeanServer()
        .queryNames(new ObjectName("kafka.consumer:*,client-id=" + clientId), null))
        .as("the client's JMX beans (app-info and metrics)").isEmpty();
    assertThat(c.close().toCompletionStage().toCompletableFuture()).as("close, with the failure that stopped it")
        .failsWithin(Duration.ofSeconds(30)).withThrowableOfType(ExecutionException.class)
        .havingCause().isInstanceOf(IllegalArgumentException.class);
  }

  /** @return the live threads of Kafka consumer clients: the consumer protocol's background and heartbeat threads */
  private static long clientThreads() {
    return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
        .filter(n -> n.startsWith("consumer_background_thread") || n.startsWith("kafka-coordinator-heartbeat-thread"))
        .count();
  }

  /** A consumer of the fixture crediting its ledger, with no dead-letter handler: dead letters are logged. */
  private DedupKafkaConsumer<String, String> withoutDeadLetterHandler(Fixture f) {
    DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>create(vertx,
            broker.consumerConfig(f.group()), options(AtomicityMode.EFFECT_FIRST))
        .identity(IdentityExtractor.header(KafkaTestSupport.MESSAGE_ID))
        .handler(r -> f.ledger().credit(r.key()))
        .meterRegistry(registry);
    consumers.add(c);
    return c;
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
