package io.github.vertxdedup.impl;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupLookup;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.EntryState;
import io.github.vertxdedup.UnvouchedPolicy;
import io.github.vertxdedup.window.CapacityPolicy;
import io.github.vertxdedup.window.DedupClock;
import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.window.Verdict;
import io.github.vertxdedup.window.WindowFullException;
import io.github.vertxdedup.window.WindowStats;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.function.LongConsumer;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The decisions of one partition: its dedup window, its live claims, and the journal calls, with no event bus in
 * sight. Confined to the partition's event loop (not thread-safe, no locks).
 *
 * <h2>Ids and keys</h2>
 * An event has an id and may have a business key; both are fingerprinted (separate scopes) and both are recorded in
 * the one window on accept, so an event is a duplicate if either was seen (seed 002: "dedup on both ... so a single
 * lookup can short-circuit either failure mode"). An event without a key costs one probe: {@link DedupWindow#check}.
 *
 * <h2>Claims</h2>
 * A claim holds an id (and key) outside the window, in two hash maps (by id and by key fingerprint), until it is
 * committed (then it enters the window), released (forgotten) or its lease ends. A lapsed claim is noticed when a
 * request touches it, or by {@link #sweepExpiredLeases()} (a periodic timer); either way it is counted once. The sweep
 * finds lapsed claims through a queue in lease-end order (see {@link #leaseOrder}), so it costs O(claims whose lease
 * ended) rather than a scan of every claim. Under
 * {@link CapacityPolicy#REJECT} a claim reserves its window entries, so its commit never finds the window full.
 * A claim keeps the claimer its request named (journaled with it); {@link #releaseClaimsOf} releases a restarted
 * claimer's orphaned claims at once.
 *
 * <h2>Room</h2>
 * Under {@link CapacityPolicy#REJECT} only a new event needs room (its id, and its key if it has one; reserved too by
 * a claim): an id or key that is remembered or claimed is answered whether or not the window is full, since answering
 * it records nothing. So room is demanded after the lookup, never before it, and a batch is decided event by event: a
 * new event the full window refuses is that element's 503 ({@link DedupBatchResult}), and the others are decided.
 *
 * <h2>Claim tokens</h2>
 * A token is 64 bits written as 16 hex digits (the journal keeps it as a number), the top bit always set (so the
 * text always has 16 digits). A claim with the partition's default lease (every claim of the Kafka consumer) gets the
 * claim's lease end in epoch milliseconds ({@value #TOKEN_LEASE_BITS} bits, up to the year 2109), then a sequence
 * number ({@value #TOKEN_SEQUENCE_BITS} bits) that starts at a random value. Two such claims share a lease end only if
 * they were made in the same millisecond, so within a run their tokens differ, and across a restart too unless the
 * default lease changed meanwhile (then one chance in 2^21 per pair). Any other claim (a per-request lease, or a clock
 * outside 0..2^42 ms) gets 63 random bits, as every claim did before. Tokens are not secret: they tell a claim's holder
 * from a stale one, and the event bus is trusted.
 *
 * <p>Because such a token names its lease end, a repeated commit finds its committed claim by binary search in
 * {@link #leaseOrder}, which keeps every claim until its lease ends anyway; no map of committed claims is kept for
 * them (it cost a cache miss per commit and another per sweep on every claim). A claim whose token cannot locate it
 * (a random token, a claim restored from the journal, or one that went to {@link #leaseOrderLate}) is kept in
 * {@link #committedUnindexed} once committed.
 *
 * <h2>Time</h2>
 * Every instant is the injected clock's. A claim's lease ends at {@code claim time + leaseMs}; an accepted id is
 * remembered until {@code rememberUntilMs} or {@code now + windowMs} (bucket precision, see {@link DedupWindow}).
 * A committed claim is remembered from its commit. An event whose {@code eventTimeMs} is older than
 * {@link #vouchedFromMs()} and whose id is not remembered is {@link DedupVerdict#UNKNOWN} (or accepted unvouched).
 */
final class PartitionCore {

  private static final Future<Void> DONE = Future.succeededFuture();
  /** Bits of a claim token holding the lease end (epoch milliseconds). */
  static final int TOKEN_LEASE_BITS = 42;
  /** Bits of a claim token holding its sequence number. */
  static final int TOKEN_SEQUENCE_BITS = 63 - TOKEN_LEASE_BITS;
  private static final long TOKEN_SEQUENCE_MASK = (1L << TOKEN_SEQUENCE_BITS) - 1;

  private final int partition;
  private final DedupClock clock;
  private final DedupWindow window;
  private final long windowMs;
  private final long defaultLeaseMs;
  private final long maxIds;
  private final boolean reject;
  private final UnvouchedPolicy unvouchedPolicy;
  private final PartitionJournal journal;
  private final SplittableRandom tokens = new SplittableRandom(new SecureRandom().nextLong());
  /** The next token's sequence number (its low bits); starts at a random value. */
  private long tokenSequence = tokens.nextLong();
  private final Long2ObjectHashMap<Claim> claimsById = new Long2ObjectHashMap<>();
  private final Long2ObjectHashMap<Claim> claimsByKey = new Long2ObjectHashMap<>();
  /**
   * Claims committed while their lease still runs whose token cannot locate them in {@link #leaseOrder} (see Claim
   * tokens above), by id. A repeated commit with the same token (a retry after a lost reply) is answered COMMITTED
   * again; any other commit of a no-longer-claimed id is a 409. Forgotten at lease end (lazily, and by
   * {@link #sweepExpiredLeases()}), and on restart.
   */
  private final Long2ObjectHashMap<Claim> committedUnindexed = new Long2ObjectHashMap<>();
  /**
   * Every claim made or restored, in the order of its lease end, for {@link #sweepExpiredLeases()} and for finding a
   * committed claim by its token. A claim's entry stays in it after it is committed (a repeated commit finds it there
   * until its lease ends), released or expired, but as numbers only (see {@link ClaimQueue}): the claim object is let
   * go, and the sweep drops such an entry when its lease ends. Claims are appended in
   * claim order, which is lease-end order while leases have one length (the default {@code leaseMs}, as the Kafka
   * consumer uses) and the clock does not go back; a claim whose lease ends before the last one appended (a shorter
   * per-request {@code leaseMs}) goes to {@link #leaseOrderLate}, a heap. So a sweep costs O(entries whose lease
   * ended), plus O(log n) per entry of the heap.
   */
  private final ClaimQueue leaseOrder = new ClaimQueue();
  /** Claims appended out of lease-end order, by lease end (see {@link #leaseOrder}). */
  private final PriorityQueue<Claim> leaseOrderLate =
      new PriorityQueue<>(Comparator.comparingLong((Claim c) -> c.leaseEndMs));
  /** Window entries reserved by live claims (1 per claim, 2 with a key). */
  private long reserved;
  private long memoryBeganMs;
  private Future<?> lastWrite = DONE;
  private LongConsumer duplicateAges = age -> { };
  /** Scratch arrays of {@link #checkPlainRun}, grown to the largest batch seen. */
  private long[] runFingerprints = new long[0];
  private Verdict[] runVerdicts = new Verdict[0];

  private final DedupResult accepted;
  /** {@link #accepted} as a batch element, shared like it. */
  private final DedupBatchResult acceptedElement;
  private final DedupResult acceptedUnvouched;
  private final DedupResult unknown;
  private final DedupResult committed;
  private final DedupResult released;

  long acceptedCount;
  long duplicateCount;
  long conflictCount;
  long inFlightCount;
  long unknownCount;
  long unvouchedCount;
  long lateDeliveries;
  long claimCount;
  long commitCount;
  long releaseCount;
  long expiredLeases;
  long capacityRejects;
  long keysNotRecorded;

  PartitionCore(DedupOptions options, int partition, DedupClock clock, PartitionJournal journal) {
    this.partition = partition;
    this.clock = clock;
    this.journal = journal;
    this.windowMs = options.getWindowMs();
    this.defaultLeaseMs = options.getLeaseMs();
    this.maxIds = options.getMaxIdsPerPartition();
    this.reject = options.getCapacityPolicy() == CapacityPolicy.REJECT;
    this.unvouchedPolicy = options.getUnvouchedPolicy();
    this.window = DedupWindow.builder()
        .window(java.time.Duration.ofMillis(windowMs))
        .bucket(java.time.Duration.ofMillis(options.getEffectiveBucketMs()))
        .clock(clock)
        .maxIds(maxIds)
        .capacityPolicy(options.getCapacityPolicy())
        .payloadHashes(options.isPayloadHashes())
        .expectedIds(options.getExpectedIdsPerPartition())
        .build();
    this.memoryBeganMs = clock.nowMs();
    this.accepted = DedupResult.of(DedupVerdict.ACCEPTED, partition);
    this.acceptedElement = DedupBatchResult.decided(accepted);
    this.acceptedUnvouched = new DedupResult(DedupVerdict.ACCEPTED, partition, null, DedupResult.NO_TIME,
        DedupResult.NO_TIME, DedupResult.NO_TIME, true);
    this.unknown = DedupResult.of(DedupVerdict.UNKNOWN, partition);
    this.committed = DedupResult.of(DedupVerdict.COMMITTED, partition);
    this.released = DedupResult.of(DedupVerdict.RELEASED, partition);
  }

  /**
   * Takes over the counters of the core this one replaces (a partition rebuilds its window from the journal after a
   * failed write), so that the partition's counters and meters never run backwards.
   *
   * @param previous the replaced core
   */
  void carryCountersFrom(PartitionCore previous) {
    acceptedCount = previous.acceptedCount;
    duplicateCount = previous.duplicateCount;
    conflictCount = previous.conflictCount;
    inFlightCount = previous.inFlightCount;
    unknownCount = previous.unknownCount;
    unvouchedCount = previous.unvouchedCount;
    lateDeliveries = previous.lateDeliveries;
    claimCount = previous.claimCount;
    commitCount = previous.commitCount;
    releaseCount = previous.releaseCount;
    expiredLeases = previous.expiredLeases;
    capacityRejects = previous.capacityRejects;
    keysNotRecorded = previous.keysNotRecorded;
    duplicateAges = previous.duplicateAges;
  }

  /** @param sink receives the age in ms of every duplicate (the duplicate-age histogram) */
  void duplicateAges(LongConsumer sink) {
    this.duplicateAges = sink;
  }

  /** @return the latest journal write issued; a reply decided now must wait for it */
  Future<?> lastWrite() {
    return lastWrite;
  }

  /** @return {@code IN_FLIGHT} when a live claim holds the event's id or key, else null */
  private DedupResult inFlightIfClaimed(ParsedEvent e, long now) {
    if (claimsById.isEmpty()) {
      return null;
    }
    Claim c = liveClaim(e, now);
    return c == null ? null : inFlight(c, now);
  }

  /**
   * {@code check}: records a first sighting. O(1) expected: one window probe without a key, two or three with (two
   * without a key too when live claims leave less room than the event needs). An id or key already remembered or
   * claimed needs no room: it is answered even when the window is full.
   *
   * @param e the validated event
   * @return the verdict
   * @throws RequestFailure 503 if the event is new and the window (with the entries claims reserve) is full under
   *     REJECT; nothing recorded
   * @throws io.github.vertxdedup.window.WindowFullException if the event is new and the window holds
   *     {@code maxIdsPerPartition} entries under REJECT with no claim live, or the window's table cannot grow
   */
  DedupResult check(ParsedEvent e) {
    final long now = clock.nowMs();
    DedupResult held = inFlightIfClaimed(e, now);
    if (held != null) {
      return held;
    }
    boolean unvouched = e.eventTimeMs != ParsedEvent.NO_EVENT_TIME && unvouched(e.eventTimeMs, now);
    // One probe decides a plain event when the window's own cap is the only limit (no claim reserves room) or there
    // is room anyway; otherwise the lookup below comes first, so that a remembered id never needs room.
    if (e.keyFp == 0 && !unvouched && (reserved == 0 || hasRoom(1))) {
      Verdict v = window.check(e.idFp, e.payloadHash, e.rememberUntilMs);
      if (v == Verdict.ACCEPTED) {
        acceptedCount++;
        lastWrite = journal.accepted(e.idFp, 0, e.payloadHash, now, expiresAt(e.rememberUntilMs, now));
        return accepted;
      }
      return seen(window.lookup(e.idFp), v == Verdict.CONFLICT, now);
    }
    DedupWindow.Entry entry = remembered(e);
    if (entry != null) {
      return seen(entry, conflicts(entry, e.payloadHash), now);
    }
    if (unvouched && unvouchedPolicy == UnvouchedPolicy.UNKNOWN) {
      unknownCount++;
      return unknown;
    }
    requireRoom(e.keyFp != 0 ? 2 : 1);
    window.check(e.idFp, e.payloadHash, e.rememberUntilMs);
    if (e.keyFp != 0) {
      rememberKey(e.keyFp, e.payloadHash, e.rememberUntilMs);
    }
    acceptedCount++;
    lastWrite = journal.accepted(e.idFp, e.keyFp, e.payloadHash, now, expiresAt(e.rememberUntilMs, now));
    if (unvouched) {
      unvouchedCount++;
      return acceptedUnvouched;
    }
    return accepted;
  }

  /**
   * {@code claim}: holds a first sighting for a lease. O(1) expected.
   *
   * @param e the validated event
   * @return ACCEPTED with a token, or the verdict a check would give (nothing recorded)
   * @throws RequestFailure 503 if the event is new and the window (with the entries claims reserve) is full under
   *     REJECT; nothing recorded
   */
  DedupResult claim(ParsedEvent e) {
    final long now = clock.nowMs();
    DedupResult held = inFlightIfClaimed(e, now);
    if (held != null) {
      return held;
    }
    boolean unvouched = e.eventTimeMs != ParsedEvent.NO_EVENT_TIME && unvouched(e.eventTimeMs, now);
    DedupWindow.Entry entry = remembered(e);
    if (entry != null) {
      return seen(entry, conflicts(entry, e.payloadHash), now);
    }
    if (unvouched && unvouchedPolicy == UnvouchedPolicy.UNKNOWN) {
      unknownCount++;
      return unknown;
    }
    long leaseMs = e.leaseMs != 0 ? e.leaseMs : defaultLeaseMs;
    long leaseEndMs = now + leaseMs;
    long token = leaseMs == defaultLeaseMs ? newToken(leaseEndMs) : randomToken();
    Claim c = new Claim(e.idFp, e.keyFp, e.payloadHash, e.rememberUntilMs, Long.toHexString(token), token,
        tokenLeaseEndMs(token) == leaseEndMs, now, leaseEndMs, e.claimer);
    requireRoom(c.entries());
    claimsById.put(c.idFp, c);
    if (c.keyFp != 0) {
      claimsByKey.put(c.keyFp, c);
    }
    reserved += c.entries();
    queueForSweep(c);
    claimCount++;
    acceptedCount++;
    if (unvouched) {
      unvouchedCount++;
    }
    lastWrite = journal.claimed(c.idFp, c.keyFp, c.payloadHash, c.token, now, c.leaseEndMs, c.rememberUntilMs,
        c.claimer);
    return new DedupResult(DedupVerdict.ACCEPTED, partition, c.token, DedupResult.NO_TIME, DedupResult.NO_TIME,
        DedupResult.NO_TIME, unvouched);
  }

  /**
   * {@code commit}: the claimed id (and key) enters the window. Repeating a commit is harmless: the same commit (id
   * and token) repeated while the claim's lease runs answers COMMITTED again, also once the id is no longer remembered
   * (a {@code rememberUntilMs} before the lease end, or early eviction), since that commit took effect.
   *
   * @param e the validated event (id and claimToken)
   * @return COMMITTED
   * @throws RequestFailure 409 if the id is not claimed, the token differs, or the lease ran out
   */
  DedupResult commit(ParsedEvent e) {
    final long now = clock.nowMs();
    Claim c = claimFor(e, now, "commit");
    if (c == null) {
      return committed;
    }
    long until = c.rememberUntilMs;
    boolean remember = until == DedupWindow.DEFAULT_REMEMBER_UNTIL || until > now;
    if (remember) {
      // The claim reserved these entries, and kept every other request for the id (or key) out of the window.
      window.check(c.idFp, c.payloadHash, until);
      if (c.keyFp != 0) {
        rememberKey(c.keyFp, c.payloadHash, until);
      }
    }
    c.committed = true;
    remove(c);
    if (!c.indexed) {
      committedUnindexed.put(c.idFp, c);
    }
    commitCount++;
    lastWrite = journal.committed(c.idFp, c.keyFp, c.payloadHash, now, remember ? expiresAt(until, now) : now);
    return committed;
  }

  /**
   * {@code commitBatch}: {@link #commit} of each event in order, each answered on its own: a 409 of one (its claim
   * lapsed, is not held, or has another token) is that element's failure, and the others are committed. Each commit
   * is journaled as a single commit is, so {@link #lastWrite} covers the whole batch. O(events).
   *
   * @param events the validated events (id and claimToken each)
   * @return one result per event, in order
   */
  DedupCommitResult[] commitBatch(ParsedEvent[] events) {
    DedupCommitResult[] out = new DedupCommitResult[events.length];
    for (int i = 0; i < events.length; i++) {
      try {
        out[i] = DedupCommitResult.committed(commit(events[i]));
      } catch (RequestFailure f) {
        out[i] = DedupCommitResult.failed(f.code(), f.getMessage());
      }
    }
    return out;
  }

  /**
   * {@code release}: the claimed id (and key) is forgotten, so a redelivery is accepted.
   *
   * @param e the validated event (id and claimToken)
   * @return RELEASED
   * @throws RequestFailure 409 if the id is not claimed, the token differs, or the lease ran out
   */
  DedupResult release(ParsedEvent e) {
    final long now = clock.nowMs();
    Claim c = claimFor(e, now, "release");
    if (c == null) {
      throw RequestFailure.stateConflict("the claim this claimToken names was committed: a committed claim cannot be"
          + " released");
    }
    remove(c);
    releaseCount++;
    lastWrite = journal.released(c.idFp, c.keyFp);
    return released;
  }

  /**
   * Releases, at once, every live claim held by {@code claimer}: a restarted claimer (a Kafka consumer with the same
   * instance id) gives back the claims its previous run left open when it died, instead of letting their records
   * wait out the leases. Each is journaled as a release (so a replay agrees) and counted in {@code releases}; a
   * lapsed one is forgotten and counted in {@code expiredLeases} as usual. Claims of other claimers, and claims that
   * named nobody, are left to their leases. O(live claims).
   *
   * <p>Only the claimer knows that it has restarted: call this before the claimer claims anything in its new run,
   * or it releases its own live claims too.
   *
   * @param claimer the claimer whose claims are orphaned; not null
   * @return the number of claims released
   */
  int releaseClaimsOf(String claimer) {
    Objects.requireNonNull(claimer, "claimer");
    final long now = clock.nowMs();
    if (claimsById.isEmpty()) {
      return 0;
    }
    List<Claim> mine = new ArrayList<>();
    for (Claim c : claimsById.values()) {
      if (claimer.equals(c.claimer)) {
        mine.add(c);
      }
    }
    int released = 0;
    for (Claim c : mine) {
      if (c.expiredAt(now)) {
        expire(c);
        continue;
      }
      remove(c);
      releaseCount++;
      released++;
      lastWrite = journal.released(c.idFp, c.keyFp);
    }
    return released;
  }

  /**
   * {@code lookup}: what is known of the id (or, if the id is unknown, of the key). Records nothing.
   *
   * @param e the validated event
   * @return the state and times
   */
  DedupLookup lookup(ParsedEvent e) {
    final long now = clock.nowMs();
    Claim c = claimsById.isEmpty() ? null : liveClaim(e, now);
    if (c != null) {
      return new DedupLookup(EntryState.IN_FLIGHT, partition, c.claimedAtMs, c.leaseEndMs);
    }
    DedupWindow.Entry entry = remembered(e);
    if (entry != null) {
      return new DedupLookup(EntryState.REMEMBERED, partition, entry.firstSeenMs(), entry.expiresAtMs());
    }
    return new DedupLookup(EntryState.ABSENT, partition, DedupResult.NO_TIME, DedupResult.NO_TIME);
  }

  /**
   * A batch: the same results as single calls in order (a repeat inside the batch is a duplicate), each event
   * answered on its own. A new event that a full window refuses (503 under REJECT, or a table that cannot grow) is
   * that element's failure, with nothing recorded for it, and the others are decided: remembered and claimed ids need
   * no room (see Room above).
   *
   * @param events validated events
   * @param claims true for {@code claimBatch}, false for {@code checkBatch}
   * @return one element per event, in order: its result, or its 503
   */
  DedupBatchResult[] batch(ParsedEvent[] events, boolean claims) {
    journal.beginBatch();
    try {
      return decideBatch(events, claims);
    } finally {
      // Writes what the batch buffered (its accepts as one record) and settles the futures handed out meanwhile.
      journal.endBatch();
    }
  }

  private DedupBatchResult[] decideBatch(ParsedEvent[] events, boolean claims) {
    DedupBatchResult[] out = new DedupBatchResult[events.length];
    if (claims || !claimsById.isEmpty()) {
      // One event at a time (claims are involved), but the window slots of a group are read first, so that their
      // cache misses overlap rather than each decision waiting for its own (as the batch check does inside).
      for (int group = 0; group < events.length; group += DedupWindow.PREFETCH_GROUP) {
        int end = Math.min(events.length, group + DedupWindow.PREFETCH_GROUP);
        for (int i = group; i < end; i++) {
          window.prefetch(events[i].idFp);
          if (events[i].keyFp != 0) {
            window.prefetch(events[i].keyFp);
          }
        }
        for (int i = group; i < end; i++) {
          out[i] = decideOne(events[i], claims);
        }
      }
      return out;
    }
    // No claim can be involved (a check creates none): runs of plain events go through the window's batch check,
    // which overlaps their cache misses; an event with a key, payload hash or instant takes the single path. An
    // event time the partition vouches for (and that is not late) changes nothing, so it stays plain: the Kafka
    // consumer sends every record's timestamp. Vouched for as of the batch's start: an early eviction inside the batch
    // (EVICT_OLDEST) moves the memory's start only for the batches after it.
    long plainFromMs = Math.max(vouchedFromMs(), clock.nowMs() - windowMs);
    int i = 0;
    while (i < events.length) {
      if (!plain(events[i], plainFromMs)) {
        out[i] = decideOne(events[i], false);
        i++;
        continue;
      }
      int end = i + 1;
      while (end < events.length && plain(events[end], plainFromMs)) {
        end++;
      }
      checkPlainRun(events, i, end, out);
      i = end;
    }
    return out;
  }

  /**
   * An event the window's batch check can decide: id only, default expiry, no payload hash, and no event time or one
   * from {@code plainFromMs} on (vouched for, and not a late delivery: {@link #check} would not look at it).
   */
  private static boolean plain(ParsedEvent e, long plainFromMs) {
    return e.keyFp == 0 && e.payloadHash == DedupWindow.NO_PAYLOAD_HASH
        && (e.eventTimeMs == ParsedEvent.NO_EVENT_TIME || e.eventTimeMs >= plainFromMs)
        && e.rememberUntilMs == DedupWindow.DEFAULT_REMEMBER_UNTIL;
  }

  /** {@link #check} or {@link #claim} of one event of a batch; a refusal for want of room is its element. */
  private DedupBatchResult decideOne(ParsedEvent e, boolean claim) {
    try {
      DedupResult r = claim ? claim(e) : check(e);
      return r == accepted ? acceptedElement : DedupBatchResult.decided(r);
    } catch (RequestFailure f) {
      return DedupBatchResult.failed(f.code(), f.getMessage());
    } catch (WindowFullException full) {
      return windowFull(full);
    }
  }

  /** The element of an event the window itself refused (its cap under REJECT, or a table that cannot grow). */
  private DedupBatchResult windowFull(WindowFullException full) {
    return DedupBatchResult.failed(DedupFailure.UNAVAILABLE, "partition " + partition + " window full"
        + " (maxIdsPerPartition=" + maxIds + "): " + full.getMessage() + "; nothing recorded for this event, retry"
        + " later");
  }

  /**
   * Decides a run of plain events with the window's batch check. No claim is live here, so the window's own cap is
   * the only limit: when it refuses a new id, the window has written the verdicts before it and no other, that event
   * is refused and the rest of the run is decided one by one.
   */
  private void checkPlainRun(ParsedEvent[] events, int from, int to, DedupBatchResult[] out) {
    int n = to - from;
    if (runFingerprints.length < n) {
      runFingerprints = new long[n];
      runVerdicts = new Verdict[n];
    }
    for (int k = 0; k < n; k++) {
      runFingerprints[k] = events[from + k].idFp;
    }
    // Empty slots mark the verdicts the window did not write, should it refuse an event.
    Arrays.fill(runVerdicts, 0, n, null);
    final long now = clock.nowMs();
    int decided = n;
    WindowFullException refused = null;
    try {
      window.checkBatch(runFingerprints, 0, n, runVerdicts);
    } catch (WindowFullException full) {
      refused = full;
      // The verdicts written are those before the refused event: the first slot left empty is the refused one.
      decided = 0;
      while (runVerdicts[decided] != null) {
        decided++;
      }
    }
    for (int k = 0; k < decided; k++) {
      long fp = runFingerprints[k];
      Verdict v = runVerdicts[k];
      if (v == Verdict.ACCEPTED) {
        acceptedCount++;
        lastWrite = journal.accepted(fp, 0, DedupWindow.NO_PAYLOAD_HASH, now, now + windowMs);
        out[from + k] = acceptedElement;
      } else {
        out[from + k] = DedupBatchResult.decided(seen(window.lookup(fp), v == Verdict.CONFLICT, now));
      }
    }
    if (refused != null) {
      out[from + decided] = windowFull(refused);
      for (int k = decided + 1; k < n; k++) {
        out[from + k] = decideOne(events[from + k], false);
      }
    }
  }

  /**
   * Forgets every claim whose lease has ended, counting each in {@code expiredLeases}, and every committed claim
   * whose lease has ended (a repeated commit of it is then a 409). O(claims whose lease ended since the last sweep,
   * including committed, released and already-noticed ones), not O(live claims): see {@link #leaseOrder}.
   *
   * @return the number of live claims forgotten now
   */
  int sweepExpiredLeases() {
    final long now = clock.nowMs();
    return sweep(leaseOrder, now) + sweep(leaseOrderLate, now);
  }

  private int sweep(ClaimQueue queue, long now) {
    int n = 0;
    while (!queue.isEmpty() && queue.firstLeaseEndMs() <= now) {
      Claim c = queue.pollFirst();
      if (c != null) {
        n += forgetAtLeaseEnd(c);
      }
    }
    return n;
  }

  private int sweep(Queue<Claim> queue, long now) {
    int n = 0;
    for (Claim c = queue.peek(); c != null && c.expiredAt(now); c = queue.peek()) {
      n += forgetAtLeaseEnd(queue.poll());
    }
    return n;
  }

  /** @return 1 if {@code c} was still a live claim (now expired), else 0 */
  private int forgetAtLeaseEnd(Claim c) {
    if (claimsById.get(c.idFp) == c) {
      remove(c);
      expiredLeases++;
      return 1;
    }
    if (c.committed && !c.indexed && committedUnindexed.get(c.idFp) == c) {
      committedUnindexed.remove(c.idFp);
    }
    return 0;
  }

  /** Appends a new claim to the sweep's queue (see {@link #leaseOrder}). */
  private void queueForSweep(Claim c) {
    if (c.leaseEndMs >= leaseOrder.lastLeaseEndMs()) {
      c.queueSeq = leaseOrder.addLast(c);
      c.indexed = c.tokenHasLeaseEnd;
    } else {
      leaseOrderLate.add(c);
    }
  }

  /** @return the earliest event time this partition can vouch for now (clock ms) */
  long vouchedFromMs() {
    return Math.max(window.memoryStartMs(), memoryBeganMs);
  }

  /** @return the live claims held now (lapsed ones not yet noticed included) */
  int claimsHeld() {
    return claimsById.size();
  }

  /** @return claim objects the lease-ordered queue still holds (live claims, and committed ones it must keep); tests */
  int queuedClaimObjects() {
    return leaseOrder.claimsHeld();
  }

  /** @return the window's counters now */
  WindowStats windowStats() {
    return window.stats();
  }

  /**
   * The counters of this partition as the {@code stats} reply.
   *
   * @return a new JSON object
   */
  JsonObject statsJson() {
    WindowStats w = window.stats();
    return new JsonObject()
        .put("partition", partition)
        .put("accepted", acceptedCount)
        .put("duplicates", duplicateCount)
        .put("conflicts", conflictCount)
        .put("inFlight", inFlightCount)
        .put("unknown", unknownCount)
        .put("unvouched", unvouchedCount)
        .put("lateDeliveries", lateDeliveries)
        .put("claims", claimCount)
        .put("commits", commitCount)
        .put("releases", releaseCount)
        .put("expiredLeases", expiredLeases)
        .put("claimsHeld", claimsById.size())
        .put("held", w.held())
        .put("expired", w.expired())
        .put("earlyEvictions", w.earlyEvictions())
        .put("rejected", w.rejected() + capacityRejects)
        .put("keysNotRecorded", keysNotRecorded)
        .put("tableBytes", w.tableBytes())
        .put("bytesPerHeldId", w.bytesPerHeldId())
        .put("vouchedFromMs", vouchedFromMs())
        .put("windowMs", windowMs)
        .put("bucketMs", window.bucket().toMillis());
  }

  // Recovery (called on the partition's context by the journal) ---------------------------------------------------

  void restore(long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs) {
    window.restore(fingerprint, payloadHash, firstSeenMs, expiresAtMs);
  }

  void restoreBatch(long[] fingerprints, long[] payloadHashes, long[] firstSeenMs, long[] expiresAtMs, int length) {
    window.restoreBatch(fingerprints, payloadHashes, firstSeenMs, expiresAtMs, length);
  }

  void restoreClaim(long idFp, long keyFp, long payloadHash, String token, long claimedAtMs, long leaseEndMs,
      long rememberUntilMs, String claimer) {
    if (leaseEndMs <= clock.nowMs() || claimsById.containsKey(idFp)) {
      return;
    }
    // Found through the map once committed: a token written by an earlier run may name another lease length.
    Claim c = new Claim(idFp, keyFp, payloadHash, rememberUntilMs, token, parseToken(token), false, claimedAtMs,
        leaseEndMs, claimer);
    claimsById.put(idFp, c);
    if (keyFp != 0) {
      claimsByKey.put(keyFp, c);
    }
    reserved += c.entries();
    queueForSweep(c);
  }

  void memoryBegins(long ms) {
    memoryBeganMs = ms;
  }

  // ---------------------------------------------------------------------------------------------------------------

  private Claim liveClaim(ParsedEvent e, long now) {
    Claim c = claimsById.get(e.idFp);
    if (c != null && c.expiredAt(now)) {
      expire(c);
      c = null;
    }
    if (c == null && e.keyFp != 0) {
      c = claimsByKey.get(e.keyFp);
      if (c != null && c.expiredAt(now)) {
        expire(c);
        c = null;
      }
    }
    return c;
  }

  /** Finds the claim a commit or release names; null if the id is not claimed but is remembered. */
  private Claim claimFor(ParsedEvent e, long now, String action) {
    Claim c = claimsById.get(e.idFp);
    if (c != null && c.expiredAt(now)) {
      expire(c);
      throw RequestFailure.stateConflict("the lease of the claim of id ran out at " + c.leaseEndMs + " (now "
          + now + "); cannot " + action + " it: claim it again");
    }
    if (c == null) {
      if (committedClaim(e, now)) {
        // The same commit again: answered as the first one was, whether or not the id is still remembered (its
        // remember-until may have passed, or the window evicted it early): that commit took effect.
        return null;
      }
      throw RequestFailure.stateConflict("id is not claimed (never claimed, already released, committed with "
          + "another token, or its lease ran out); cannot " + action + " it");
    }
    if (!c.token.equals(e.claimToken)) {
      throw RequestFailure.stateConflict("claimToken does not match the claim of id; cannot " + action + " it");
    }
    return c;
  }

  private void expire(Claim c) {
    remove(c);
    expiredLeases++;
  }

  private void remove(Claim c) {
    claimsById.remove(c.idFp);
    if (c.keyFp != 0) {
      claimsByKey.remove(c.keyFp);
    }
    reserved -= c.entries();
    if (c.queueSeq >= 0) {
      // The queue keeps the numbers a repeated commit is found by; the claim object only where the sweep still needs
      // it at lease end (a committed claim that committedUnindexed holds until then).
      leaseOrder.detach(c.queueSeq, c.committed && c.indexed, c.committed && !c.indexed);
    }
  }

  /**
   * Records the key of an event whose id was just recorded. The room for both was checked first; should the table
   * still be unable to grow, the id stays recorded and the event accepted (refusing it now would make its retry a
   * duplicate of an effect that never ran), and the key alone is not remembered: counted in {@code keysNotRecorded}.
   */
  private void rememberKey(long keyFp, long payloadHash, long rememberUntilMs) {
    try {
      window.check(keyFp, payloadHash, rememberUntilMs);
    } catch (WindowFullException full) {
      keysNotRecorded++;
    }
  }

  private DedupWindow.Entry remembered(ParsedEvent e) {
    DedupWindow.Entry entry = window.lookup(e.idFp);
    if (entry == null && e.keyFp != 0) {
      entry = window.lookup(e.keyFp);
    }
    return entry;
  }

  private static boolean conflicts(DedupWindow.Entry entry, long payloadHash) {
    return payloadHash != DedupWindow.NO_PAYLOAD_HASH && entry.payloadHash() != DedupWindow.NO_PAYLOAD_HASH
        && entry.payloadHash() != payloadHash;
  }

  private DedupResult seen(DedupWindow.Entry entry, boolean conflict, long now) {
    if (entry == null) {
      // Cannot happen: the window just answered that the id is remembered. Report the verdict without times.
      duplicateCount++;
      return DedupResult.of(DedupVerdict.DUPLICATE, partition);
    }
    long age = now - entry.firstSeenMs();
    if (conflict) {
      conflictCount++;
    } else {
      duplicateCount++;
      duplicateAges.accept(age);
    }
    return new DedupResult(conflict ? DedupVerdict.CONFLICT : DedupVerdict.DUPLICATE, partition, null,
        entry.firstSeenMs(), age, entry.expiresAtMs(), false);
  }

  private DedupResult inFlight(Claim c, long now) {
    inFlightCount++;
    return new DedupResult(DedupVerdict.IN_FLIGHT, partition, null, c.claimedAtMs, now - c.claimedAtMs,
        c.leaseEndMs, false);
  }

  private boolean unvouched(long eventTimeMs, long now) {
    if (eventTimeMs < now - windowMs) {
      lateDeliveries++;
    }
    return eventTimeMs < vouchedFromMs();
  }

  /** @return true if {@code entries} more fit beside the entries held and reserved (always, unless REJECT) */
  private boolean hasRoom(long entries) {
    return !reject || window.held() + reserved + entries <= maxIds;
  }

  /** Refuses a new event for which there is no room; called only once the event is known to be new. */
  private void requireRoom(long entries) {
    if (!hasRoom(entries)) {
      long held = window.held();
      capacityRejects++;
      throw RequestFailure.unavailable("window full: partition " + partition + " holds " + held + " entries and "
          + reserved + " reserved by claims, maxIdsPerPartition=" + maxIds + " (capacityPolicy=REJECT); "
          + entries + " more refused, nothing recorded; retry later");
    }
  }

  private long expiresAt(long rememberUntilMs, long now) {
    return rememberUntilMs == DedupWindow.DEFAULT_REMEMBER_UNTIL ? now + windowMs : rememberUntilMs;
  }

  /**
   * Whether {@code e} names, by id and token, a claim committed while its lease still runs: found by the lease end its
   * token encodes in {@link #leaseOrder}, else in {@link #committedUnindexed}. O(log claims in lease).
   */
  private boolean committedClaim(ParsedEvent e, long now) {
    Claim done = committedUnindexed.isEmpty() ? null : committedUnindexed.get(e.idFp);
    if (done != null && done.expiredAt(now)) {
      committedUnindexed.remove(e.idFp);
      done = null;
    }
    if (done != null && done.token.equals(e.claimToken)) {
      return true;
    }
    long token = parseToken(e.claimToken);
    if (token == 0) {
      return false;
    }
    long leaseEndMs = tokenLeaseEndMs(token);
    if (leaseEndMs <= now) {
      return false;
    }
    // The queue keeps the token as a number; the text must be the one issued (parsing also takes upper case).
    return leaseOrder.findCommitted(leaseEndMs, e.idFp, token) && Long.toHexString(token).equals(e.claimToken);
  }

  /**
   * A new token of a claim with the default lease (see Claim tokens above): its lease end and the next sequence
   * number, or, if the lease end does not fit in {@value #TOKEN_LEASE_BITS} bits, a {@link #randomToken}.
   */
  private long newToken(long leaseEndMs) {
    if (leaseEndMs < 0 || leaseEndMs >= 1L << TOKEN_LEASE_BITS) {
      return randomToken();
    }
    return Long.MIN_VALUE | leaseEndMs << TOKEN_SEQUENCE_BITS | (tokenSequence++ & TOKEN_SEQUENCE_MASK);
  }

  /** @return a token of 63 random bits (and the top bit), which names no lease end */
  private long randomToken() {
    return Long.MIN_VALUE | tokens.nextLong();
  }

  /** @return the lease end a token names (meaningless for a random token) */
  private static long tokenLeaseEndMs(long token) {
    return (token & Long.MAX_VALUE) >>> TOKEN_SEQUENCE_BITS;
  }

  /** @return the token's value, or 0 if it is not 1..16 hex digits (no token this partition issued) */
  private static long parseToken(String token) {
    if (token == null || token.isEmpty() || token.length() > 16) {
      return 0;
    }
    try {
      return Long.parseUnsignedLong(token, 16);
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
