package io.github.vertxdedup.inbox;

import static io.github.vertxdedup.TestFutures.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.TestDeployments;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.DatabaseException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The inbox on a real PostgreSQL server ({@link PostgresTestSupport}), time on a {@link ManualClock}: one table per
 * test, and a ledger without any unique key beside it, so that an effect applied twice shows as two ledger rows.
 */
@ExtendWith(VertxExtension.class)
class DedupInboxTest {

  private static final long T0 = 1_700_000_000_000L;
  private static final long W = 60_000;

  @RegisterExtension
  static final PostgresTestSupport db = new PostgresTestSupport();

  private final ManualClock clock = new ManualClock(T0);
  private Pool pool;
  private String table;
  private String ledger;
  private DedupInbox inbox;

  @BeforeEach
  void setUp(Vertx vertx, TestInfo info) {
    String name = info.getTestMethod().orElseThrow().getName().replaceAll("[^A-Za-z]", "").toLowerCase();
    table = "inbox_" + name.substring(0, Math.min(40, name.length()));
    ledger = "ledger_" + name.substring(0, Math.min(40, name.length()));
    pool = db.pool(vertx, 4);
    db.server().psql("DROP TABLE IF EXISTS " + table + "; DROP TABLE IF EXISTS " + ledger
        + "; CREATE TABLE " + ledger + " (event_id text NOT NULL, amount integer NOT NULL)");
    inbox = DedupInbox.create(vertx, pool, new DedupInboxOptions().setTable(table).setPurgeBatchSize(1000), clock);
  }

  @AfterEach
  void tearDown() {
    await(inbox.close(), 10);
    await(pool.close(), 10);
  }

  private InboxEntry entry(String id, String key, String hash) {
    return new InboxEntry("g", "payments", 0, id, key, hash, clock.nowMs() + W);
  }

  private Function<SqlConnection, Future<String>> credit(String id, int amount) {
    return conn -> conn.preparedQuery("INSERT INTO " + ledger + " VALUES ($1, $2)").execute(Tuple.of(id, amount))
        .map("credited " + id);
  }

  private int ledgerRows(String id) {
    return Integer.parseInt(db.server().psql("SELECT count(*) FROM " + ledger + " WHERE event_id = '" + id + "'")
        .trim());
  }

  private int inboxRows() {
    return Integer.parseInt(db.server().psql("SELECT count(*) FROM " + table).trim());
  }

  @Test
  void shouldCreateTheTableOnlyWhenAskedAndAcceptItThen() {
    assertThatThrownBy(() -> await(inbox.verifySchema(), 10)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("inbox table " + table + " does not exist");
    assertThatThrownBy(() -> await(inbox.execute(entry("a", null, null), credit("a", 1)), 10))
        .isInstanceOf(DatabaseException.class); // never created behind the application's back
    await(inbox.createSchema(), 10);
    await(inbox.createSchema(), 10); // IF NOT EXISTS: asking twice is harmless
    await(inbox.verifySchema(), 10);
    assertThat(DedupInbox.ddl(table)).contains("CREATE TABLE IF NOT EXISTS " + table + " (")
        .contains(table + "_remember_until");
  }

  @Test
  void shouldNameEveryColumnAndKeyThatIsWrong() {
    db.server().psql("CREATE TABLE " + table + " (consumer_group text, topic text, kafka_partition bigint,"
        + " event_id text, business_key text, first_seen_ms bigint, remember_until_ms timestamptz)");
    assertThatThrownBy(() -> await(inbox.verifySchema(), 10)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("inbox table " + table + " is not usable")
        .hasMessageContaining("column kafka_partition has type bigint, expected integer")
        .hasMessageContaining("column payload_hash is missing (expected text)")
        .hasMessageContaining("column remember_until_ms has type timestamp with time zone, expected bigint")
        .hasMessageContaining("no unique key on (consumer_group, topic, kafka_partition, event_id)")
        .hasMessageContaining("no unique index on (consumer_group, topic, kafka_partition, business_key)")
        .hasMessageContaining("no index on remember_until_ms");
  }

  @Test
  void shouldApplyOnceThenAnswerDuplicateOrConflictByTheStoredHashWithoutRunningTheWork() {
    await(inbox.createSchema(), 10);
    InboxResult<String> first = await(inbox.execute(entry("p1", null, "h1"), credit("p1", 10)), 10);
    assertThat(first.verdict()).isEqualTo(InboxVerdict.APPLIED);
    assertThat(first.value()).isEqualTo("credited p1");
    assertThat(first.rememberUntilMs()).isEqualTo(T0 + W);

    clock.advanceMs(1_000);
    InboxResult<String> copy = await(inbox.execute(entry("p1", null, "h1"), credit("p1", 10)), 10);
    assertThat(copy.verdict()).isEqualTo(InboxVerdict.DUPLICATE);
    assertThat(copy.storedPayloadHash()).isEqualTo("h1");
    assertThat(copy.firstSeenMs()).isEqualTo(T0);
    InboxResult<String> noHash = await(inbox.execute(entry("p1", null, null), credit("p1", 10)), 10);
    assertThat(noHash.verdict()).isEqualTo(InboxVerdict.DUPLICATE);
    InboxResult<String> other = await(inbox.execute(entry("p1", null, "h2"), credit("p1", 99)), 10);
    assertThat(other.verdict()).isEqualTo(InboxVerdict.CONFLICT);
    assertThat(other.storedPayloadHash()).isEqualTo("h1");

    assertThat(ledgerRows("p1")).isEqualTo(1);
    assertThat(db.server().psql("SELECT payload_hash, first_seen_ms, remember_until_ms FROM " + table).trim())
        .isEqualTo("h1|" + T0 + "|" + (T0 + W));
  }

  @Test
  void shouldCountARowAsAbsentFromItsRememberUntilOn() {
    await(inbox.createSchema(), 10);
    for (String id : List.of("minus", "equal", "plus")) {
      assertThat(await(inbox.execute(entry(id, null, "h"), credit(id, 1)), 10).verdict())
          .isEqualTo(InboxVerdict.APPLIED);
    }
    long until = T0 + W;

    clock.setMs(until - 1); // one millisecond before remember-until: still remembered
    assertThat(await(inbox.execute(entry("minus", null, "h"), credit("minus", 1)), 10).verdict())
        .isEqualTo(InboxVerdict.DUPLICATE);
    clock.setMs(until); // at remember-until: forgotten, applied again, the row replaced in place
    InboxResult<String> equal = await(inbox.execute(entry("equal", null, "other"), credit("equal", 1)), 10);
    assertThat(equal.verdict()).isEqualTo(InboxVerdict.APPLIED);
    clock.setMs(until + 1);
    assertThat(await(inbox.execute(entry("plus", null, "h"), credit("plus", 1)), 10).verdict())
        .isEqualTo(InboxVerdict.APPLIED);

    assertThat(ledgerRows("minus")).isEqualTo(1);
    assertThat(ledgerRows("equal")).isEqualTo(2);
    assertThat(ledgerRows("plus")).isEqualTo(2);
    assertThat(db.server().psql("SELECT payload_hash, first_seen_ms, remember_until_ms FROM " + table
        + " WHERE event_id = 'equal'").trim()).isEqualTo("other|" + until + "|" + (until + W));
    // The replaced rows live again: a copy now is a duplicate.
    assertThat(await(inbox.execute(entry("equal", null, "other"), credit("equal", 1)), 10).verdict())
        .isEqualTo(InboxVerdict.DUPLICATE);
  }

  @Test
  void shouldCatchABusinessKeyUnderANewIdUntilItsRowExpires() {
    await(inbox.createSchema(), 10);
    assertThat(await(inbox.execute(entry("id-1", "order-7", "h"), credit("order-7", 5)), 10).verdict())
        .isEqualTo(InboxVerdict.APPLIED);
    clock.advanceMs(10);
    InboxResult<String> again = await(inbox.execute(entry("id-2", "order-7", "h"), credit("order-7", 5)), 10);
    assertThat(again.verdict()).isEqualTo(InboxVerdict.DUPLICATE);
    assertThat(await(inbox.execute(entry("id-3", "order-7", "x"), credit("order-7", 5)), 10).verdict())
        .isEqualTo(InboxVerdict.CONFLICT);
    assertThat(ledgerRows("order-7")).isEqualTo(1);

    clock.setMs(T0 + W); // the key's row expired: the key is free for a new event
    assertThat(await(inbox.execute(entry("id-4", "order-7", "h"), credit("order-7", 5)), 10).verdict())
        .isEqualTo(InboxVerdict.APPLIED);
    assertThat(ledgerRows("order-7")).isEqualTo(2);
    assertThat(db.server().psql("SELECT event_id FROM " + table).trim()).isEqualTo("id-4");
  }

  @Test
  void shouldRollTheRowBackWithTheWorkSoThatTheNextCopyApplies() {
    await(inbox.createSchema(), 10);
    RuntimeException boom = new IllegalStateException("ledger refused");
    assertThatThrownBy(() -> await(inbox.execute(entry("p", null, "h"), conn -> credit("p", 1).apply(conn)
        .compose(v -> Future.failedFuture(boom))), 10)).isSameAs(boom);
    assertThatThrownBy(() -> await(inbox.execute(entry("p", null, "h"), conn -> {
      throw boom;
    }), 10)).isSameAs(boom);
    // A unique violation in the caller's own writes is the caller's failure, not a duplicate.
    db.server().psql("CREATE UNIQUE INDEX ON " + ledger + " (event_id)");
    db.server().psql("INSERT INTO " + ledger + " VALUES ('q', 1)");
    assertThatThrownBy(() -> await(inbox.execute(entry("q", null, "h"), credit("q", 1)), 10))
        .isInstanceOf(DatabaseException.class).hasMessageContaining("duplicate key");
    assertThat(inboxRows()).isZero();
    assertThat(ledgerRows("p")).isZero();

    assertThat(await(inbox.execute(entry("p", null, "h"), credit("p", 1)), 10).verdict())
        .isEqualTo(InboxVerdict.APPLIED);
    assertThat(ledgerRows("p")).isEqualTo(1);
  }

  @Test
  void shouldLetOneOfTwoConcurrentCopiesApplyAndAnswerTheOtherDuplicate() {
    await(inbox.createSchema(), 10);
    Promise<Void> firstInside = Promise.promise();
    Promise<Void> release = Promise.promise();
    Future<InboxResult<String>> first = inbox.execute(entry("c", null, "h"), conn -> {
      firstInside.complete();
      return release.future().compose(v -> credit("c", 1).apply(conn));
    });
    await(firstInside.future(), 10);
    Future<InboxResult<String>> second = inbox.execute(entry("c", null, "h"), credit("c", 1));
    // The second copy's insert waits on the first's uncommitted row: the unique key decides, not a read.
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> db.server().psql(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").trim().equals("1"));
    release.complete();
    assertThat(await(first, 10).verdict()).isEqualTo(InboxVerdict.APPLIED);
    assertThat(await(second, 10).verdict()).isEqualTo(InboxVerdict.DUPLICATE);
    assertThat(ledgerRows("c")).isEqualTo(1);
  }

  @Test
  void shouldLeaveNothingWhenTheConnectionIsKilledMidTransaction() {
    await(inbox.createSchema(), 10);
    Promise<Void> inside = Promise.promise();
    Future<InboxResult<String>> killed = inbox.execute(entry("k", null, "h"), conn -> credit("k", 1).apply(conn)
        .compose(v -> {
          inside.complete();
          return conn.query("SELECT pg_sleep(60)").execute().map("slept");
        }));
    await(inside.future(), 10);
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> db.server().psql(
        "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)'").trim().equals("1"));
    assertThat(db.server().terminateBackends()).isPositive();
    assertThatThrownBy(() -> await(killed, 20)).isNotNull();
    assertThat(inboxRows()).isZero();
    assertThat(ledgerRows("k")).isZero();

    assertThat(await(inbox.execute(entry("k", null, "h"), credit("k", 1)), 10).verdict())
        .isEqualTo(InboxVerdict.APPLIED);
    assertThat(ledgerRows("k")).isEqualTo(1);
  }

  @Test
  void shouldDeleteExpiredRowsInBoundedBatchesWhileDuplicatesKeepArriving() {
    await(inbox.createSchema(), 10);
    // 2,500 rows that expire at T0 + 1 s, and 10 live ones applied through the inbox.
    db.server().psql("INSERT INTO " + table + " SELECT 'g', 'payments', 0, 'old-' || n, NULL, 'h', " + T0 + ", "
        + (T0 + 1_000) + " FROM generate_series(1, 2500) AS n");
    for (int i = 0; i < 10; i++) {
      assertThat(await(inbox.execute(entry("live-" + i, null, "h"), credit("live-" + i, 1)), 10).verdict())
          .isEqualTo(InboxVerdict.APPLIED);
    }
    clock.setMs(T0 + 999); // one millisecond before: nothing is expired
    assertThat(await(inbox.purgeExpired(), 10)).isZero();

    clock.setMs(T0 + 1_000);
    List<Integer> batches = new ArrayList<>();
    int n;
    int i = 0;
    do {
      n = await(inbox.purgeExpired(), 10);
      batches.add(n);
      // A duplicate of a live row between two batches is still a duplicate; its work never runs.
      String id = "live-" + (i++ % 10);
      assertThat(await(inbox.execute(entry(id, null, "h"), credit(id, 1)), 10).verdict())
          .isEqualTo(InboxVerdict.DUPLICATE);
    } while (n > 0);
    assertThat(batches).containsExactly(1000, 1000, 500, 0);
    assertThat(inboxRows()).isEqualTo(10);
    for (int k = 0; k < 10; k++) {
      assertThat(ledgerRows("live-" + k)).isEqualTo(1);
    }
  }

  @Test
  void shouldRunRetentionOnItsTimerBatchAfterBatch(Vertx vertx) {
    DedupInbox timed = DedupInbox.create(vertx, pool, new DedupInboxOptions().setTable(table).setPurgeBatchSize(100)
        .setPurgeIntervalMs(20), clock);
    await(timed.createSchema(), 10);
    db.server().psql("INSERT INTO " + table + " SELECT 'g', 'payments', 0, 'old-' || n, NULL, NULL, " + T0 + ", "
        + (T0 + 1_000) + " FROM generate_series(1, 350) AS n");
    clock.setMs(T0 + 1_000);
    timed.startRetention();
    try {
      Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> inboxRows() == 0);
    } finally {
      await(timed.close(), 10);
    }
  }

  @Test
  void shouldAnswerFromTheWindowWithoutTheDatabaseOnceTheTransactionCommitted(Vertx vertx) {
    await(inbox.createSchema(), 10);
    DedupOptions service = new DedupOptions().setAddress("inbox-test").setWindowMs(W).setPartitions(1);
    TestDeployments.deployService(vertx, clock, service);
    DedupClient window = DedupClient.create(vertx, service);
    AtomicInteger works = new AtomicInteger();
    Function<SqlConnection, Future<String>> work = conn -> {
      works.incrementAndGet();
      return credit("w", 1).apply(conn);
    };

    // A failed transaction gives the claim back: the window does not remember the id.
    assertThatThrownBy(() -> await(inbox.process(window, new DedupEvent("w").setPayloadHash("h"),
        entry("w", null, "h"), conn -> Future.<String>failedFuture(new IllegalStateException("down"))), 10))
        .hasMessage("down");
    assertThat(await(inbox.process(window, new DedupEvent("w").setPayloadHash("h"), entry("w", null, "h"), work),
        10).verdict()).isEqualTo(InboxVerdict.APPLIED);

    db.server().stopServer();
    try {
      // The database is down, and the window still answers the copy: no round trip.
      assertThat(await(inbox.process(window, new DedupEvent("w").setPayloadHash("h"), entry("w", null, "h"), work),
          10).verdict()).isEqualTo(InboxVerdict.DUPLICATE);
    } finally {
      db.server().startServer();
    }
    assertThat(works).hasValue(1);
    assertThat(ledgerRows("w")).isEqualTo(1);
  }
}
