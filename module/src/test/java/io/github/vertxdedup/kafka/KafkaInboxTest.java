package io.github.vertxdedup.kafka;

import static io.github.vertxdedup.TestFutures.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.inbox.DedupInbox;
import io.github.vertxdedup.inbox.DedupInboxOptions;
import io.github.vertxdedup.inbox.PostgresTestSupport;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link AtomicityMode#INBOX} on a real broker and a real PostgreSQL server: the ledger table has no unique key, so
 * an effect applied twice shows as two rows, and every test counts them per id. Each test has its own topic, group,
 * inbox table and ledger.
 */
class KafkaInboxTest {

  @RegisterExtension
  static final KafkaTestSupport broker = new KafkaTestSupport();
  @RegisterExtension
  static final PostgresTestSupport db = new PostgresTestSupport();
  private static final AtomicInteger NAMES = new AtomicInteger();

  private final List<Vertx> vertxes = new CopyOnWriteArrayList<>();
  private final List<DedupKafkaConsumer<String, String>> consumers = new CopyOnWriteArrayList<>();
  private final List<DeadLetter<String, String>> dead = new CopyOnWriteArrayList<>();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @AfterEach
  void tearDown() throws Exception {
    for (DedupKafkaConsumer<String, String> c : consumers) {
      // A consumer that a bad inbox table stopped at subscribe closes with that failure: ignore it here.
      c.close().otherwiseEmpty().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    for (Vertx v : vertxes) {
      v.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /** One test's names: topic, group, inbox table and ledger table; the tables are created here. */
  private record Names(String topic, String group, String table, String ledger) {
  }

  private Names names(String prefix, int partitions, boolean createTables) throws Exception {
    int n = NAMES.incrementAndGet();
    String sql = prefix.replace('-', '_');
    Names names = new Names(prefix + "-" + n, "g-" + prefix + "-" + n, "inbox_" + sql + "_" + n,
        "ledger_" + sql + "_" + n);
    broker.createTopic(names.topic(), partitions);
    if (createTables) {
      db.server().psql(DedupInbox.ddl(names.table()) + "; CREATE TABLE " + names.ledger()
          + " (event_id text NOT NULL, amount bigint NOT NULL)");
    }
    return names;
  }

  private static DedupKafkaOptions options() {
    return new DedupKafkaOptions()
        .setDedup(new DedupOptions().setAddress("test.kafka.inbox").setWindow(Duration.ofMinutes(10))
            .setPayloadHashes(true))
        .setMode(AtomicityMode.INBOX)
        .setMaxAttempts(1000) // a database stopped for a while is waited out, not dead-lettered
        .setBackoffInitialMs(5)
        .setBackoffMaxMs(200)
        .setPollTimeoutMs(20)
        .setCommitIntervalMs(20);
  }

  /**
   * A consumer in INBOX mode on a Vert.x instance of its own (a "machine"): identity from the message-id header, the
   * value as the payload hash, and a handler that writes one ledger row in the inbox's transaction.
   */
  private DedupKafkaConsumer<String, String> consumer(Names n, InboxRecordHandler<String, String> handler) {
    return consumer(n, handler, false);
  }

  /**
   * As {@link #consumer(Names, InboxRecordHandler)}; with {@code wrapped}, the application's own Vert.x consumer
   * (auto-commit off) given to {@link DedupKafkaConsumer#wrap}.
   */
  private DedupKafkaConsumer<String, String> consumer(Names n, InboxRecordHandler<String, String> handler,
      boolean wrapped) {
    return consumer(n, handler, wrapped, options());
  }

  /** As {@link #consumer(Names, InboxRecordHandler, boolean)}, with these options. */
  private DedupKafkaConsumer<String, String> consumer(Names n, InboxRecordHandler<String, String> handler,
      boolean wrapped, DedupKafkaOptions options) {
    Vertx vertx = Vertx.vertx();
    vertxes.add(vertx);
    Pool pool = db.pool(vertx, 4);
    DedupInbox inbox = DedupInbox.create(vertx, pool, new DedupInboxOptions().setTable(n.table()));
    Map<String, String> config = broker.consumerConfig(n.group());
    DedupKafkaConsumer<String, String> c;
    if (wrapped) {
      config.put("enable.auto.commit", "false");
      c = DedupKafkaConsumer.wrap(vertx, KafkaConsumer.<String, String>create(vertx, config), config, options);
    } else {
      c = DedupKafkaConsumer.create(vertx, config, options);
    }
    c.identity(IdentityExtractor.<String, String>header(KafkaTestSupport.MESSAGE_ID)
        .withPayloadHash(r -> r.value()))
        .inbox(inbox, handler)
        .deadLetterHandler(d -> {
          dead.add(d);
          return Future.succeededFuture();
        })
        .meterRegistry(registry);
    consumers.add(c);
    return c;
  }

  private static InboxRecordHandler<String, String> credit(Names n) {
    return (r, conn) -> conn.preparedQuery("INSERT INTO " + n.ledger() + " VALUES ($1, $2)")
        .execute(Tuple.of(r.key(), Long.parseLong(r.value()))).mapEmpty();
  }

  private static void subscribe(DedupKafkaConsumer<String, String> c, Names n) {
    await(c.subscribe(n.topic()), 30);
  }

  /** @return ledger rows per id: {@code id -> rows} */
  private static Map<String, Integer> ledger(Names n) {
    Map<String, Integer> m = new HashMap<>();
    String out = db.server().psql("SELECT event_id, count(*) FROM " + n.ledger() + " GROUP BY event_id").trim();
    if (!out.isEmpty()) {
      for (String line : out.split("\n")) {
        String[] f = line.split("\\|");
        m.put(f[0], Integer.parseInt(f[1]));
      }
    }
    return m;
  }

  private static void assertEachOnce(Names n, int ids) {
    Map<String, Integer> ledger = ledger(n);
    assertThat(ledger).as("ledger rows per id").hasSize(ids).allSatisfy((id, rows) -> assertThat(rows).as(id)
        .isEqualTo(1));
  }

  private double counter(String name) {
    return registry.find(name).counters().stream().mapToDouble(Counter::count).sum();
  }

  @Test
  void shouldApplyEachEventOnceThroughProducerCopiesConflictsAndARedeliveryOfEverything() throws Exception {
    Names n = names("inbox-copies", 2, true);
    subscribe(consumer(n, credit(n)), n);
    int records = 0;
    for (int i = 0; i < 200; i++) {
      broker.send(n.topic(), "p-" + i, "100");
      records++;
      if (i % 10 == 0) {
        broker.send(n.topic(), "p-" + i, "100"); // a producer retry: the window answers it
        records++;
      }
    }
    broker.send(n.topic(), "p-3", "999"); // the same id, another payload
    records++;
    broker.flush();
    broker.awaitCommitted(n.group(), n.topic(), records);
    assertEachOnce(n, 200);
    assertThat(dead).hasSize(1).allSatisfy(d -> assertThat(d.reason()).isEqualTo(DeadLetter.Reason.CONFLICT));

    // Every record again, to another machine: its windows are rebuilt from the inbox rows and answer each copy.
    await(consumers.get(0).close(), 30);
    Map<TopicPartition, OffsetAndMetadata> zero = Map.of(new TopicPartition(n.topic(), 0), new OffsetAndMetadata(0),
        new TopicPartition(n.topic(), 1), new OffsetAndMetadata(0));
    broker.admin().alterConsumerGroupOffsets(n.group(), zero).all().get(30, TimeUnit.SECONDS);
    dead.clear();
    double duplicatesBefore = counter("dedup.kafka.duplicates");
    subscribe(consumer(n, credit(n)), n);
    broker.awaitCommitted(n.group(), n.topic(), records);
    assertEachOnce(n, 200);
    assertThat(counter("dedup.kafka.duplicates") - duplicatesBefore).isEqualTo(records - 1);
    assertThat(dead).hasSize(1).allSatisfy(d -> {
      assertThat(d.reason()).isEqualTo(DeadLetter.Reason.CONFLICT);
      assertThat(d.record().value()).isEqualTo("999");
    });

    // Rows the window cannot know (committed by another owner after this one's rebuild): the unique key decides.
    dead.clear();
    db.server().psql("INSERT INTO " + n.table() + " VALUES ('" + n.group() + "', '" + n.topic() + "', 0, 'late-1',"
        + " NULL, '100', 0, 9223372036854775807), ('" + n.group() + "', '" + n.topic() + "', 0, 'late-2', NULL,"
        + " '100', 0, 9223372036854775807)");
    broker.send(n.topic(), 0, "late-1", "100");
    broker.send(n.topic(), 0, "late-2", "555");
    broker.flush();
    broker.awaitCommitted(n.group(), n.topic(), records + 2);
    assertThat(ledger(n)).doesNotContainKeys("late-1", "late-2");
    assertThat(dead).singleElement().satisfies(d -> {
      assertThat(d.reason()).isEqualTo(DeadLetter.Reason.CONFLICT);
      assertThat(d.detail()).contains("'late-2' is in the inbox with another payload hash");
    });
    // The conflict gave its claim back: the window does not hold late-2 with the other payload, so a copy with the
    // stored payload is the inbox's duplicate, not the window's conflict.
    broker.send(n.topic(), 0, "late-2", "100");
    broker.flush();
    broker.awaitCommitted(n.group(), n.topic(), records + 3);
    assertThat(dead).hasSize(1);
    assertThat(ledger(n)).doesNotContainKeys("late-1", "late-2");
  }

  @Test
  void shouldApplyEachEventOnceWithAWrappedVertxConsumerThroughCopiesAConflictAndARedelivery() throws Exception {
    Names n = names("inbox-wrapped", 2, true);
    subscribe(consumer(n, credit(n), true), n);
    int records = 0;
    for (int i = 0; i < 100; i++) {
      broker.send(n.topic(), "w-" + i, "100");
      records++;
      if (i % 10 == 0) {
        broker.send(n.topic(), "w-" + i, "100"); // a producer retry: the window answers it
        records++;
      }
    }
    broker.send(n.topic(), "w-3", "999"); // the same id, another payload
    records++;
    broker.flush();
    broker.awaitCommitted(n.group(), n.topic(), records);
    assertEachOnce(n, 100);
    assertThat(dead).singleElement().satisfies(d -> assertThat(d.reason()).isEqualTo(DeadLetter.Reason.CONFLICT));

    // Every record again, to another machine's wrapped consumer: its windows are rebuilt from the inbox rows.
    await(consumers.get(0).close(), 30);
    broker.admin().alterConsumerGroupOffsets(n.group(), Map.of(new TopicPartition(n.topic(), 0),
        new OffsetAndMetadata(0), new TopicPartition(n.topic(), 1), new OffsetAndMetadata(0))).all()
        .get(30, TimeUnit.SECONDS);
    dead.clear();
    double duplicatesBefore = counter("dedup.kafka.duplicates");
    double restoredBefore = counter("dedup.kafka.rebuild.ids");
    subscribe(consumer(n, credit(n), true), n);
    broker.awaitCommitted(n.group(), n.topic(), records);
    assertEachOnce(n, 100);
    assertThat(counter("dedup.kafka.rebuild.ids") - restoredBefore).isEqualTo(100);
    assertThat(counter("dedup.kafka.duplicates") - duplicatesBefore).isEqualTo(records - 1);
    assertThat(dead).singleElement().satisfies(d -> {
      assertThat(d.reason()).isEqualTo(DeadLetter.Reason.CONFLICT);
      assertThat(d.record().value()).isEqualTo("999");
    });

    // A row the rebuilt window cannot know (committed by another owner since): the unique key decides.
    db.server().psql("INSERT INTO " + n.table() + " VALUES ('" + n.group() + "', '" + n.topic() + "', 0, 'late-1',"
        + " NULL, '100', 0, 9223372036854775807)");
    broker.send(n.topic(), 0, "late-1", "100");
    broker.send(n.topic(), 0, "w-new", "100");
    broker.flush();
    broker.awaitCommitted(n.group(), n.topic(), records + 2);
    assertThat(ledger(n)).doesNotContainKey("late-1").containsEntry("w-new", 1).hasSize(101);
    assertThat(dead).hasSize(1);
  }

  @Test
  void shouldRebuildANewMachinesWindowFromTheInboxRowsSoThatItAnswersCopiesWithoutTheDatabase() throws Exception {
    Names n = names("inbox-rebuild", 2, true);
    subscribe(consumer(n, credit(n)), n);
    for (int i = 0; i < 100; i++) {
      broker.send(n.topic(), "b-" + i, "1");
    }
    broker.flush();
    broker.awaitCommitted(n.group(), n.topic(), 100);
    await(consumers.get(0).close(), 30);

    // A rewind to 0, read by another machine: its windows start empty and the source topic holds nothing before the
    // committed offset; the inbox rows hold every id.
    broker.admin().alterConsumerGroupOffsets(n.group(), Map.of(new TopicPartition(n.topic(), 0),
        new OffsetAndMetadata(0), new TopicPartition(n.topic(), 1), new OffsetAndMetadata(0))).all()
        .get(30, TimeUnit.SECONDS);
    double restoredBefore = counter("dedup.kafka.rebuild.ids");
    subscribe(consumer(n, credit(n)), n);
    Awaitility.await().atMost(Duration.ofSeconds(30))
        .until(() -> counter("dedup.kafka.rebuild.ids") - restoredBefore == 100);
    db.server().stopServer();
    try {
      broker.awaitCommitted(n.group(), n.topic(), 100);
      assertThat(counter("dedup.kafka.handler.failures")).as("transactions tried").isZero();
    } finally {
      db.server().startServer();
    }
    assertEachOnce(n, 100);
  }

  /**
   * A wrapped consumer whose window journal recorded an offset that Kafka no longer has (the group was deleted): it
   * seeks to the journal's offset and, as {@code create}'s consumer does in INBOX mode, rebuilds the window from the
   * inbox rows before it handles a record, rather than starting from the journal alone: the ids another machine
   * committed to the inbox meanwhile are restored into the window.
   */
  @Test
  void shouldRebuildAWrappedConsumersWindowFromTheInboxWhenOnlyItsJournalRecordedAnOffset(@TempDir Path journalDir)
      throws Exception {
    Names n = names("inbox-wrapped-journal", 1, true);
    DedupKafkaOptions journaled = options().setDedup(options().getDedup().setJournalDir(journalDir.toString()));
    subscribe(consumer(n, credit(n), true, journaled), n);
    for (int i = 0; i < 50; i++) {
      broker.send(n.topic(), "w-" + i, "1");
    }
    broker.flush();
    broker.awaitCommitted(n.group(), n.topic(), 50);
    await(consumers.get(0).close(), 30);
    broker.deleteGroup(n.group()); // Kafka forgets the offsets; the journal still has the last it committed
    // Ids whose effects another machine committed meanwhile: in the inbox, not in this machine's journal.
    long now = System.currentTimeMillis();
    StringBuilder rows = new StringBuilder();
    for (int i = 0; i < 10; i++) {
      rows.append(i == 0 ? "" : ", ").append("('").append(n.group()).append("', '").append(n.topic())
          .append("', 0, 'elsewhere-").append(i).append("', NULL, NULL, ").append(now).append(", ")
          .append(now + 600_000).append(")");
    }
    db.server().psql("INSERT INTO " + n.table() + " VALUES " + rows);

    double restoredBefore = counter("dedup.kafka.rebuild.ids");
    subscribe(consumer(n, credit(n), true, journaled), n);
    Awaitility.await("the ids only the inbox holds, restored").atMost(Duration.ofSeconds(30))
        .until(() -> counter("dedup.kafka.rebuild.ids") - restoredBefore == 10);
    for (int i = 0; i < 10; i++) {
      broker.send(n.topic(), "elsewhere-" + i, "1"); // copies of what the other machine applied
    }
    for (int i = 45; i < 60; i++) {
      broker.send(n.topic(), "w-" + i, "1"); // five copies, ten new
    }
    broker.flush();
    broker.awaitCommitted(n.group(), n.topic(), 75);
    assertEachOnce(n, 60);
  }

  @Test
  void shouldAnswerKnownCopiesWhileTheDatabaseIsStoppedAndApplyTheRestOnceItIsBack() throws Exception {
    Names n = names("inbox-stopped", 2, true);
    subscribe(consumer(n, credit(n)), n);
    for (int i = 0; i < 100; i++) {
      broker.send(n.topic(), "s-" + i, "1");
    }
    broker.flush();
    broker.awaitCommitted(n.group(), n.topic(), 100);

    db.server().stopServer();
    try {
      // Copies the window remembers are acknowledged without the database.
      for (int i = 0; i < 50; i++) {
        broker.send(n.topic(), "s-" + i, "1");
      }
      broker.flush();
      broker.awaitCommitted(n.group(), n.topic(), 150);
      // New records fail their transactions, are not acknowledged, and are retried with backoff.
      for (int i = 100; i < 200; i++) {
        broker.send(n.topic(), "s-" + i, "1");
      }
      broker.flush();
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> counter("dedup.kafka.handler.failures") >= 4);
      assertThat(broker.committed(n.group(), n.topic())).isLessThan(250);
    } finally {
      db.server().startServer();
    }
    broker.awaitCommitted(n.group(), n.topic(), 250);
    assertEachOnce(n, 200);
    assertThat(dead).isEmpty();
  }

  @Test
  void shouldApplyOnceWhenTheConnectionIsKilledInTheMiddleOfTheTransaction() throws Exception {
    Names n = names("inbox-killed", 1, true);
    AtomicBoolean killedOnce = new AtomicBoolean();
    InboxRecordHandler<String, String> credit = credit(n);
    subscribe(consumer(n, (r, conn) -> credit.handle(r, conn).compose(v -> r.key().equals("k-5")
        && killedOnce.compareAndSet(false, true)
        ? conn.query("SELECT pg_sleep(60)").execute().<Void>mapEmpty() // the ledger row is written, not committed
        : Future.succeededFuture())), n);
    for (int i = 0; i < 20; i++) {
      broker.send(n.topic(), "k-" + i, "1");
    }
    broker.flush();
    Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> db.server().psql(
        "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)'").trim().equals("1"));
    assertThat(db.server().terminateBackends()).isPositive();
    broker.awaitCommitted(n.group(), n.topic(), 20);
    assertEachOnce(n, 20);
    assertThat(counter("dedup.kafka.handler.failures")).isGreaterThanOrEqualTo(1);
    assertThat(dead).isEmpty();
  }

  @Test
  void shouldApplyEachEventOnceAcrossARebalanceBetweenTwoConsumers() throws Exception {
    Names n = names("inbox-rebalance", 4, true);
    DedupKafkaConsumer<String, String> a = consumer(n, credit(n));
    subscribe(a, n);
    for (int i = 0; i < 300; i++) {
      broker.send(n.topic(), "r-" + i, "1");
    }
    broker.flush();
    DedupKafkaConsumer<String, String> b = consumer(n, credit(n)); // joins while A works through the records
    subscribe(b, n);
    Awaitility.await().atMost(Duration.ofSeconds(60))
        .until(() -> a.assignment().size() == 2 && b.assignment().size() == 2);
    // Copies of every id, and new ids, after the moved partitions changed machines.
    for (int i = 0; i < 400; i++) {
      broker.send(n.topic(), "r-" + i, "1");
    }
    broker.flush();
    broker.awaitCommitted(n.group(), n.topic(), 700);
    assertEachOnce(n, 400);
    assertThat(dead).isEmpty();
  }

  @Test
  void shouldRefuseToStartOnAMissingOrWrongTableOrAModeWithoutInbox() throws Exception {
    Names n = names("inbox-bad", 1, false);
    assertThatThrownBy(() -> subscribe(consumer(n, credit(n)), n)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("inbox table " + n.table() + " does not exist");
    db.server().psql(DedupInbox.ddl(n.table()) + "; ALTER TABLE " + n.table()
        + " ALTER COLUMN remember_until_ms TYPE text");
    assertThatThrownBy(() -> subscribe(consumer(n, credit(n)), n)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("column remember_until_ms has type text, expected bigint");

    Vertx vertx = Vertx.vertx();
    vertxes.add(vertx);
    DedupKafkaConsumer<String, String> noInbox = DedupKafkaConsumer.<String, String>create(vertx,
        broker.consumerConfig(n.group()), options()).identity(IdentityExtractor.recordKey())
        .handler(r -> Future.succeededFuture());
    consumers.add(noInbox);
    assertThatThrownBy(() -> subscribe(noInbox, n)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("mode INBOX needs an inbox");
    DedupKafkaConsumer<String, String> wrongMode = DedupKafkaConsumer.<String, String>create(vertx,
        broker.consumerConfig(n.group()), options().setMode(AtomicityMode.EFFECT_FIRST))
        .identity(IdentityExtractor.recordKey())
        .inbox(DedupInbox.create(vertx, db.pool(vertx, 1), new DedupInboxOptions().setTable(n.table())), credit(n));
    consumers.add(wrongMode);
    assertThatThrownBy(() -> subscribe(wrongMode, n)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("an inbox is set but mode is EFFECT_FIRST");
    assertThatThrownBy(() -> DedupKafkaConsumer.<String, String>create(vertx, broker.consumerConfig(n.group()),
        options().setChangelog(true))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("changelog must be false in mode INBOX");
  }
}
