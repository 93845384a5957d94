package io.github.vertxdedup.inbox.impl;

import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.inbox.DedupInbox;
import io.github.vertxdedup.inbox.DedupInboxOptions;
import io.github.vertxdedup.inbox.InboxEntry;
import io.github.vertxdedup.inbox.InboxResult;
import io.github.vertxdedup.inbox.InboxRow;
import io.github.vertxdedup.inbox.InboxVerdict;
import io.github.vertxdedup.time.DedupClock;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.DatabaseException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import io.vertx.sqlclient.Tuple;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * How one event goes through the inbox (DedupInbox.execute), and why.
 *
 * BEGIN; INSERT ... ON CONFLICT (consumer_group, topic, kafka_partition, event_id) DO UPDATE SET <the new row>
 * WHERE <stored>.remember_until_ms <= now RETURNING 1. One statement decides the id:
 *   - one row back: the id was absent, or its row had expired and was replaced in place (an expired row counts as
 *     absent, as the window forgets an id at its remember-until). The work runs on the connection, then COMMIT.
 *   - no row back: a live row holds the id. Nothing was written and the transaction is still usable: read the stored
 *     hash, ROLLBACK, answer DUPLICATE or CONFLICT. No unique violation is raised for the id at all, so the common
 *     duplicate costs two statements and no aborted transaction.
 * A concurrent transaction inserting the same id makes ours wait on its row; once it commits, ours finds a live row
 * (a duplicate), and once it rolls back, ours inserts: the unique key decides, never a read before the write.
 *
 * The business key is a second unique index, which ON CONFLICT cannot name as well; a clash there raises
 * unique_violation (23505) from our INSERT (not from the work: a violation in the caller's writes is the caller's
 * failure). The transaction is then rolled back and the row holding the key is read: live, it decides as above;
 * expired, it is deleted (only if still expired) and the whole transaction is tried once more.
 *
 * The window sits in front of this (the Kafka consumer's INBOX mode, or process() here): it answers the ids it
 * remembers without a round trip, and remembers an id only after the transaction committed, so a rolled-back
 * transaction never leaves an id remembered there.
 */

/**
 * The PostgreSQL implementation of {@link DedupInbox}: one prepared statement per step, on connections of the
 * application's pool. Thread-safe: it holds no state but the retention timer's.
 */
public final class SqlInbox implements DedupInbox {

  private static final Logger LOG = LoggerFactory.getLogger(DedupInbox.class);
  /** SQLSTATE unique_violation. */
  static final String UNIQUE_VIOLATION = "23505";
  private static final String DDL_RESOURCE = "/io/github/vertxdedup/inbox/dedup_inbox.sql";

  /** The columns the inbox needs and their types as {@code information_schema.columns.data_type} names them. */
  static final Map<String, String> COLUMNS = columns();
  private static final Set<String> ID_KEY = Set.of("consumer_group", "topic", "kafka_partition", "event_id");
  private static final Set<String> BUSINESS_KEY = Set.of("consumer_group", "topic", "kafka_partition",
      "business_key");

  private final Vertx vertx;
  private final Pool pool;
  private final DedupInboxOptions options;
  private final DedupClock clock;
  private final String table;
  private final String insertSql;
  private final String byIdSql;
  private final String byKeySql;
  private final String freeKeySql;
  private final String purgeSql;
  private final String liveSql;
  private final AtomicBoolean purging = new AtomicBoolean();
  private long timerId = -1;

  /**
   * @param vertx the Vert.x instance (the retention timer)
   * @param pool the application's pool
   * @param options the options, copied
   * @param clock the clock of first-seen and remember-until instants
   */
  public SqlInbox(Vertx vertx, Pool pool, DedupInboxOptions options, DedupClock clock) {
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.pool = Objects.requireNonNull(pool, "pool");
    this.options = new DedupInboxOptions(Objects.requireNonNull(options, "options"));
    this.clock = Objects.requireNonNull(clock, "clock");
    this.table = this.options.getTable();
    String t = table;
    this.insertSql = "INSERT INTO " + t + " AS i (consumer_group, topic, kafka_partition, event_id, business_key,"
        + " payload_hash, first_seen_ms, remember_until_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        + " ON CONFLICT (consumer_group, topic, kafka_partition, event_id) DO UPDATE SET"
        + " business_key = EXCLUDED.business_key, payload_hash = EXCLUDED.payload_hash,"
        + " first_seen_ms = EXCLUDED.first_seen_ms, remember_until_ms = EXCLUDED.remember_until_ms"
        + " WHERE i.remember_until_ms <= EXCLUDED.first_seen_ms RETURNING 1";
    String row = "SELECT payload_hash, first_seen_ms, remember_until_ms FROM " + t
        + " WHERE consumer_group = $1 AND topic = $2 AND kafka_partition = $3";
    this.byIdSql = row + " AND event_id = $4";
    this.byKeySql = row + " AND business_key = $4";
    this.freeKeySql = "DELETE FROM " + t + " WHERE consumer_group = $1 AND topic = $2 AND kafka_partition = $3"
        + " AND business_key = $4 AND remember_until_ms <= $5";
    this.purgeSql = "DELETE FROM " + t + " AS i USING (SELECT consumer_group, topic, kafka_partition, event_id FROM "
        + t + " WHERE remember_until_ms <= $1 ORDER BY remember_until_ms LIMIT $2 FOR UPDATE SKIP LOCKED) AS d"
        + " WHERE i.consumer_group = d.consumer_group AND i.topic = d.topic"
        + " AND i.kafka_partition = d.kafka_partition AND i.event_id = d.event_id AND i.remember_until_ms <= $1";
    this.liveSql = "SELECT event_id, business_key, payload_hash, first_seen_ms, remember_until_ms FROM " + t
        + " WHERE consumer_group = $1 AND topic = $2 AND kafka_partition = $3 AND remember_until_ms > $4"
        + " AND (first_seen_ms, event_id) > ($5, $6) ORDER BY first_seen_ms, event_id LIMIT $7";
  }

  /**
   * @param table a validated table name
   * @return the DDL of the resource, for that table
   */
  public static String ddl(String table) {
    String name = table.substring(table.indexOf('.') + 1);
    try (InputStream in = SqlInbox.class.getResourceAsStream(DDL_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("the inbox DDL resource " + DDL_RESOURCE + " is missing from the class path");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("{table}", table).replace("{name}", name);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + DDL_RESOURCE, e);
    }
  }

  @Override
  public DedupInboxOptions options() {
    return new DedupInboxOptions(options);
  }

  // --- schema ------------------------------------------------------------------------------------------------------

  @Override
  public Future<Void> createSchema() {
    return pool.query(ddl(table)).execute().compose(rs -> verifySchema());
  }

  @Override
  public Future<Void> verifySchema() {
    int dot = table.indexOf('.');
    String schema = dot < 0 ? null : table.substring(0, dot);
    String name = table.substring(dot + 1);
    Future<RowSet<Row>> columns = pool.preparedQuery("SELECT column_name::text, data_type::text"
        + " FROM information_schema.columns WHERE table_schema = COALESCE($1, current_schema())"
        + " AND table_name = $2").execute(Tuple.of(schema, name));
    return columns.compose(cols -> {
      if (cols.size() == 0) {
        return Future.failedFuture(new IllegalStateException("inbox table " + table + " does not exist: create it"
            + " with DedupInbox.createSchema(), or run the DDL of DedupInbox.ddl(\"" + table + "\")"));
      }
      Map<String, String> found = new HashMap<>();
      for (Row r : cols) {
        found.put(r.getString(0), r.getString(1));
      }
      List<String> problems = new ArrayList<>();
      COLUMNS.forEach((column, type) -> {
        String actual = found.get(column);
        if (actual == null) {
          problems.add("column " + column + " is missing (expected " + type + ")");
        } else if (!actual.equals(type)) {
          problems.add("column " + column + " has type " + actual + ", expected " + type);
        }
      });
      return pool.preparedQuery("SELECT ix.indisunique, ix.indpred IS NOT NULL, ARRAY(SELECT a.attname::text"
          + " FROM unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord) JOIN pg_attribute a"
          + " ON a.attrelid = ix.indrelid AND a.attnum = k.attnum ORDER BY k.ord)"
          + " FROM pg_index ix WHERE ix.indrelid = to_regclass($1)").execute(Tuple.of(table)).compose(indexes -> {
            boolean idKey = false;
            boolean businessKey = false;
            boolean retention = false;
            for (Row r : indexes) {
              boolean unique = r.getBoolean(0);
              boolean partial = r.getBoolean(1);
              List<String> cs = List.of(r.getArrayOfStrings(2));
              idKey |= unique && !partial && Set.copyOf(cs).equals(ID_KEY) && cs.size() == ID_KEY.size();
              businessKey |= unique && Set.copyOf(cs).equals(BUSINESS_KEY) && cs.size() == BUSINESS_KEY.size();
              retention |= !cs.isEmpty() && cs.get(0).equals("remember_until_ms");
            }
            if (!idKey) {
              problems.add("no unique key on (consumer_group, topic, kafka_partition, event_id)");
            }
            if (!businessKey) {
              problems.add("no unique index on (consumer_group, topic, kafka_partition, business_key)");
            }
            if (!retention) {
              problems.add("no index on remember_until_ms (retention would scan the table)");
            }
            if (problems.isEmpty()) {
              return Future.succeededFuture();
            }
            return Future.failedFuture(new IllegalStateException("inbox table " + table + " is not usable: "
                + String.join("; ", problems) + " (the expected DDL: DedupInbox.ddl(\"" + table + "\"))"));
          });
    });
  }

  // --- one event ---------------------------------------------------------------------------------------------------

  @Override
  public <T> Future<InboxResult<T>> execute(InboxEntry entry, Function<SqlConnection, Future<T>> work) {
    Objects.requireNonNull(entry, "entry");
    Objects.requireNonNull(work, "work");
    long now = clock.nowMs();
    if (entry.rememberUntilMs() <= now) {
      return Future.failedFuture(new IllegalArgumentException("rememberUntilMs must be after now (" + now
          + " ms) but was " + entry.rememberUntilMs()));
    }
    return attempt(entry, work, now, true);
  }

  /** The outcome of one transaction: decided, or the business key is held by an expired row that must go first. */
  private record Attempt<T>(InboxResult<T> result, boolean keyHeldByExpiredRow) {
  }

  private <T> Future<InboxResult<T>> attempt(InboxEntry entry, Function<SqlConnection, Future<T>> work, long now,
      boolean mayFreeKey) {
    return pool.getConnection().compose(conn -> transaction(conn, entry, work, now).eventually(conn::close))
        .compose(a -> {
          if (!a.keyHeldByExpiredRow()) {
            return Future.succeededFuture(a.result());
          }
          if (!mayFreeKey) {
            return Future.failedFuture(new IllegalStateException("business key '" + entry.businessKey()
                + "' of id '" + entry.id() + "' is still held by an expired row after it was deleted"));
          }
          return pool.preparedQuery(freeKeySql).execute(Tuple.of(entry.group(), entry.topic(), entry.partition(),
              entry.businessKey(), now)).compose(rs -> attempt(entry, work, now, false));
        });
  }

  private <T> Future<Attempt<T>> transaction(SqlConnection conn, InboxEntry entry,
      Function<SqlConnection, Future<T>> work, long now) {
    return conn.begin().compose(tx -> conn.preparedQuery(insertSql).execute(Tuple.from(new Object[] {
        entry.group(), entry.topic(), entry.partition(), entry.id(), entry.businessKey(), entry.payloadHash(), now,
        entry.rememberUntilMs()})).transform(inserted -> {
          if (inserted.failed()) {
            Throwable cause = inserted.cause();
            if (entry.businessKey() != null && cause instanceof DatabaseException de
                && UNIQUE_VIOLATION.equals(de.getSqlState())) {
              // Another row holds the business key: read it once the aborted transaction is rolled back.
              return rollback(tx).compose(v -> decideByKey(conn, entry, now));
            }
            return rollback(tx).transform(v -> Future.failedFuture(cause));
          }
          if (inserted.result().rowCount() == 0) {
            // A live row holds the id: nothing was written.
            return conn.preparedQuery(byIdSql).execute(Tuple.of(entry.group(), entry.topic(), entry.partition(),
                entry.id())).compose(rows -> rollback(tx).map(v -> decided(entry, rows.iterator().next())));
          }
          return call(work, conn).transform(done -> done.succeeded()
              ? tx.commit().map(v -> new Attempt<>(new InboxResult<>(InboxVerdict.APPLIED, done.result(), null, now,
                  entry.rememberUntilMs()), false))
              : rollback(tx).transform(v -> Future.failedFuture(done.cause())));
        }));
  }

  /** The row holding the entry's business key decides, if it lives; an expired one is to be deleted first. */
  private <T> Future<Attempt<T>> decideByKey(SqlConnection conn, InboxEntry entry, long now) {
    return conn.preparedQuery(byKeySql).execute(Tuple.of(entry.group(), entry.topic(), entry.partition(),
        entry.businessKey())).map(rows -> {
          if (rows.size() == 0) {
            // Deleted since (retention): try again as if it had expired.
            return new Attempt<>(null, true);
          }
          Row r = rows.iterator().next();
          if (r.getLong(2) <= now) {
            return new Attempt<>(null, true);
          }
          return decided(entry, r);
        });
  }

  /** A live row ({@code payload_hash, first_seen_ms, remember_until_ms}) holds the id or key: duplicate or conflict. */
  private static <T> Attempt<T> decided(InboxEntry entry, Row stored) {
    String hash = stored.getString(0);
    boolean conflict = hash != null && entry.payloadHash() != null && !hash.equals(entry.payloadHash());
    return new Attempt<>(new InboxResult<>(conflict ? InboxVerdict.CONFLICT : InboxVerdict.DUPLICATE, null, hash,
        stored.getLong(1), stored.getLong(2)), false);
  }

  /** Rolls back; a rollback that fails (the connection is gone, so is the transaction) is not an error of its own. */
  private static Future<Void> rollback(Transaction tx) {
    return tx.rollback().otherwiseEmpty();
  }

  private static <T> Future<T> call(Function<SqlConnection, Future<T>> work, SqlConnection conn) {
    try {
      Future<T> f = work.apply(conn);
      return f != null ? f : Future.failedFuture(new NullPointerException("the inbox work returned null"));
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
  }

  @Override
  public <T> Future<InboxResult<T>> process(DedupClient window, DedupEvent event, InboxEntry entry,
      Function<SqlConnection, Future<T>> work) {
    return window.claim(event).compose(claim -> switch (claim.verdict()) {
      case DUPLICATE, CONFLICT -> Future.succeededFuture(new InboxResult<>(
          claim.verdict() == DedupVerdict.DUPLICATE ? InboxVerdict.DUPLICATE
              : InboxVerdict.CONFLICT, null, null, claim.firstSeenMs(), claim.expiresAtMs()));
      case ACCEPTED -> {
        event.setClaimToken(claim.claimToken());
        // Commit and release take the id, the key and the token only.
        DedupEvent settle = new DedupEvent(event.getId()).setKey(event.getKey()).setClaimToken(claim.claimToken());
        yield execute(entry, work).transform(ar -> {
          if (ar.succeeded() && ar.result().verdict() != InboxVerdict.CONFLICT) {
            // Committed (or applied before): remember it. A failed commit lets the claim lapse; the inbox still
            // answers the next copy.
            return window.commit(settle).transform(c -> Future.succeededFuture(ar.result()));
          }
          return window.release(settle).transform(r -> ar.succeeded() ? Future.succeededFuture(ar.result())
              : Future.failedFuture(ar.cause()));
        });
      }
      case IN_FLIGHT -> Future.failedFuture(new IllegalStateException("id '" + event.getId()
          + "' is in flight (claimed by another delivery until " + claim.expiresAtMs() + " ms): retry later"));
      default -> Future.failedFuture(new IllegalStateException("the window answered " + claim
          + " to the claim of id '" + event.getId() + "'"));
    });
  }

  // --- rebuild and retention ---------------------------------------------------------------------------------------

  @Override
  public Future<List<InboxRow>> liveRows(String group, String topic, int partition, InboxRow after, int limit) {
    if (limit < 1) {
      return Future.failedFuture(new IllegalArgumentException("limit must be >= 1 but was " + limit));
    }
    Tuple args = Tuple.from(new Object[] {group, topic, partition, clock.nowMs(),
        after == null ? Long.MIN_VALUE : after.firstSeenMs(), after == null ? "" : after.id(), limit});
    return pool.preparedQuery(liveSql).execute(args).map(rows -> {
      List<InboxRow> out = new ArrayList<>(rows.size());
      for (Row r : rows) {
        out.add(new InboxRow(r.getString(0), r.getString(1), r.getString(2), r.getLong(3), r.getLong(4)));
      }
      return out;
    });
  }

  @Override
  public Future<Integer> purgeExpired() {
    return pool.preparedQuery(purgeSql).execute(Tuple.of(clock.nowMs(), options.getPurgeBatchSize()))
        .map(RowSet::rowCount);
  }

  @Override
  public synchronized DedupInbox startRetention() {
    if (timerId < 0) {
      timerId = vertx.setPeriodic(options.getPurgeIntervalMs(), id -> runRetention());
    }
    return this;
  }

  /** One retention run: batch after batch until one comes back short; skipped while the previous run is under way. */
  private void runRetention() {
    if (!purging.compareAndSet(false, true)) {
      return;
    }
    purgeUntilShort().onComplete(ar -> {
      purging.set(false);
      if (ar.failed()) {
        LOG.warn("inbox table {}: deleting expired rows failed, trying again in {} ms: {}", table,
            options.getPurgeIntervalMs(), String.valueOf(ar.cause()));
      }
    });
  }

  private Future<Void> purgeUntilShort() {
    return purgeExpired().compose(n -> n < options.getPurgeBatchSize() ? Future.succeededFuture()
        : purgeUntilShort());
  }

  @Override
  public synchronized Future<Void> close() {
    if (timerId >= 0) {
      vertx.cancelTimer(timerId);
      timerId = -1;
    }
    return Future.succeededFuture();
  }

  private static Map<String, String> columns() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("consumer_group", "text");
    m.put("topic", "text");
    m.put("kafka_partition", "integer");
    m.put("event_id", "text");
    m.put("business_key", "text");
    m.put("payload_hash", "text");
    m.put("first_seen_ms", "bigint");
    m.put("remember_until_ms", "bigint");
    return Collections.unmodifiableMap(m);
  }
}
