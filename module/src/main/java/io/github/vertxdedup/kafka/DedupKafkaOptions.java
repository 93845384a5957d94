package io.github.vertxdedup.kafka;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.impl.options.OptionSchema;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Objects;

/**
 * Options of a {@link DedupKafkaConsumer}: the dedup settings of every topic-partition's window (a
 * {@link DedupOptions}, of which {@code address} is the prefix of the windows' event-bus addresses and
 * {@code partitions} and {@code routeByKey} are ignored: the Kafka partition is the dedup partition), the atomicity
 * mode, the retry policy and the poll loop's settings. A Vert.x data object: the default, copy and
 * {@link JsonObject} constructors, {@link #toJson()}, fluent setters that validate and throw
 * {@link IllegalArgumentException} naming the field and its limit. Not thread-safe; the consumer copies them.
 *
 * <p>JSON form: {@code {"dedup": {...DedupOptions...}, "mode": "EFFECT_FIRST", "maxAttempts": 5,
 * "backoffInitialMs": 100, "backoffMaxMs": 10000, "pollTimeoutMs": 100, "commitIntervalMs": 200,
 * "maxBufferedPerPartition": 4000, "maxUnansweredCommits": 8, "maxUnansweredOffsetCommits": 4,
 * "revocationTimeoutMs": 10000, "assignmentTimeoutMs": 60000, "lookBackMs": 0, "changelog": false, "instanceId": null, "eventTimeSource": "RECORD_TIMESTAMP", "uncoveredRecords": "ACCEPT"}}. It is read
 * strictly, as {@link DedupOptions}' is: an unknown key, a value of the wrong JSON type (a string for a number, a
 * fraction for an integer, a name that is not one of an enum's) and a value out of range are errors that name the
 * key and what it must be; a key whose value is JSON {@code null} keeps its default.
 */
@DataObject
public class DedupKafkaOptions {

  /** Default address prefix of the windows: {@code vertx-dedup.kafka}. */
  public static final String DEFAULT_ADDRESS = "vertx-dedup.kafka";
  /** Default mode: {@link AtomicityMode#EFFECT_FIRST} (no effect is lost). */
  public static final AtomicityMode DEFAULT_MODE = AtomicityMode.EFFECT_FIRST;
  /** Default handler attempts before the dead-letter handler: 5. */
  public static final int DEFAULT_MAX_ATTEMPTS = 5;
  /** Largest {@code maxAttempts}: 1,000. */
  public static final int MAX_ATTEMPTS_LIMIT = 1000;
  /** Default first backoff: 100 ms; it doubles per attempt up to {@code backoffMaxMs}. */
  public static final long DEFAULT_BACKOFF_INITIAL_MS = 100;
  /** Default largest backoff: 10 s. */
  public static final long DEFAULT_BACKOFF_MAX_MS = 10_000;
  /** Largest backoff or timeout accepted: 1 hour. */
  public static final long MAX_DELAY_MS = 3_600_000;
  /** Default {@code poll} timeout: 100 ms. */
  public static final long DEFAULT_POLL_TIMEOUT_MS = 100;
  /**
   * Default least time between two offset commits of the poll loop: 200 ms. Kafka's own auto-commit uses 5 s
   * ({@code auto.commit.interval.ms}); a shorter interval keeps the redeliveries after a crash few.
   */
  public static final long DEFAULT_COMMIT_INTERVAL_MS = 200;
  /**
   * Default records held per topic-partition before it is paused: 4,000, eight polls of Kafka's default
   * {@code max.poll.records} (500), or four of the benchmark's 1,000. A bound near one poll's records pauses and
   * resumes a partition after about every poll, which slows the consumer (docs/results/README.md, "Kafka consumer").
   * Records held cost memory: about their size times this per assigned partition.
   */
  public static final int DEFAULT_MAX_BUFFERED_PER_PARTITION = 4000;
  /** Largest {@code maxBufferedPerPartition}: 1,000,000. */
  public static final int MAX_BUFFERED_LIMIT = 1_000_000;
  /**
   * Default bound on the effect-first commits a topic-partition may leave unanswered while later handlers run: 8.
   * A kill repeats at most this many records per partition, plus the one whose handler had just finished.
   */
  public static final int DEFAULT_MAX_UNANSWERED_COMMITS = 8;
  /**
   * Default bound on the record-first offset commits a topic-partition may wait for at once: 4. Each covers a decided
   * run of up to {@code dedup.maxBatch} records, so a kill loses at most this many runs per partition. Waiting for one
   * commit at a time made a partition's throughput one run per commit round trip (docs/benchmarks-kafka.md).
   */
  public static final int DEFAULT_MAX_UNANSWERED_OFFSET_COMMITS = 4;
  /** Default bound on the drain of a revoked partition: 10 s (keep it below {@code max.poll.interval.ms}). */
  public static final long DEFAULT_REVOCATION_TIMEOUT_MS = 10_000;
  /** Default bound on starting (recovering) the windows of newly assigned partitions: 60 s. */
  public static final long DEFAULT_ASSIGNMENT_TIMEOUT_MS = 60_000;
  /** Default {@code lookBackMs}: 0, a rebuild reads the records of the last {@code W} only. */
  public static final long DEFAULT_LOOK_BACK_MS = 0;
  /** Largest {@code lookBackMs}: 7 days. */
  public static final long MAX_LOOK_BACK_MS = 7 * 24 * 3_600_000L;
  /** Default {@code changelog}: off, a partition's window moves through the source topic only. */
  public static final boolean DEFAULT_CHANGELOG = false;
  /** Default event time sent to the window: the record's Kafka timestamp. */
  public static final EventTimeSource DEFAULT_EVENT_TIME_SOURCE = EventTimeSource.RECORD_TIMESTAMP;
  /**
   * Default treatment of records the window does not cover: {@link UncoveredRecordPolicy#ACCEPT}, handled and
   * counted (a first start's backlog must not be dead-lettered).
   */
  public static final UncoveredRecordPolicy DEFAULT_UNCOVERED_RECORDS = UncoveredRecordPolicy.ACCEPT;

  /** The JSON form: every key, its JSON type and its setter, in the order {@link #toJson()} writes them. */
  private static final OptionSchema<DedupKafkaOptions> JSON =
      new OptionSchema<DedupKafkaOptions>("dedup kafka option")
          .nested("dedup", (o, json) -> o.setDedup(dedupFromJson(json)))
          .enumValue("mode", AtomicityMode.class, DedupKafkaOptions::setMode)
          .intValue("maxAttempts", DedupKafkaOptions::setMaxAttempts)
          .longValue("backoffInitialMs", DedupKafkaOptions::setBackoffInitialMs)
          .longValue("backoffMaxMs", DedupKafkaOptions::setBackoffMaxMs)
          .longValue("pollTimeoutMs", DedupKafkaOptions::setPollTimeoutMs)
          .longValue("commitIntervalMs", DedupKafkaOptions::setCommitIntervalMs)
          .intValue("maxBufferedPerPartition", DedupKafkaOptions::setMaxBufferedPerPartition)
          .intValue("maxUnansweredCommits", DedupKafkaOptions::setMaxUnansweredCommits)
          .intValue("maxUnansweredOffsetCommits", DedupKafkaOptions::setMaxUnansweredOffsetCommits)
          .longValue("revocationTimeoutMs", DedupKafkaOptions::setRevocationTimeoutMs)
          .longValue("assignmentTimeoutMs", DedupKafkaOptions::setAssignmentTimeoutMs)
          .longValue("lookBackMs", DedupKafkaOptions::setLookBackMs)
          .bool("changelog", DedupKafkaOptions::setChangelog)
          .string("instanceId", DedupKafkaOptions::setInstanceId)
          .enumValue("eventTimeSource", EventTimeSource.class, DedupKafkaOptions::setEventTimeSource)
          .enumValue("uncoveredRecords", UncoveredRecordPolicy.class, DedupKafkaOptions::setUncoveredRecords);

  private DedupOptions dedup;
  private AtomicityMode mode = DEFAULT_MODE;
  private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
  private long backoffInitialMs = DEFAULT_BACKOFF_INITIAL_MS;
  private long backoffMaxMs = DEFAULT_BACKOFF_MAX_MS;
  private long pollTimeoutMs = DEFAULT_POLL_TIMEOUT_MS;
  private long commitIntervalMs = DEFAULT_COMMIT_INTERVAL_MS;
  private int maxBufferedPerPartition = DEFAULT_MAX_BUFFERED_PER_PARTITION;
  private int maxUnansweredCommits = DEFAULT_MAX_UNANSWERED_COMMITS;
  private int maxUnansweredOffsetCommits = DEFAULT_MAX_UNANSWERED_OFFSET_COMMITS;
  private long revocationTimeoutMs = DEFAULT_REVOCATION_TIMEOUT_MS;
  private long assignmentTimeoutMs = DEFAULT_ASSIGNMENT_TIMEOUT_MS;
  private long lookBackMs = DEFAULT_LOOK_BACK_MS;
  private boolean changelog = DEFAULT_CHANGELOG;
  private String instanceId;
  private EventTimeSource eventTimeSource = DEFAULT_EVENT_TIME_SOURCE;
  private UncoveredRecordPolicy uncoveredRecords = DEFAULT_UNCOVERED_RECORDS;

  /** Creates options with the defaults; {@link #setDedup} (at least its window) is required. */
  public DedupKafkaOptions() {
    this.dedup = new DedupOptions().setAddress(DEFAULT_ADDRESS);
  }

  /**
   * Copies options.
   *
   * @param other the options to copy
   */
  public DedupKafkaOptions(DedupKafkaOptions other) {
    this.dedup = new DedupOptions(other.dedup);
    this.mode = other.mode;
    this.maxAttempts = other.maxAttempts;
    this.backoffInitialMs = other.backoffInitialMs;
    this.backoffMaxMs = other.backoffMaxMs;
    this.pollTimeoutMs = other.pollTimeoutMs;
    this.commitIntervalMs = other.commitIntervalMs;
    this.maxBufferedPerPartition = other.maxBufferedPerPartition;
    this.maxUnansweredCommits = other.maxUnansweredCommits;
    this.maxUnansweredOffsetCommits = other.maxUnansweredOffsetCommits;
    this.revocationTimeoutMs = other.revocationTimeoutMs;
    this.assignmentTimeoutMs = other.assignmentTimeoutMs;
    this.lookBackMs = other.lookBackMs;
    this.changelog = other.changelog;
    this.instanceId = other.instanceId;
    this.eventTimeSource = other.eventTimeSource;
    this.uncoveredRecords = other.uncoveredRecords;
  }

  /**
   * Reads the JSON form (what {@link #toJson()} writes); absent keys, and keys whose value is JSON {@code null}, keep
   * their defaults. The object under {@code "dedup"} is read as {@link DedupOptions#DedupOptions(JsonObject)} reads
   * it, except that its {@code address} defaults to {@link #DEFAULT_ADDRESS}.
   *
   * @param json the options
   * @throws IllegalArgumentException on an unknown key (the message lists the known ones), on a value of the wrong
   *     JSON type (naming the key and the type it must have, e.g. {@code dedup kafka option 'maxAttempts' must be a
   *     JSON integer but was the string "5"}), or on a value out of range (naming the key and its limit); inside
   *     {@code "dedup"}, as {@link DedupOptions#DedupOptions(JsonObject)}, the message prefixed with
   *     {@code in 'dedup': }
   * @throws NullPointerException if {@code json} is null
   */
  public DedupKafkaOptions(JsonObject json) {
    this();
    JSON.read(json, this);
  }

  /**
   * Writes the JSON form.
   *
   * @return a new JSON object
   */
  public JsonObject toJson() {
    JsonObject json = new JsonObject()
        .put("dedup", dedup.toJson())
        .put("mode", mode.name())
        .put("maxAttempts", maxAttempts)
        .put("backoffInitialMs", backoffInitialMs)
        .put("backoffMaxMs", backoffMaxMs)
        .put("pollTimeoutMs", pollTimeoutMs)
        .put("commitIntervalMs", commitIntervalMs)
        .put("maxBufferedPerPartition", maxBufferedPerPartition)
        .put("maxUnansweredCommits", maxUnansweredCommits)
        .put("maxUnansweredOffsetCommits", maxUnansweredOffsetCommits)
        .put("revocationTimeoutMs", revocationTimeoutMs)
        .put("assignmentTimeoutMs", assignmentTimeoutMs)
        .put("lookBackMs", lookBackMs)
        .put("changelog", changelog)
        .put("eventTimeSource", eventTimeSource.name())
        .put("uncoveredRecords", uncoveredRecords.name());
    if (instanceId != null) {
      json.put("instanceId", instanceId);
    }
    return json;
  }

  /**
   * Checks the options as a whole: the dedup options are valid (a window is set),
   * {@code backoffInitialMs <= backoffMaxMs}, and {@code uncoveredRecords} {@code DEAD_LETTER} comes with an event
   * time ({@code eventTimeSource} not {@code NONE}: without one the window covers every record, and nothing
   * would ever be dead-lettered as uncovered), and {@code changelog} is off in mode {@link AtomicityMode#INBOX} (there
   * the inbox table is the durable memory: a newly assigned partition's window is rebuilt from its rows, so a
   * changelog would be written and never read).
   *
   * @return this
   * @throws IllegalArgumentException naming the field and the limit
   */
  public DedupKafkaOptions validate() {
    dedup.validate();
    if (backoffInitialMs > backoffMaxMs) {
      throw new IllegalArgumentException("backoffInitialMs must be <= backoffMaxMs (" + backoffMaxMs + ") but was "
          + backoffInitialMs);
    }
    if (uncoveredRecords == UncoveredRecordPolicy.DEAD_LETTER && eventTimeSource == EventTimeSource.NONE) {
      throw new IllegalArgumentException("uncoveredRecords DEAD_LETTER needs an event time, but eventTimeSource was"
          + " NONE (the window would cover every record)");
    }
    if (changelog && mode == AtomicityMode.INBOX) {
      throw new IllegalArgumentException("changelog must be false in mode INBOX: the inbox table is the durable"
          + " memory, and a partition's window is rebuilt from its rows, never from the changelog");
    }
    return this;
  }

  /** @return a copy of the dedup settings of each topic-partition's window */
  public DedupOptions getDedup() {
    return new DedupOptions(dedup);
  }

  /**
   * Sets the dedup settings of each topic-partition's window: {@code windowMs} (required), {@code bucketMs},
   * {@code maxIdsPerPartition} (per topic-partition), {@code capacityPolicy}, {@code payloadHashes}, {@code leaseMs}
   * (the claim lease in {@link AtomicityMode#EFFECT_FIRST}: more than twice the slowest handler call; each handler
   * starts with at least half a lease left on its claim, whatever {@code maxBatch}), {@code maxBatch} (the largest
   * decision batch), {@code maxIdBytes}; {@code address} is the prefix of the windows' addresses; {@code partitions}
   * and {@code routeByKey} are ignored (the Kafka partition is the routing: each window deduplicates ids, and business
   * keys if the identity has them, of its own topic-partition). With {@code journalDir} (and {@code journalSync}) each
   * window journals its accepted ids and the Kafka offset commits to
   * {@code <journalDir>/<group.id>/<topic>-<partition>} and is rebuilt from it when the partition is assigned again, in
   * this process or after a restart; the journal's directory lock fences owners in different processes. Without it
   * windows live in the Vert.x instance only. {@code uncoveredPolicy} is ignored too: the consumer's windows always
   * accept a record they does not cover (recording its id) and mark it uncovered, and {@link #setUncoveredRecords}
   * chooses what the consumer does with it.
   *
   * @param dedup the settings (copied)
   * @return this
   * @throws NullPointerException if null
   */
  public DedupKafkaOptions setDedup(DedupOptions dedup) {
    this.dedup = new DedupOptions(Objects.requireNonNull(dedup, "dedup"));
    return this;
  }

  /** @return the atomicity mode */
  public AtomicityMode getMode() {
    return mode;
  }

  /**
   * @param mode the atomicity mode; {@link AtomicityMode#INBOX} also needs {@link DedupKafkaConsumer#inbox} on the
   *     consumer
   * @return this
   * @throws IllegalArgumentException if null
   */
  public DedupKafkaOptions setMode(AtomicityMode mode) {
    if (mode == null) {
      throw new IllegalArgumentException("mode must be RECORD_FIRST, EFFECT_FIRST or INBOX but was null");
    }
    this.mode = mode;
    return this;
  }

  /** @return handler attempts per record before the dead-letter handler */
  public int getMaxAttempts() {
    return maxAttempts;
  }

  /**
   * @param maxAttempts 1..{@value #MAX_ATTEMPTS_LIMIT}; 1 sends a failed record to the dead-letter handler at once
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupKafkaOptions setMaxAttempts(int maxAttempts) {
    if (maxAttempts < 1 || maxAttempts > MAX_ATTEMPTS_LIMIT) {
      throw new IllegalArgumentException("maxAttempts must be in 1.." + MAX_ATTEMPTS_LIMIT + " but was " + maxAttempts);
    }
    this.maxAttempts = maxAttempts;
    return this;
  }

  /** @return the first backoff in milliseconds */
  public long getBackoffInitialMs() {
    return backoffInitialMs;
  }

  /**
   * Sets the first backoff after a handler failure or a 503; it doubles per attempt up to {@code backoffMaxMs}. A
   * wrapped consumer ({@link DedupKafkaConsumer#wrap}) also pauses or resumes a partition again this long after the
   * Vert.x consumer failed to.
   *
   * @param backoffInitialMs 1..{@value #MAX_DELAY_MS} milliseconds
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupKafkaOptions setBackoffInitialMs(long backoffInitialMs) {
    this.backoffInitialMs = delay("backoffInitialMs", backoffInitialMs);
    return this;
  }

  /**
   * @param backoff see {@link #setBackoffInitialMs}
   * @return this
   */
  public DedupKafkaOptions setBackoffInitial(Duration backoff) {
    return setBackoffInitialMs(backoff.toMillis());
  }

  /**
   * @return the largest backoff in milliseconds; also the interval at which a partition whose window could not be
   *     rebuilt from its source topic is rebuilt again
   */
  public long getBackoffMaxMs() {
    return backoffMaxMs;
  }

  /**
   * @param backoffMaxMs 1..{@value #MAX_DELAY_MS} milliseconds, at least {@code backoffInitialMs} (checked by
   *     {@link #validate()})
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupKafkaOptions setBackoffMaxMs(long backoffMaxMs) {
    this.backoffMaxMs = delay("backoffMaxMs", backoffMaxMs);
    return this;
  }

  /**
   * @param backoff see {@link #setBackoffMaxMs}
   * @return this
   */
  public DedupKafkaOptions setBackoffMax(Duration backoff) {
    return setBackoffMaxMs(backoff.toMillis());
  }

  /** @return the poll timeout in milliseconds */
  public long getPollTimeoutMs() {
    return pollTimeoutMs;
  }

  /**
   * Sets the timeout of each {@code poll} while some assigned partition is not paused. It bounds how late the loop
   * notices a rebalance, a close or a due offset commit while no record arrives. A wrapped Vert.x consumer
   * ({@link DedupKafkaConsumer#wrap}) gets it as its {@code pollTimeout}: its pauses, resumes and commits wait for the
   * {@code poll} in progress.
   *
   * @param pollTimeoutMs 1..{@value #MAX_DELAY_MS} milliseconds
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupKafkaOptions setPollTimeoutMs(long pollTimeoutMs) {
    this.pollTimeoutMs = delay("pollTimeoutMs", pollTimeoutMs);
    return this;
  }

  /** @return the least time between two offset commits of the poll loop, in milliseconds */
  public long getCommitIntervalMs() {
    return commitIntervalMs;
  }

  /**
   * Sets the least time between two offset commits of the poll loop. Between revocations the loop commits the
   * offsets that became committable since the last commit with {@code commitAsync}, at most once per interval; on
   * revocation and on close it commits with {@code commitSync} (with {@link #setChangelog changelog} on, each commit is
   * one transaction with the changelog entries). A commit never passes a record that is not done with,
   * so the interval only bounds the redeliveries a crash hands back to Kafka: records already done with, which the
   * window drops as duplicates. A wrapped Vert.x consumer ({@link DedupKafkaConsumer#wrap}) commits through the
   * consumer's {@code commit} at most once per interval, and on close, but not on revocation: the interval also
   * bounds what the next owner of a revoked partition reads again.
   *
   * @param commitIntervalMs 1..{@value #MAX_DELAY_MS} milliseconds
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupKafkaOptions setCommitIntervalMs(long commitIntervalMs) {
    this.commitIntervalMs = delay("commitIntervalMs", commitIntervalMs);
    return this;
  }

  /**
   * Sets the least time between two offset commits of the poll loop.
   *
   * @param interval see {@link #setCommitIntervalMs}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupKafkaOptions setCommitInterval(Duration interval) {
    return setCommitIntervalMs(interval.toMillis());
  }

  /** @return the records held per topic-partition before it is paused */
  public int getMaxBufferedPerPartition() {
    return maxBufferedPerPartition;
  }

  /**
   * Sets how many fetched records a topic-partition may hold before the poll loop pauses it. It resumes once no more
   * than half of them are left not yet committable (the owner signals the poll loop then, so a paused partition does
   * not wait out a poll timeout).
   *
   * @param maxBufferedPerPartition 1..{@value #MAX_BUFFERED_LIMIT}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupKafkaOptions setMaxBufferedPerPartition(int maxBufferedPerPartition) {
    if (maxBufferedPerPartition < 1 || maxBufferedPerPartition > MAX_BUFFERED_LIMIT) {
      throw new IllegalArgumentException("maxBufferedPerPartition must be in 1.." + MAX_BUFFERED_LIMIT + " but was "
          + maxBufferedPerPartition);
    }
    this.maxBufferedPerPartition = maxBufferedPerPartition;
    return this;
  }

  /** @return the effect-first commits a topic-partition may leave unanswered while later handlers run */
  public int getMaxUnansweredCommits() {
    return maxUnansweredCommits;
  }

  /**
   * Sets how many effect-first commits a topic-partition may leave unanswered while the handlers of later records run
   * (the commits are pipelined, so a handler need not wait for the reply to the previous commit). A record whose commit
   * is unanswered has had its effect but may not be remembered yet, so a kill repeats at most
   * {@code maxUnansweredCommits + 1} records per partition (the +1: a handler that has just finished, its commit not
   * yet sent). Without a bound, a window that answers slowly (a cold JVM, a busy event loop) would let a partition run
   * dozens of handlers ahead of its commits, and a kill would then repeat all of them (docs/kafka.md, "Across a kill
   * -9"). 1 gives the tightest bound (two records per partition per kill) and the least overlap. Record-first mode
   * has no commits and ignores it.
   *
   * @param maxUnansweredCommits 1..{@value #MAX_BUFFERED_LIMIT}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupKafkaOptions setMaxUnansweredCommits(int maxUnansweredCommits) {
    if (maxUnansweredCommits < 1 || maxUnansweredCommits > MAX_BUFFERED_LIMIT) {
      throw new IllegalArgumentException("maxUnansweredCommits must be in 1.." + MAX_BUFFERED_LIMIT + " but was "
          + maxUnansweredCommits);
    }
    this.maxUnansweredCommits = maxUnansweredCommits;
    return this;
  }

  /** @return the record-first offset commits a topic-partition may wait for at once */
  public int getMaxUnansweredOffsetCommits() {
    return maxUnansweredOffsetCommits;
  }

  /**
   * Sets how many offset commits a record-first topic-partition may wait for at once. Record-first runs a record's
   * handler only once Kafka has acknowledged a commit of an offset past it; each commit covers the run of up to
   * {@code dedup.maxBatch} records decided before it. While one commit is on its way the partition decides the next
   * run and asks for its commit too, up to this many, so a commit's round trip does not stop the partition. The
   * records decided and not yet handled are what a kill loses: at most {@code maxUnansweredOffsetCommits x maxBatch}
   * records per partition (docs/kafka.md, "Across a kill -9"). 1 waits for each run's commit before deciding the next:
   * the tightest bound (one run), and a partition's throughput at most one run per commit round trip. Effect-first and
   * INBOX modes ignore it.
   *
   * @param maxUnansweredOffsetCommits 1..{@value #MAX_BUFFERED_LIMIT}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupKafkaOptions setMaxUnansweredOffsetCommits(int maxUnansweredOffsetCommits) {
    if (maxUnansweredOffsetCommits < 1 || maxUnansweredOffsetCommits > MAX_BUFFERED_LIMIT) {
      throw new IllegalArgumentException("maxUnansweredOffsetCommits must be in 1.." + MAX_BUFFERED_LIMIT
          + " but was " + maxUnansweredOffsetCommits);
    }
    this.maxUnansweredOffsetCommits = maxUnansweredOffsetCommits;
    return this;
  }

  /** @return the bound on the drain of a revoked partition, in milliseconds */
  public long getRevocationTimeoutMs() {
    return revocationTimeoutMs;
  }

  /**
   * Sets how long a revoked partition may take to finish the records already decided (the handler running, the
   * accepted ones in record-first mode); past it, the owner stops and what is unfinished is left to the next owner
   * (effect-first: the claims lapse and the records are redelivered; record-first: those effects are lost). Keep it
   * well below {@code max.poll.interval.ms}: the rebalance waits for it. A wrapped Vert.x consumer
   * ({@link DedupKafkaConsumer#wrap}) drains after the rebalance, and the next owner waits for the window meanwhile:
   * keep it well below {@code assignmentTimeoutMs} there.
   *
   * @param revocationTimeoutMs 1..{@value #MAX_DELAY_MS} milliseconds
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupKafkaOptions setRevocationTimeoutMs(long revocationTimeoutMs) {
    this.revocationTimeoutMs = delay("revocationTimeoutMs", revocationTimeoutMs);
    return this;
  }

  /** @return the bound on starting the windows of newly assigned partitions, in milliseconds */
  public long getAssignmentTimeoutMs() {
    return assignmentTimeoutMs;
  }

  /**
   * Sets how long an assignment may wait for its windows to start (rebuilt from the journal, or handed over by
   * the previous owner in this JVM). Keep it below {@code max.poll.interval.ms}.
   *
   * @param assignmentTimeoutMs 1..{@value #MAX_DELAY_MS} milliseconds
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupKafkaOptions setAssignmentTimeoutMs(long assignmentTimeoutMs) {
    this.assignmentTimeoutMs = delay("assignmentTimeoutMs", assignmentTimeoutMs);
    return this;
  }

  /** @return how much further back than the window a rebuild from the source topic reads, in milliseconds */
  public long getLookBackMs() {
    return lookBackMs;
  }

  /**
   * Sets how much further back than the window {@code W} a rebuild from the source topic reads, and how much longer
   * than {@code W} after its record timestamp an id read there is remembered (at most {@code W} from now). When a
   * partition is assigned, what its local window does not cover of the records before the group's committed offset
   * is read from the topic, from the first record stamped at or after {@code now - W - lookBackMs}, and each id is
   * remembered until {@code min(timestamp + lookBackMs + W, now + W)}: the record timestamp stands in for when the
   * previous owner accepted it. A consumer that runs {@code L} behind its topic accepted a record up to {@code L}
   * after its timestamp, so with {@code lookBackMs} 0 the rebuilt window forgets an id up to {@code L} earlier than
   * the previous owner would have; set it to the lag the group may have (it costs reading that much more of the
   * topic on every assignment, and may remember an id up to {@code lookBackMs - L} longer). Keep the topic's
   * retention at least {@code W + lookBackMs}.
   *
   * @param lookBackMs 0..{@value #MAX_LOOK_BACK_MS} milliseconds
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupKafkaOptions setLookBackMs(long lookBackMs) {
    if (lookBackMs < 0 || lookBackMs > MAX_LOOK_BACK_MS) {
      throw new IllegalArgumentException("lookBackMs must be in 0.." + MAX_LOOK_BACK_MS + " ms but was "
          + lookBackMs);
    }
    this.lookBackMs = lookBackMs;
    return this;
  }

  /** @return whether accepted ids are written to a changelog topic, and a newly assigned partition reads it */
  public boolean isChangelog() {
    return changelog;
  }

  /**
   * Switches the changelog topic on or off (default off). With it, each offset commit of the consumer is one Kafka
   * transaction that also writes, to the topic {@code <group.id>-<topic>-dedup-changelog} (created at subscribe if
   * missing, with the source topic's partition count, {@code cleanup.policy=delete} and {@code retention.ms} of
   * {@code W} plus one hour), a small entry per id accepted in the records the commit covers: the id, its key and
   * payload hash, and until when it is remembered. A partition assigned to a machine whose window store does not
   * cover it then reads those entries instead of the source topic's records, and restores each id until the instant
   * its previous owner would have forgotten it; a rewind of the group's offsets finds the ids of the rewound records
   * there too. It costs a transactional producer per consumer and, per commit, a transaction with the entries of
   * the ids accepted since the last one (docs/kafka.md, "Changelog topic"). Subscribing fails if the topic exists
   * with another partition count than its source topic. Not with {@link AtomicityMode#INBOX}, whose windows are
   * rebuilt from the inbox table: {@link #validate()} refuses the pair.
   *
   * @param changelog true to write and read the changelog topic
   * @return this
   */
  public DedupKafkaOptions setChangelog(boolean changelog) {
    this.changelog = changelog;
    return this;
  }

  /** @return the consumer's instance id, or null for {@code group.instance.id} or else a random one */
  public String getInstanceId() {
    return instanceId;
  }

  /**
   * Sets the id this consumer's claims and window ownership carry; a restarted consumer with the same id takes
   * over what it held: when it is assigned a partition, the claims its previous run left open there (killed between
   * a claim and its commit or release) are released at once instead of after their leases, so their records are
   * handled again without waiting. Defaults to the Kafka config's {@code group.instance.id}, else a random UUID (a
   * consumer with a random id never finds claims of its own: its predecessors' claims wait out their leases).
   *
   * <p>Two live consumers of a group must never share an id: one would release the other's claims, and a record
   * could be handled by both at once. Static membership enforces that for {@code group.instance.id} (the broker
   * fences the older member).
   *
   * @param instanceId a non-blank id of at most 255 bytes in UTF-8 (the journal's claimer column), or null for the
   *     default
   * @return this
   * @throws IllegalArgumentException if blank or longer than 255 UTF-8 bytes
   */
  public DedupKafkaOptions setInstanceId(String instanceId) {
    if (instanceId != null && instanceId.isBlank()) {
      throw new IllegalArgumentException("instanceId must be null or non-blank but was '" + instanceId + "'");
    }
    if (instanceId != null && instanceId.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 255) {
      throw new IllegalArgumentException("instanceId must be at most 255 bytes in UTF-8 (it is journaled as the"
          + " claimer of each claim) but was " + instanceId.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
    }
    this.instanceId = instanceId;
    return this;
  }

  /** @return what the consumer sends its window as a record's event time */
  public EventTimeSource getEventTimeSource() {
    return eventTimeSource;
  }

  /**
   * Sets what the consumer sends its window as a record's event time: the record's Kafka timestamp (default), or
   * nothing. With an event time the window tells a record older than it covers from a new one, and
   * {@link #setUncoveredRecords} decides what happens to it; without one every record whose id is not remembered is
   * a first sighting.
   *
   * @param eventTimeSource the source
   * @return this
   * @throws IllegalArgumentException if null
   */
  public DedupKafkaOptions setEventTimeSource(EventTimeSource eventTimeSource) {
    if (eventTimeSource == null) {
      throw new IllegalArgumentException("eventTimeSource must be RECORD_TIMESTAMP or NONE but was null");
    }
    this.eventTimeSource = eventTimeSource;
    return this;
  }

  /** @return what the consumer does with a record its window does not cover */
  public UncoveredRecordPolicy getUncoveredRecords() {
    return uncoveredRecords;
  }

  /**
   * Sets what the consumer does with a record whose id its window does not remember and whose event time is older
   * than the window covers (older than now minus {@code W}, or than the moment the window's memory began):
   * {@link UncoveredRecordPolicy#ACCEPT} (default) runs the handler and counts the record in
   * {@code dedup.kafka.uncovered.accepts}; {@link UncoveredRecordPolicy#DEAD_LETTER} sends it to the dead-letter
   * handler with {@link DeadLetter.Reason#UNCOVERED}. Needs an event time ({@link #setEventTimeSource}); a
   * {@code DEAD_LETTER} without one is refused by {@link #validate()}.
   *
   * @param uncoveredRecords the policy
   * @return this
   * @throws IllegalArgumentException if null
   */
  public DedupKafkaOptions setUncoveredRecords(UncoveredRecordPolicy uncoveredRecords) {
    if (uncoveredRecords == null) {
      throw new IllegalArgumentException("uncoveredRecords must be ACCEPT or DEAD_LETTER but was null");
    }
    this.uncoveredRecords = uncoveredRecords;
    return this;
  }

  /** The dedup options of the JSON form: the window's address defaults to {@link #DEFAULT_ADDRESS}, not "dedup". */
  private static DedupOptions dedupFromJson(JsonObject json) {
    DedupOptions dedup = new DedupOptions(json);
    if (json.getValue("address") == null) {
      dedup.setAddress(DEFAULT_ADDRESS);
    }
    return dedup;
  }

  private static long delay(String name, long ms) {
    if (ms < 1 || ms > MAX_DELAY_MS) {
      throw new IllegalArgumentException(name + " must be in 1.." + MAX_DELAY_MS + " ms but was " + ms);
    }
    return ms;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof DedupKafkaOptions other && toJson().equals(other.toJson());
  }

  @Override
  public int hashCode() {
    return toJson().hashCode();
  }

  @Override
  public String toString() {
    return "DedupKafkaOptions" + toJson().encode();
  }
}
