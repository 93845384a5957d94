package io.github.vertxdedup.inbox;

import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.inbox.impl.SqlInbox;
import io.github.vertxdedup.time.DedupClock;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import java.util.List;
import java.util.function.Function;

/**
 * A transactional inbox in PostgreSQL on the Vert.x SQL client: {@link #execute} inserts an event's identity into the
 * inbox table and runs the caller's writes in the same transaction, so the effect and the record of the id commit
 * together or not at all. Whatever crashes, the effect is applied once for every copy of the event that arrives
 * while its row lives (before its {@code remember_until}). See {@code docs/atomicity.md}, "The inbox mode".
 *
 * <h2>The table</h2>
 * One row per event: {@code consumer_group text, topic text, kafka_partition integer, event_id text,
 * business_key text, payload_hash text, first_seen_ms bigint, remember_until_ms bigint}; primary key
 * {@code (consumer_group, topic, kafka_partition, event_id)}, a unique index on
 * {@code (consumer_group, topic, kafka_partition, business_key)} where a business key is given, and an index on
 * {@code remember_until_ms} for retention. The DDL ships with the library ({@link #ddl}, from the resource
 * {@code io/github/vertxdedup/inbox/dedup_inbox.sql}); it is created only when asked ({@link #createSchema}), never
 * silently. {@link #verifySchema} checks a table before use. The table is not partitioned by time: PostgreSQL
 * requires the partition key in every unique constraint, so uniqueness would hold within one partition only.
 *
 * <h2>Expired rows</h2>
 * A row whose {@code remember_until_ms} is at or before now counts as absent: a new copy of its id is applied again,
 * as the window forgets an id at its remember-until instant. The insert replaces such a row in place
 * ({@code INSERT ... ON CONFLICT (keys) DO UPDATE ... WHERE remember_until_ms <= now}), and a business key held by
 * an expired row is freed by deleting that row first. {@link #purgeExpired} deletes expired rows in bounded batches,
 * by the index on {@code remember_until_ms}; {@link #startRetention} runs it on a timer.
 *
 * <p>Time comes from the inbox's {@link DedupClock} (the first seen instant and "now" are the clock's, never the
 * database's), so the boundary is exact and tests control it.
 *
 * <p>Thread-safety: thread-safe; every method returns at once and completes on the caller's context (that of the
 * pool's connection). Nothing blocks.
 */
public interface DedupInbox {

  /**
   * Creates an inbox on {@code pool}. Nothing is checked or created before {@link #verifySchema} or
   * {@link #createSchema}.
   *
   * @param vertx the Vert.x instance (the retention timer)
   * @param pool a pool of connections to the database (a PostgreSQL pool: {@code PgBuilder.pool()}); the inbox
   *     does not close it
   * @param options the table and retention settings (copied)
   * @param clock the clock of first-seen and remember-until instants
   * @return the inbox
   */
  static DedupInbox create(Vertx vertx, Pool pool, DedupInboxOptions options, DedupClock clock) {
    return new SqlInbox(vertx, pool, options, clock);
  }

  /**
   * Creates an inbox on the system clock.
   *
   * @param vertx the Vert.x instance
   * @param pool a pool of connections to the database
   * @param options the table and retention settings
   * @return the inbox
   */
  static DedupInbox create(Vertx vertx, Pool pool, DedupInboxOptions options) {
    return create(vertx, pool, options, DedupClock.system());
  }

  /**
   * The DDL of the inbox table and its indexes, as {@link #createSchema} runs it ({@code CREATE ... IF NOT EXISTS}).
   *
   * @param table the table's name, as {@link DedupInboxOptions#setTable} accepts it
   * @return the statements, separated by semicolons
   * @throws IllegalArgumentException if the name is not one {@link DedupInboxOptions#setTable} accepts
   */
  static String ddl(String table) {
    return SqlInbox.ddl(new DedupInboxOptions().setTable(table).getTable());
  }

  /** @return the inbox's options (a copy) */
  DedupInboxOptions options();

  /**
   * Creates the table and its indexes if they do not exist ({@link #ddl}), then {@link #verifySchema verifies} it. Only
   * when the application asks: the inbox never creates anything by itself.
   *
   * @return completes when the table is there and right; fails as {@link #verifySchema}, or with the database's error
   */
  Future<Void> createSchema();

  /**
   * Checks that the table exists with the columns, types and unique keys the inbox needs.
   *
   * @return completes if it does; fails with an {@link IllegalStateException} naming what is wrong (the table is
   *     missing; a column is missing or has another type, naming the column, its type and the one expected; the
   *     unique key on the id or on the business key, or the index on {@code remember_until_ms}, is missing), or with
   *     the database's error if it cannot be read
   */
  Future<Void> verifySchema();

  /**
   * Runs {@code work} exactly once per event while its row lives: in one transaction, inserts the entry's row, runs
   * the work on the same connection, and commits. If a live row already holds the id or the business key, the
   * transaction rolls back without running the work and the stored payload hash decides:
   * {@link InboxVerdict#DUPLICATE} (the same hash, or one of the two has none) or {@link InboxVerdict#CONFLICT}.
   *
   * <p>Costs, when the event is new: one connection from the pool, {@code BEGIN}, one insert, the work's statements,
   * {@code COMMIT}. A duplicate costs a second statement (the read of the stored hash) and no write.
   *
   * @param entry the event's identity; its {@code rememberUntilMs} must be after now on the inbox's clock
   * @param work the caller's writes, on the connection of the transaction; it must not commit, roll back or close
   *     it. Its failure (or an exception it throws) rolls the transaction back
   * @param <T> the work's result type
   * @return the verdict; fails, with nothing committed, if the work fails (with its failure), or with the database's
   *     error if the connection, the insert or the commit fails (a commit whose answer was lost may have committed:
   *     running the same entry again then answers {@link InboxVerdict#DUPLICATE}), or with an
   *     {@link IllegalArgumentException} if {@code rememberUntilMs} is not after now
   */
  <T> Future<InboxResult<T>> execute(InboxEntry entry, Function<SqlConnection, Future<T>> work);

  /**
   * {@link #execute} with a dedup window in front, for a source other than the Kafka consumer (which does this
   * itself in {@code AtomicityMode.INBOX}): the event is claimed in the window first, so a copy the window remembers
   * is answered {@link InboxVerdict#DUPLICATE} without a database round trip; a new id goes to {@link #execute};
   * the claim is committed once the transaction committed (or the inbox answered a duplicate), and released if the
   * transaction failed or answered a conflict, so the window never remembers an id whose effect did not commit.
   * A crash between the transaction's commit and the claim's commit lets the next copy through the window once the
   * lease ends; the inbox's unique key then answers it as a duplicate.
   *
   * @param window the event-bus service's client; its window's {@code W} should be no longer than the rows' life
   * @param event the window's event (id, key, payload hash, as the entry's); its claim token is set here
   * @param entry the inbox entry
   * @param work the caller's writes, as for {@link #execute}
   * @param <T> the work's result type
   * @return the verdict; a window that answers {@link DedupVerdict#IN_FLIGHT} (another delivery holds the claim)
   *     fails with an {@link IllegalStateException} naming the id: retry later; other failures as {@link #execute}
   *     and as the client's {@code claim}
   */
  <T> Future<InboxResult<T>> process(DedupClient window, DedupEvent event, InboxEntry entry,
      Function<SqlConnection, Future<T>> work);

  /**
   * Reads one page of the live rows (remember-until after now) of one partition, in the order of
   * {@code (first_seen_ms, event_id)}: what a window new to the partition is rebuilt from. Page through them by
   * passing the last row of a page as {@code after} of the next.
   *
   * @param group the consumer group
   * @param topic the topic
   * @param partition the partition
   * @param after the last row of the previous page, or null for the first page
   * @param limit the most rows read, {@code >= 1}
   * @return the rows after {@code after}, at most {@code limit}; fewer means the last page; fails with an
   *     {@link IllegalArgumentException} if {@code limit < 1}
   */
  Future<List<InboxRow>> liveRows(String group, String topic, int partition, InboxRow after, int limit);

  /**
   * Deletes one bounded batch of expired rows: at most {@code purgeBatchSize} rows whose remember-until is at or
   * before now, oldest first, in one statement (its own transaction), found through the index on
   * {@code remember_until_ms}. Rows locked by a concurrent insert that replaces them are skipped.
   *
   * @return the number of rows deleted, {@code <= purgeBatchSize}; fewer means no more expired rows were found
   */
  Future<Integer> purgeExpired();

  /**
   * Starts the retention timer: every {@code purgeIntervalMs}, deletes expired rows batch after batch
   * ({@link #purgeExpired}), one statement at a time, until a batch comes back short. A failed run is logged at WARN
   * and tried again at the next tick. Idempotent.
   *
   * @return this
   */
  DedupInbox startRetention();

  /**
   * Stops the retention timer (a run under way finishes its statement). Does not close the pool.
   *
   * @return completes when stopped
   */
  Future<Void> close();
}
