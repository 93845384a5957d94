package io.github.vertxdedup.inbox;

import io.github.vertxdedup.impl.options.OptionSchema;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.regex.Pattern;

/**
 * Options of a {@link DedupInbox}: the inbox table and its retention. A Vert.x data object: the default, copy and
 * {@link JsonObject} constructors, {@link #toJson()}, fluent setters that validate and throw
 * {@link IllegalArgumentException} naming the field and its limit. Not thread-safe; the inbox copies them.
 *
 * <p>JSON form: {@code {"table": "dedup_inbox", "purgeBatchSize": 1000, "purgeIntervalMs": 60000}}, read strictly
 * (an unknown key, a value of the wrong JSON type or out of range is an error naming the key); a key whose value is
 * JSON {@code null} keeps its default.
 */
@DataObject
public class DedupInboxOptions {

  /** Default table: {@code dedup_inbox}, in the connection's current schema. */
  public static final String DEFAULT_TABLE = "dedup_inbox";
  /** Default rows deleted per retention statement: 1,000. */
  public static final int DEFAULT_PURGE_BATCH_SIZE = 1000;
  /** Largest {@code purgeBatchSize}: 100,000 (a larger delete holds its locks and its WAL burst too long). */
  public static final int MAX_PURGE_BATCH_SIZE = 100_000;
  /** Default time between two retention runs: 60 s. */
  public static final long DEFAULT_PURGE_INTERVAL_MS = 60_000;
  /** Largest {@code purgeIntervalMs}: 1 day. */
  public static final long MAX_PURGE_INTERVAL_MS = 86_400_000L;

  /** A PostgreSQL identifier we accept without quoting, optionally schema-qualified. */
  private static final Pattern TABLE_NAME = Pattern.compile("([a-z_][a-z0-9_]{0,62}\\.)?[a-z_][a-z0-9_]{0,53}");

  private static final OptionSchema<DedupInboxOptions> JSON = new OptionSchema<DedupInboxOptions>("dedup inbox option")
      .string("table", DedupInboxOptions::setTable)
      .intValue("purgeBatchSize", DedupInboxOptions::setPurgeBatchSize)
      .longValue("purgeIntervalMs", DedupInboxOptions::setPurgeIntervalMs);

  private String table = DEFAULT_TABLE;
  private int purgeBatchSize = DEFAULT_PURGE_BATCH_SIZE;
  private long purgeIntervalMs = DEFAULT_PURGE_INTERVAL_MS;

  /** Creates options with the defaults. */
  public DedupInboxOptions() {
  }

  /**
   * Copies options.
   *
   * @param other the options to copy
   */
  public DedupInboxOptions(DedupInboxOptions other) {
    this.table = other.table;
    this.purgeBatchSize = other.purgeBatchSize;
    this.purgeIntervalMs = other.purgeIntervalMs;
  }

  /**
   * Reads the JSON form (what {@link #toJson()} writes).
   *
   * @param json the options
   * @throws IllegalArgumentException on an unknown key, a value of the wrong JSON type or out of range (the message
   *     names the key)
   */
  public DedupInboxOptions(JsonObject json) {
    this();
    JSON.read(json, this);
  }

  /** @return the JSON form, a new object */
  public JsonObject toJson() {
    return new JsonObject().put("table", table).put("purgeBatchSize", purgeBatchSize)
        .put("purgeIntervalMs", purgeIntervalMs);
  }

  /** @return the inbox table's name, optionally {@code schema.table} */
  public String getTable() {
    return table;
  }

  /**
   * Sets the inbox table. Its indexes are named after it ({@code <table>_business_key},
   * {@code <table>_remember_until}).
   *
   * @param table a lower-case PostgreSQL identifier ({@code [a-z_][a-z0-9_]*}, at most 54 characters so that the
   *     index names fit in 63), optionally qualified by a schema ({@code schema.table})
   * @return this
   * @throws IllegalArgumentException if it is not such a name
   */
  public DedupInboxOptions setTable(String table) {
    if (table == null || !TABLE_NAME.matcher(table).matches()) {
      throw new IllegalArgumentException("table must be a lower-case identifier [a-z_][a-z0-9_]* of at most 54"
          + " characters, optionally schema-qualified, but was " + OptionSchema.describe(table));
    }
    this.table = table;
    return this;
  }

  /** @return the most rows one retention statement deletes */
  public int getPurgeBatchSize() {
    return purgeBatchSize;
  }

  /**
   * Sets the most rows one retention statement deletes: expired rows go in batches of at most this many, each its
   * own statement and commit, so that retention never holds many locks or writes a large burst of WAL at once.
   *
   * @param purgeBatchSize 1..{@value #MAX_PURGE_BATCH_SIZE}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupInboxOptions setPurgeBatchSize(int purgeBatchSize) {
    if (purgeBatchSize < 1 || purgeBatchSize > MAX_PURGE_BATCH_SIZE) {
      throw new IllegalArgumentException("purgeBatchSize must be in 1.." + MAX_PURGE_BATCH_SIZE + " but was "
          + purgeBatchSize);
    }
    this.purgeBatchSize = purgeBatchSize;
    return this;
  }

  /** @return the time between two retention runs of {@link DedupInbox#startRetention()}, in milliseconds */
  public long getPurgeIntervalMs() {
    return purgeIntervalMs;
  }

  /**
   * Sets the time between two retention runs of {@link DedupInbox#startRetention()}.
   *
   * @param purgeIntervalMs 1..{@value #MAX_PURGE_INTERVAL_MS} milliseconds
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupInboxOptions setPurgeIntervalMs(long purgeIntervalMs) {
    if (purgeIntervalMs < 1 || purgeIntervalMs > MAX_PURGE_INTERVAL_MS) {
      throw new IllegalArgumentException("purgeIntervalMs must be in 1.." + MAX_PURGE_INTERVAL_MS + " ms but was "
          + purgeIntervalMs);
    }
    this.purgeIntervalMs = purgeIntervalMs;
    return this;
  }

  /**
   * @param interval see {@link #setPurgeIntervalMs}
   * @return this
   */
  public DedupInboxOptions setPurgeInterval(Duration interval) {
    return setPurgeIntervalMs(interval.toMillis());
  }
}
