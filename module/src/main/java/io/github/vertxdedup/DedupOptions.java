package io.github.vertxdedup;

import io.github.vertxdedup.impl.options.OptionSchema;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.time.Durations;
import io.github.vertxdedup.window.CapacityPolicy;
import io.github.vertxdedup.window.DedupWindow;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Objects;

/**
 * Configuration of a {@link DedupVerticle}: the Java form of its JSON deployment config. A Vert.x data object: the
 * default, copy and {@link JsonObject} constructors, {@link #toJson()}, fluent setters; {@link #toJson()} and
 * {@link #DedupOptions(JsonObject)} round-trip.
 *
 * <p>Every setter validates its own value at once and names it in the {@link IllegalArgumentException}; rules that
 * relate two values (a bucket must divide the window, the window is required) are checked by {@link #validate()},
 * which the verticle calls before it deploys anything. The JSON constructor is strict, so that a typo in a config
 * does not silently fall back to a default: an unknown key, a value of the wrong JSON type (a string for a number, a
 * fraction for an integer, a name that is not one of an enum's) and a value out of range are errors that name the
 * key and what it must be. A key whose value is JSON {@code null} keeps its default.
 *
 * <p>JSON keys (all optional except {@code windowMs}): {@code address}, {@code partitions}, {@code routeByKey},
 * {@code windowMs}, {@code bucketMs}, {@code maxIdsPerPartition}, {@code expectedIdsPerPartition},
 * {@code capacityPolicy} ({@code "REJECT"} | {@code "EVICT_OLDEST"}), {@code payloadHashes}, {@code uncoveredPolicy}
 * ({@code "UNKNOWN"} | {@code "ACCEPT"}), {@code maxIdBytes}, {@code maxBatch}, {@code leaseMs}, {@code maxPending},
 * {@code requestTimeoutMs}, {@code journalDir}, {@code journalSync} ({@code "NONE"} | {@code "ASYNC"} | {@code "SYNC"}),
 * {@code journalSnapshotEntries}, {@code unvouchedPolicy} ({@code "ACCEPT"} | {@code "REFUSE"}),
 * {@code ownerLeaseMs}, {@code ownerCheckMs}, {@code ownerLockPollMs}. Numbers are JSON
 * integers, the policies JSON strings, {@code routeByKey} and {@code payloadHashes} JSON booleans. In a larger
 * configuration (one merged by {@code vertx-config}, say) the same object sits under
 * {@value DedupVerticle#CONFIG_KEY}; see {@link DedupVerticle}.
 *
 * <p>Not thread-safe: build it on one thread, then hand it over (deployment copies it into JSON).
 */
@DataObject
public class DedupOptions {

  /** Default {@code address}: partition {@code p} listens on {@code "dedup.<p>"}. */
  public static final String DEFAULT_ADDRESS = "dedup";
  /** Default number of partitions. */
  public static final int DEFAULT_PARTITIONS = 1;
  /** Default {@code routeByKey}: events are routed by their id. */
  public static final boolean DEFAULT_ROUTE_BY_KEY = false;
  /** Largest number of partitions (each is a verticle on an event loop). */
  public static final int MAX_PARTITIONS = 1024;
  /** Largest window: one year. A longer promise needs a durable store (a database inbox), not memory. */
  public static final long MAX_WINDOW_MS = 366L * 24 * 3600 * 1000;
  /** Default cap of live ids (and business keys) per partition: at most a few hundred MB of table per partition. */
  public static final long DEFAULT_MAX_IDS_PER_PARTITION = 10_000_000L;
  /** Default table pre-size per partition: 0, start small and grow. */
  public static final int DEFAULT_EXPECTED_IDS_PER_PARTITION = 0;
  /** Default capacity policy: fail closed. */
  public static final CapacityPolicy DEFAULT_CAPACITY_POLICY = CapacityPolicy.REJECT;
  /** Default: keep a payload hash with every id, so that {@link DedupVerdict#CONFLICT} can be detected. */
  public static final boolean DEFAULT_PAYLOAD_HASHES = true;
  /** Default policy for events older than the partition covers. */
  public static final UncoveredPolicy DEFAULT_UNCOVERED_POLICY = UncoveredPolicy.UNKNOWN;
  /** Default largest {@code id} (and {@code key}): 1024 UTF-8 bytes. */
  public static final int DEFAULT_MAX_ID_BYTES = 1024;
  /** Upper limit of {@code maxIdBytes}. */
  public static final int MAX_ID_BYTES_LIMIT = 65_536;
  /** Default largest batch: 1000 events. */
  public static final int DEFAULT_MAX_BATCH = 1000;
  /** Upper limit of {@code maxBatch}. */
  public static final int MAX_BATCH_LIMIT = 100_000;
  /** Default claim lease: 30 s. */
  public static final long DEFAULT_LEASE_MS = 30_000L;
  /** Longest claim lease, for {@code leaseMs} in the options and in a claim request: one day. */
  public static final long MAX_LEASE_MS = 24L * 3600 * 1000;
  /** Default bound of the per-partition queue of requests waiting for their journal write. */
  public static final int DEFAULT_MAX_PENDING = 10_000;
  /** Upper limit of {@code maxPending}. */
  public static final int MAX_PENDING_LIMIT = 10_000_000;
  /**
   * Default {@code requestTimeoutMs}: 30 s, the event bus's own default send timeout
   * ({@link io.vertx.core.eventbus.DeliveryOptions#DEFAULT_TIMEOUT}).
   */
  public static final long DEFAULT_REQUEST_TIMEOUT_MS = 30_000L;
  /** Longest {@code requestTimeoutMs}: one hour. */
  public static final long MAX_REQUEST_TIMEOUT_MS = 3_600_000L;
  /**
   * Default {@code journalSync}: {@link SyncPolicy#ASYNC}. A crash of the process loses no answered id; a power loss
   * loses at most about the last second of them.
   */
  public static final SyncPolicy DEFAULT_JOURNAL_SYNC = SyncPolicy.ASYNC;
  /**
   * Default {@code journalSnapshotEntries}: a partition writes a window snapshot once 65,536 entries, and a quarter
   * of the live entries of its newest snapshot, were journaled after that snapshot.
   */
  public static final long DEFAULT_JOURNAL_SNAPSHOT_ENTRIES = 65_536;
  /** Default {@code unvouchedPolicy}: accept new ids after a takeover without the previous owner's journal, marked. */
  public static final UnvouchedPolicy DEFAULT_UNVOUCHED_POLICY = UnvouchedPolicy.ACCEPT;
  /**
   * Default {@code ownerLeaseMs}: 10 s. An owner decides only while its last confirmation of its epoch is younger;
   * a new owner that takes over from one that did not release cleanly waits this long before it answers.
   */
  public static final long DEFAULT_OWNER_LEASE_MS = 10_000L;
  /** Default {@code ownerCheckMs}: an owner confirms its epoch through the cluster every 2 s. */
  public static final long DEFAULT_OWNER_CHECK_MS = 2_000L;
  /** Default {@code ownerLockPollMs}: a standby tries to take its partition's lock every second. */
  public static final long DEFAULT_OWNER_LOCK_POLL_MS = 1_000L;
  /** Upper limit of {@code ownerLeaseMs}, {@code ownerCheckMs} and {@code ownerLockPollMs}: one hour. */
  public static final long MAX_OWNER_MS = 3_600_000L;

  /** The JSON form: every key, its JSON type and its setter, in the order of the class documentation. */
  private static final OptionSchema<DedupOptions> JSON = new OptionSchema<DedupOptions>("dedup option")
      .string("address", DedupOptions::setAddress)
      .intValue("partitions", DedupOptions::setPartitions)
      .bool("routeByKey", DedupOptions::setRouteByKey)
      .longValue("windowMs", DedupOptions::setWindowMs)
      .longValue("bucketMs", DedupOptions::setBucketMs)
      .longValue("maxIdsPerPartition", DedupOptions::setMaxIdsPerPartition)
      .intValue("expectedIdsPerPartition", DedupOptions::setExpectedIdsPerPartition)
      .enumValue("capacityPolicy", CapacityPolicy.class, DedupOptions::setCapacityPolicy)
      .bool("payloadHashes", DedupOptions::setPayloadHashes)
      .enumValue("uncoveredPolicy", UncoveredPolicy.class, DedupOptions::setUncoveredPolicy)
      .intValue("maxIdBytes", DedupOptions::setMaxIdBytes)
      .intValue("maxBatch", DedupOptions::setMaxBatch)
      .longValue("leaseMs", DedupOptions::setLeaseMs)
      .intValue("maxPending", DedupOptions::setMaxPending)
      .longValue("requestTimeoutMs", DedupOptions::setRequestTimeoutMs)
      .string("journalDir", DedupOptions::setJournalDir)
      .enumValue("journalSync", SyncPolicy.class, DedupOptions::setJournalSync)
      .longValue("journalSnapshotEntries", DedupOptions::setJournalSnapshotEntries)
      .enumValue("unvouchedPolicy", UnvouchedPolicy.class, DedupOptions::setUnvouchedPolicy)
      .longValue("ownerLeaseMs", DedupOptions::setOwnerLeaseMs)
      .longValue("ownerCheckMs", DedupOptions::setOwnerCheckMs)
      .longValue("ownerLockPollMs", DedupOptions::setOwnerLockPollMs);

  private String address;
  private int partitions;
  private boolean routeByKey;
  private long windowMs;
  private long bucketMs;
  private long maxIdsPerPartition;
  private int expectedIdsPerPartition;
  private CapacityPolicy capacityPolicy;
  private boolean payloadHashes;
  private UncoveredPolicy uncoveredPolicy;
  private int maxIdBytes;
  private int maxBatch;
  private long leaseMs;
  private int maxPending;
  private long requestTimeoutMs;
  private String journalDir;
  private SyncPolicy journalSync;
  private long journalSnapshotEntries;
  private UnvouchedPolicy unvouchedPolicy;
  private long ownerLeaseMs;
  private long ownerCheckMs;
  private long ownerLockPollMs;

  /** Creates options with the defaults; {@code windowMs} is unset and must be set before use. */
  public DedupOptions() {
    address = DEFAULT_ADDRESS;
    partitions = DEFAULT_PARTITIONS;
    routeByKey = DEFAULT_ROUTE_BY_KEY;
    maxIdsPerPartition = DEFAULT_MAX_IDS_PER_PARTITION;
    expectedIdsPerPartition = DEFAULT_EXPECTED_IDS_PER_PARTITION;
    capacityPolicy = DEFAULT_CAPACITY_POLICY;
    payloadHashes = DEFAULT_PAYLOAD_HASHES;
    uncoveredPolicy = DEFAULT_UNCOVERED_POLICY;
    maxIdBytes = DEFAULT_MAX_ID_BYTES;
    maxBatch = DEFAULT_MAX_BATCH;
    leaseMs = DEFAULT_LEASE_MS;
    maxPending = DEFAULT_MAX_PENDING;
    requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS;
    journalSync = DEFAULT_JOURNAL_SYNC;
    journalSnapshotEntries = DEFAULT_JOURNAL_SNAPSHOT_ENTRIES;
    unvouchedPolicy = DEFAULT_UNVOUCHED_POLICY;
    ownerLeaseMs = DEFAULT_OWNER_LEASE_MS;
    ownerCheckMs = DEFAULT_OWNER_CHECK_MS;
    ownerLockPollMs = DEFAULT_OWNER_LOCK_POLL_MS;
  }

  /**
   * Copies options.
   *
   * @param other the options to copy
   */
  public DedupOptions(DedupOptions other) {
    address = other.address;
    partitions = other.partitions;
    routeByKey = other.routeByKey;
    windowMs = other.windowMs;
    bucketMs = other.bucketMs;
    maxIdsPerPartition = other.maxIdsPerPartition;
    expectedIdsPerPartition = other.expectedIdsPerPartition;
    capacityPolicy = other.capacityPolicy;
    payloadHashes = other.payloadHashes;
    uncoveredPolicy = other.uncoveredPolicy;
    maxIdBytes = other.maxIdBytes;
    maxBatch = other.maxBatch;
    leaseMs = other.leaseMs;
    maxPending = other.maxPending;
    requestTimeoutMs = other.requestTimeoutMs;
    journalDir = other.journalDir;
    journalSync = other.journalSync;
    journalSnapshotEntries = other.journalSnapshotEntries;
    unvouchedPolicy = other.unvouchedPolicy;
    ownerLeaseMs = other.ownerLeaseMs;
    ownerCheckMs = other.ownerCheckMs;
    ownerLockPollMs = other.ownerLockPollMs;
  }

  /**
   * Reads options from their JSON form (what {@link #toJson()} writes); absent keys, and keys whose value is JSON
   * {@code null}, keep their defaults.
   *
   * @param json the options
   * @throws IllegalArgumentException on an unknown key (the message lists the known ones), on a value of the wrong
   *     JSON type (naming the key and the type it must have, e.g. {@code dedup option 'leaseMs' must be a JSON
   *     integer but was the string "30s"}), or on a value out of range (naming the key and its limit)
   * @throws NullPointerException if {@code json} is null
   */
  public DedupOptions(JsonObject json) {
    this();
    JSON.read(json, this);
  }

  /**
   * Writes these options as a JSON deployment config. {@code windowMs} and {@code bucketMs} are written only when
   * set, {@code journalDir} only when not null.
   *
   * @return a new JSON object
   */
  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("address", address).put("partitions", partitions)
        .put("routeByKey", routeByKey);
    if (windowMs != 0) {
      json.put("windowMs", windowMs);
    }
    if (bucketMs != 0) {
      json.put("bucketMs", bucketMs);
    }
    json.put("maxIdsPerPartition", maxIdsPerPartition)
        .put("expectedIdsPerPartition", expectedIdsPerPartition)
        .put("capacityPolicy", capacityPolicy.name())
        .put("payloadHashes", payloadHashes)
        .put("uncoveredPolicy", uncoveredPolicy.name())
        .put("maxIdBytes", maxIdBytes)
        .put("maxBatch", maxBatch)
        .put("leaseMs", leaseMs)
        .put("maxPending", maxPending)
        .put("requestTimeoutMs", requestTimeoutMs)
        .put("journalSync", journalSync.name())
        .put("journalSnapshotEntries", journalSnapshotEntries)
        .put("unvouchedPolicy", unvouchedPolicy.name())
        .put("ownerLeaseMs", ownerLeaseMs)
        .put("ownerCheckMs", ownerCheckMs)
        .put("ownerLockPollMs", ownerLockPollMs);
    if (journalDir != null) {
      json.put("journalDir", journalDir);
    }
    return json;
  }

  /**
   * Checks the rules that relate several values: {@code windowMs} is set; {@code bucketMs} (or its default
   * {@code windowMs / 60}) divides it into at most {@link DedupWindow#MAX_BUCKETS} buckets;
   * {@code maxIdsPerPartition} is within {@link DedupWindow#maxIdsLimit(boolean)}; {@code expectedIdsPerPartition}
   * does not exceed {@code maxIdsPerPartition}; {@code ownerCheckMs} is at most half of {@code ownerLeaseMs}.
   *
   * @return this
   * @throws IllegalArgumentException naming the first rule broken and the values involved
   */
  public DedupOptions validate() {
    if (ownerCheckMs > ownerLeaseMs / 2) {
      // A check is due ownerCheckMs after the previous one was asked, and its read may take up to ownerCheckMs
      // before it confirms: the lease must cover both, or the owner refuses between confirmations.
      throw new IllegalArgumentException("ownerCheckMs must be <= ownerLeaseMs / 2 (" + ownerLeaseMs / 2
          + " with ownerLeaseMs " + ownerLeaseMs + "), so that an owner's next confirmation, whose read may take"
          + " up to ownerCheckMs, arrives before its lease runs out, but was " + ownerCheckMs);
    }
    if (windowMs == 0) {
      throw new IllegalArgumentException("windowMs is required (there is no safe default window: choose it above "
          + "the longest redelivery path of your system)");
    }
    if (bucketMs == 0 && windowMs % 60 != 0) {
      throw new IllegalArgumentException("bucketMs defaults to windowMs / 60, so windowMs must be a multiple of 60"
          + " but was " + windowMs + "; set bucketMs explicitly");
    }
    long b = getEffectiveBucketMs();
    if (windowMs % b != 0) {
      throw new IllegalArgumentException("bucketMs must divide windowMs (" + windowMs + ") but was " + b);
    }
    if (windowMs / b > DedupWindow.MAX_BUCKETS) {
      throw new IllegalArgumentException("windowMs / bucketMs must be <= " + DedupWindow.MAX_BUCKETS
          + " but was " + (windowMs / b) + " (windowMs " + windowMs + ", bucketMs " + b + ")");
    }
    long limit = DedupWindow.maxIdsLimit(payloadHashes);
    if (maxIdsPerPartition > limit) {
      throw new IllegalArgumentException("maxIdsPerPartition must be <= " + limit + " (payloadHashes="
          + payloadHashes + ") but was " + maxIdsPerPartition);
    }
    if (expectedIdsPerPartition > maxIdsPerPartition) {
      throw new IllegalArgumentException("expectedIdsPerPartition must be <= maxIdsPerPartition ("
          + maxIdsPerPartition + ") but was " + expectedIdsPerPartition);
    }
    if (journalDir != null && !JOURNAL_SAFE_ADDRESS.matcher(address).matches()) {
      // The address names the journal's directory under journalDir: it must stay one plain path component.
      throw new IllegalArgumentException("address must match " + JOURNAL_SAFE_ADDRESS.pattern()
          + " (one directory name under journalDir) when journalDir is set, but was '" + address + "'");
    }
    return this;
  }

  /** Addresses that are safe as one directory name: no separators, no "." or "..". */
  private static final java.util.regex.Pattern JOURNAL_SAFE_ADDRESS =
      java.util.regex.Pattern.compile("[A-Za-z0-9_#-][A-Za-z0-9._#-]{0,254}");

  /** @return the base address; partition {@code p} listens on {@code address + "." + p} */
  public String getAddress() {
    return address;
  }

  /**
   * Sets the base address. Partition {@code p} listens on {@code address + "." + p}; {@code address} itself routes
   * single requests to the owning partition.
   *
   * @param address not blank
   * @return this
   * @throws IllegalArgumentException if null or blank
   */
  public DedupOptions setAddress(String address) {
    if (address == null || address.isBlank()) {
      throw new IllegalArgumentException("address must be a non-blank string but was '" + address + "'");
    }
    this.address = address;
    return this;
  }

  /** @return the number of partitions */
  public int getPartitions() {
    return partitions;
  }

  /**
   * Sets the number of partitions, each one verticle owning one window on its own event loop.
   *
   * @param partitions {@code 1 ..} {@value #MAX_PARTITIONS}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupOptions setPartitions(int partitions) {
    if (partitions < 1 || partitions > MAX_PARTITIONS) {
      throw new IllegalArgumentException(
          "partitions must be in 1.." + MAX_PARTITIONS + " but was " + partitions);
    }
    this.partitions = partitions;
    return this;
  }

  /** @return whether events are routed by their business key (true) or by their id (false) */
  public boolean isRouteByKey() {
    return routeByKey;
  }

  /**
   * Sets which field of an event chooses its partition, and so which events the service admits. Every copy of an
   * event must reach the partition that saw the first one, which with more than one partition holds only if every
   * copy is routed by the same field (see {@code docs/partitioning.md}):
   * <ul>
   *   <li>true: every event is routed by its {@code key}, whether or not it also has an id, and an event without a
   *       key is refused with a 400 naming {@code key}. The id is still deduplicated, inside the key's partition.
   *       For deployments that deduplicate on business keys.
   *   <li>false (the default): every event is routed by its {@code id}. With more than one partition an event that
   *       carries a {@code key} is refused with a 400 naming {@code key}, since a key cannot be checked across
   *       partitions routed by id; with one partition a key is deduplicated as well.
   * </ul>
   * A {@link DedupClient} must be created with the same value as the service. Changing it moves events between
   * partitions, like changing the partition count: with a {@code journalDir}, use a new one (or a new address). A
   * journaled service of more than one partition records the value in {@code <journalDir>/<address>/partitions} and
   * refuses to deploy with another one; a layout file of an earlier build (the count alone) is accepted and the
   * value recorded.
   *
   * @param routeByKey whether to route by key
   * @return this
   */
  public DedupOptions setRouteByKey(boolean routeByKey) {
    this.routeByKey = routeByKey;
    return this;
  }

  /** @return the window {@code W} in milliseconds, or 0 if unset */
  public long getWindowMs() {
    return windowMs;
  }

  /**
   * Sets the window {@code W}: how long an accepted id is remembered. Required; choose it above the longest
   * redelivery path of your system: the longest of its scenarios, stages in sequence added, plus a margin
   * ({@code docs/choosing-window.md}).
   *
   * @param windowMs milliseconds, {@code 1 ..} {@link #MAX_WINDOW_MS}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupOptions setWindowMs(long windowMs) {
    this.windowMs = requireRange("windowMs", windowMs, 1, MAX_WINDOW_MS);
    return this;
  }

  /**
   * Sets the window {@code W}; see {@link #setWindowMs(long)}.
   *
   * @param window whole milliseconds
   * @return this
   * @throws IllegalArgumentException if out of range or not a whole number of milliseconds
   */
  public DedupOptions setWindow(Duration window) {
    return setWindowMs(millis("window", window));
  }

  /** @return the bucket width set explicitly, or 0 when it defaults to {@code windowMs / 60} */
  public long getBucketMs() {
    return bucketMs;
  }

  /** @return the bucket width in force: {@link #getBucketMs()}, or {@code windowMs / 60} if that is 0 */
  public long getEffectiveBucketMs() {
    return bucketMs != 0 ? bucketMs : windowMs / 60;
  }

  /**
   * Sets the bucket width {@code b}: an id is remembered between {@code W - b} and {@code W}. Must divide
   * {@code windowMs} (checked by {@link #validate()}). Default {@code windowMs / 60}.
   *
   * @param bucketMs milliseconds, {@code >= 1}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupOptions setBucketMs(long bucketMs) {
    this.bucketMs = requireRange("bucketMs", bucketMs, 1, MAX_WINDOW_MS);
    return this;
  }

  /**
   * Sets the bucket width; see {@link #setBucketMs(long)}.
   *
   * @param bucket whole milliseconds
   * @return this
   * @throws IllegalArgumentException if out of range or not a whole number of milliseconds
   */
  public DedupOptions setBucket(Duration bucket) {
    return setBucketMs(millis("bucket", bucket));
  }

  /** @return the cap of live ids and keys per partition */
  public long getMaxIdsPerPartition() {
    return maxIdsPerPartition;
  }

  /**
   * Caps the live entries of one partition: remembered ids, remembered business keys, and the entries reserved by
   * live claims. What happens at the cap is {@link #setCapacityPolicy(CapacityPolicy)}.
   *
   * @param maxIdsPerPartition {@code >= 1}; at most {@link DedupWindow#maxIdsLimit(boolean)} (checked by
   *     {@link #validate()})
   * @return this
   * @throws IllegalArgumentException if below 1
   */
  public DedupOptions setMaxIdsPerPartition(long maxIdsPerPartition) {
    this.maxIdsPerPartition = requireRange("maxIdsPerPartition", maxIdsPerPartition, 1, Long.MAX_VALUE);
    return this;
  }

  /** @return the number of ids each partition's table is sized for at start */
  public int getExpectedIdsPerPartition() {
    return expectedIdsPerPartition;
  }

  /**
   * Sizes each partition's table once for this many live entries (typically rate x W / partitions), so that it
   * never doubles (an O(table) rehash on the event loop) while serving. Default 0: start small and grow.
   *
   * @param expectedIdsPerPartition {@code >= 0}
   * @return this
   * @throws IllegalArgumentException if negative
   */
  public DedupOptions setExpectedIdsPerPartition(int expectedIdsPerPartition) {
    this.expectedIdsPerPartition =
        (int) requireRange("expectedIdsPerPartition", expectedIdsPerPartition, 0, Integer.MAX_VALUE);
    return this;
  }

  /** @return what a full partition does with a new id */
  public CapacityPolicy getCapacityPolicy() {
    return capacityPolicy;
  }

  /**
   * Sets what a partition holding {@code maxIdsPerPartition} entries does with a new id: refuse it with a 503
   * ({@link CapacityPolicy#REJECT}, the default) or forget the soonest-expiring bucket early
   * ({@link CapacityPolicy#EVICT_OLDEST}, counted as early evictions).
   *
   * @param capacityPolicy not null
   * @return this
   * @throws IllegalArgumentException if null
   */
  public DedupOptions setCapacityPolicy(CapacityPolicy capacityPolicy) {
    if (capacityPolicy == null) {
      throw new IllegalArgumentException("capacityPolicy must be REJECT or EVICT_OLDEST but was null");
    }
    this.capacityPolicy = capacityPolicy;
    return this;
  }

  /** @return whether payload hashes are kept (needed for {@link DedupVerdict#CONFLICT}) */
  public boolean isPayloadHashes() {
    return payloadHashes;
  }

  /**
   * Keeps a payload hash with every entry, so that the same id with another {@code payloadHash} is a
   * {@link DedupVerdict#CONFLICT}. Costs 8 bytes per table slot (20 instead of 12). Default true. When false, a
   * request's {@code payloadHash} is accepted and ignored.
   *
   * @param payloadHashes whether to keep payload hashes
   * @return this
   */
  public DedupOptions setPayloadHashes(boolean payloadHashes) {
    this.payloadHashes = payloadHashes;
    return this;
  }

  /** @return what an event older than the partition's memory gets */
  public UncoveredPolicy getUncoveredPolicy() {
    return uncoveredPolicy;
  }

  /**
   * Sets what an event whose {@code eventTimeMs} is older than the partition covers gets when its id is not
   * remembered. Default {@link UncoveredPolicy#UNKNOWN}.
   *
   * @param uncoveredPolicy not null
   * @return this
   * @throws IllegalArgumentException if null
   */
  public DedupOptions setUncoveredPolicy(UncoveredPolicy uncoveredPolicy) {
    if (uncoveredPolicy == null) {
      throw new IllegalArgumentException("uncoveredPolicy must be UNKNOWN or ACCEPT but was null");
    }
    this.uncoveredPolicy = uncoveredPolicy;
    return this;
  }

  /** @return the largest {@code id} and {@code key}, in UTF-8 bytes */
  public int getMaxIdBytes() {
    return maxIdBytes;
  }

  /**
   * Sets the largest {@code id} and {@code key} a request may carry, in UTF-8 bytes. Default 1024.
   *
   * @param maxIdBytes {@code 1 ..} {@value #MAX_ID_BYTES_LIMIT}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupOptions setMaxIdBytes(int maxIdBytes) {
    this.maxIdBytes = (int) requireRange("maxIdBytes", maxIdBytes, 1, MAX_ID_BYTES_LIMIT);
    return this;
  }

  /** @return the largest number of events in one batch request */
  public int getMaxBatch() {
    return maxBatch;
  }

  /**
   * Sets the largest number of events of a {@code checkBatch}, {@code claimBatch} or {@code commitBatch} request.
   * Default 1000.
   *
   * @param maxBatch {@code 1 ..} {@value #MAX_BATCH_LIMIT}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupOptions setMaxBatch(int maxBatch) {
    this.maxBatch = (int) requireRange("maxBatch", maxBatch, 1, MAX_BATCH_LIMIT);
    return this;
  }

  /** @return the default claim lease in milliseconds */
  public long getLeaseMs() {
    return leaseMs;
  }

  /**
   * Sets the lease of a claim that names none: how long a claimed id answers {@link DedupVerdict#IN_FLIGHT} without a
   * commit or release before it is forgotten. Default 30 s.
   *
   * @param leaseMs milliseconds, {@code 1 ..} {@link #MAX_LEASE_MS}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupOptions setLeaseMs(long leaseMs) {
    this.leaseMs = requireRange("leaseMs", leaseMs, 1, MAX_LEASE_MS);
    return this;
  }

  /**
   * Sets the default claim lease; see {@link #setLeaseMs(long)}.
   *
   * @param lease whole milliseconds
   * @return this
   * @throws IllegalArgumentException if out of range or not a whole number of milliseconds
   */
  public DedupOptions setLease(Duration lease) {
    return setLeaseMs(millis("lease", lease));
  }

  /** @return the bound of each partition's queue of requests waiting for their journal write */
  public int getMaxPending() {
    return maxPending;
  }

  /**
   * Bounds each partition's queue of decided requests whose replies wait for their journal write. A request that
   * finds it full is failed at once with a 503 and nothing is recorded. Default 10,000.
   *
   * @param maxPending {@code 1 ..} {@value #MAX_PENDING_LIMIT}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupOptions setMaxPending(int maxPending) {
    this.maxPending = (int) requireRange("maxPending", maxPending, 1, MAX_PENDING_LIMIT);
    return this;
  }

  /** @return the deadline of one client request, in milliseconds */
  public long getRequestTimeoutMs() {
    return requestTimeoutMs;
  }

  /**
   * Sets the deadline of one request of a {@link DedupClient} built with these options, and of one request the
   * service's router at {@code address} forwards to a partition. Within it a request that reached no owner (no member
   * of the cluster has registered the partition's address: its owner is starting or failing over) is sent again with
   * a bounded backoff; once it passes, the request fails with {@link DedupFailure#OUTCOME_UNKNOWN} if it was handed
   * to an owner that did not answer, or {@link DedupFailure#UNAVAILABLE} if no owner was ever found. Set it above
   * the cluster manager's failure detection time if requests should wait out a failover. Default 30 s.
   *
   * @param requestTimeoutMs milliseconds, {@code 1 ..} {@value #MAX_REQUEST_TIMEOUT_MS}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupOptions setRequestTimeoutMs(long requestTimeoutMs) {
    this.requestTimeoutMs = requireRange("requestTimeoutMs", requestTimeoutMs, 1, MAX_REQUEST_TIMEOUT_MS);
    return this;
  }

  /**
   * Sets the request timeout; see {@link #setRequestTimeoutMs(long)}.
   *
   * @param requestTimeout whole milliseconds
   * @return this
   * @throws IllegalArgumentException if out of range or not a whole number of milliseconds
   */
  public DedupOptions setRequestTimeout(Duration requestTimeout) {
    return setRequestTimeoutMs(millis("requestTimeout", requestTimeout));
  }

  /** @return the journal directory, or null for memory only */
  public String getJournalDir() {
    return journalDir;
  }

  /**
   * Sets the directory of the partitions' journals; null (the default) runs memory only. Partition {@code p} keeps
   * its journal (a Chronicle Queue) in {@code <journalDir>/<address>/<p>}, and on start rebuilds its window from it,
   * so that a restart forgets nothing that was answered. One process owns a partition's journal at a time; another
   * deployment on the same directory answers 503 until the owner stops. The directory also records the partition
   * count, and a deployment with another count is refused (an id's partition depends on it). The JVM needs the flags
   * in {@code docs/journal.md}.
   *
   * @param journalDir a non-blank path, or null
   * @return this
   * @throws IllegalArgumentException if blank
   */
  public DedupOptions setJournalDir(String journalDir) {
    if (journalDir != null && journalDir.isBlank()) {
      throw new IllegalArgumentException("journalDir must be a non-blank path or absent but was '" + journalDir
          + "'");
    }
    this.journalDir = journalDir;
    return this;
  }

  /** @return when journal writes are forced to disk (used only with a {@code journalDir}) */
  public SyncPolicy getJournalSync() {
    return journalSync;
  }

  /**
   * Sets when journal writes are forced to disk. A crash of the process ({@code kill -9}) loses no answered id under
   * any policy: every answered decision is in the memory-mapped journal file. They differ on a power loss or kernel
   * crash: {@link SyncPolicy#NONE} loses what the kernel had not written back (about 30 s on Linux),
   * {@link SyncPolicy#ASYNC} (the default) about the last second, and {@link SyncPolicy#SYNC} nothing that was
   * answered: replies wait for an {@code fsync} (shared by every request that arrived meanwhile: group commit),
   * which adds about 0.1 to 1 ms of latency and no event-loop time. See {@code docs/journal.md}.
   *
   * @param journalSync not null
   * @return this
   * @throws IllegalArgumentException if null
   */
  public DedupOptions setJournalSync(SyncPolicy journalSync) {
    if (journalSync == null) {
      throw new IllegalArgumentException("journalSync must be NONE, ASYNC or SYNC but was null");
    }
    this.journalSync = journalSync;
    return this;
  }

  /** @return the journal entries after the newest window snapshot that make the next one due; 0: no snapshots */
  public long getJournalSnapshotEntries() {
    return journalSnapshotEntries;
  }

  /**
   * Sets when a journaled partition writes a window snapshot: once this many entries (accepts, claims, commits,
   * releases), and a quarter of the live entries of its newest snapshot, were journaled after that snapshot. A
   * snapshot holds the window's live entries, open claims and offsets; a restart loads the newest one and replays
   * only the journal after it, so it replays at most about a quarter of the live entries (plus this many) from the
   * journal. It is written on a worker beside the appends, never stopping decisions, and costs a sequential rewrite
   * of the live entries (32 bytes each) per quarter of them journaled; see {@code docs/journal.md}. Used only with a
   * {@code journalDir}.
   *
   * @param journalSnapshotEntries {@code >= 1}, or 0 to write no snapshots (a restart then replays the whole
   *     journal); default {@value #DEFAULT_JOURNAL_SNAPSHOT_ENTRIES}
   * @return this
   * @throws IllegalArgumentException if negative
   */
  public DedupOptions setJournalSnapshotEntries(long journalSnapshotEntries) {
    this.journalSnapshotEntries = requireRange("journalSnapshotEntries", journalSnapshotEntries, 0, Long.MAX_VALUE);
    return this;
  }

  /** @return what a new id gets during the first window after a takeover without the previous owner's journal */
  public UnvouchedPolicy getUnvouchedPolicy() {
    return unvouchedPolicy;
  }

  /**
   * Sets what a partition of the event-bus service does with a new id until {@code windowMs} has passed since it
   * took the partition over from another owner without that owner's journal (its window then knows only what it
   * accepted since): {@link UnvouchedPolicy#ACCEPT} (the default) accepts it marked {@code "unvouched": true},
   * {@link UnvouchedPolicy#REFUSE} answers 503. See {@code docs/partitioning.md}, "Failover".
   *
   * @param unvouchedPolicy not null
   * @return this
   * @throws IllegalArgumentException if null
   */
  public DedupOptions setUnvouchedPolicy(UnvouchedPolicy unvouchedPolicy) {
    if (unvouchedPolicy == null) {
      throw new IllegalArgumentException("unvouchedPolicy must be ACCEPT or REFUSE but was null");
    }
    this.unvouchedPolicy = unvouchedPolicy;
    return this;
  }

  /** @return the owner's lease of a partition of the event-bus service, milliseconds */
  public long getOwnerLeaseMs() {
    return ownerLeaseMs;
  }

  /**
   * Sets the owner's lease: a partition's owner decides only while its last confirmation of its epoch (fencing token)
   * through the cluster is younger than this, so an owner cut off from the cluster stops deciding at most this long
   * after its last confirmation; a new owner that takes a partition over from an owner that did not release it
   * cleanly (its member died or was cut off) waits this long before it answers. It adds to the failover time after
   * an unclean loss; see {@code docs/partitioning.md}. Measured in real elapsed time ({@link System#nanoTime()}),
   * not on the service's {@link io.github.vertxdedup.time.DedupClock}: a clock a test drives does not end a lease.
   * Default {@value #DEFAULT_OWNER_LEASE_MS} ms; must be at least twice {@code ownerCheckMs} (checked by
   * {@link #validate()}).
   *
   * @param ownerLeaseMs milliseconds, {@code 1 ..} {@value #MAX_OWNER_MS}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupOptions setOwnerLeaseMs(long ownerLeaseMs) {
    this.ownerLeaseMs = requireRange("ownerLeaseMs", ownerLeaseMs, 1, MAX_OWNER_MS);
    return this;
  }

  /** @return how often an owner confirms its epoch through the cluster, milliseconds */
  public long getOwnerCheckMs() {
    return ownerCheckMs;
  }

  /**
   * Sets how often a partition's owner confirms its epoch through the cluster (it reads the partition's epoch
   * counter; a read that fails, takes longer than this, or shows a larger epoch makes it step down at once). Each
   * confirmation extends the owner's lease to {@code ownerLeaseMs} from the moment it was asked. Default
   * {@value #DEFAULT_OWNER_CHECK_MS} ms; must be at most {@code ownerLeaseMs / 2} (checked by {@link #validate()}):
   * a check is due this long after the previous one was asked, and its read may take this long again. A third of
   * the lease or less leaves room for a failed read to be noticed.
   *
   * @param ownerCheckMs milliseconds, {@code 1 ..} {@value #MAX_OWNER_MS}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupOptions setOwnerCheckMs(long ownerCheckMs) {
    this.ownerCheckMs = requireRange("ownerCheckMs", ownerCheckMs, 1, MAX_OWNER_MS);
    return this;
  }

  /** @return how often a standby tries to take its partition's lock, milliseconds */
  public long getOwnerLockPollMs() {
    return ownerLockPollMs;
  }

  /**
   * Sets how often a standby (a deployment of the service whose partition another deployment owns) tries to take
   * the partition's cluster-wide lock; each try waits at most a few milliseconds, so that no worker thread is held
   * for long. It adds up to this much to the failover time. Default {@value #DEFAULT_OWNER_LOCK_POLL_MS} ms.
   *
   * @param ownerLockPollMs milliseconds, {@code 1 ..} {@value #MAX_OWNER_MS}
   * @return this
   * @throws IllegalArgumentException if out of range
   */
  public DedupOptions setOwnerLockPollMs(long ownerLockPollMs) {
    this.ownerLockPollMs = requireRange("ownerLockPollMs", ownerLockPollMs, 1, MAX_OWNER_MS);
    return this;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof DedupOptions)) {
      return false;
    }
    DedupOptions x = (DedupOptions) o;
    return partitions == x.partitions && routeByKey == x.routeByKey && windowMs == x.windowMs
        && bucketMs == x.bucketMs && maxIdsPerPartition == x.maxIdsPerPartition
        && expectedIdsPerPartition == x.expectedIdsPerPartition && payloadHashes == x.payloadHashes
        && maxIdBytes == x.maxIdBytes && maxBatch == x.maxBatch
        && leaseMs == x.leaseMs && maxPending == x.maxPending
        && requestTimeoutMs == x.requestTimeoutMs && address.equals(x.address)
        && capacityPolicy == x.capacityPolicy && uncoveredPolicy == x.uncoveredPolicy
        && Objects.equals(journalDir, x.journalDir) && journalSync == x.journalSync
        && journalSnapshotEntries == x.journalSnapshotEntries && unvouchedPolicy == x.unvouchedPolicy
        && ownerLeaseMs == x.ownerLeaseMs && ownerCheckMs == x.ownerCheckMs && ownerLockPollMs == x.ownerLockPollMs;
  }

  @Override
  public int hashCode() {
    return Objects.hash(address, partitions, routeByKey, windowMs, bucketMs, maxIdsPerPartition,
        expectedIdsPerPartition, capacityPolicy, payloadHashes, uncoveredPolicy, maxIdBytes, maxBatch, leaseMs,
        maxPending, requestTimeoutMs, journalDir, journalSync, journalSnapshotEntries, unvouchedPolicy, ownerLeaseMs,
        ownerCheckMs, ownerLockPollMs);
  }

  @Override
  public String toString() {
    return "DedupOptions" + toJson().encode();
  }

  // ---------------------------------------------------------------------------------------------------------------

  private static long requireRange(String name, long value, long min, long max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(name + " must be in " + min + ".." + max + " but was " + value);
    }
    return value;
  }

  private static long millis(String name, Duration d) {
    if (d == null) {
      throw new IllegalArgumentException(name + " must be a duration but was null");
    }
    try {
      return Durations.positiveMillis(name, d);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(name + " is too long: " + d);
    }
  }
}
