package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupLookup;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.EntryState;
import io.github.vertxdedup.UnvouchedPolicy;
import io.github.vertxdedup.impl.journal.PartitionJournal;
import io.github.vertxdedup.impl.protocol.ParsedEvent;
import io.github.vertxdedup.impl.protocol.RequestFailure;
import io.github.vertxdedup.window.CapacityPolicy;
import io.github.vertxdedup.window.DedupClock;
import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.window.Verdict;
import io.github.vertxdedup.window.WindowFullException;
import io.github.vertxdedup.window.WindowStats;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.Objects;

/**
 * The decisions of one partition: its dedup window, the verdicts, and the journal calls that record them, with no
 * event bus in sight. The claims it decides about are kept by {@link Claims}, the counters by
 * {@link PartitionCounters}. Confined to the partition's event loop (not thread-safe, no locks).
 *
 * <h2>Ids and keys</h2>
 * An event has an id and may have a business key; both are fingerprinted (separate scopes) and both are recorded in
 * the one window on accept, so an event is a duplicate if either was seen (seed 002: "dedup on both ... so a single
 * lookup can short-circuit either failure mode"). An event without a key costs one probe: {@link DedupWindow#check}.
 *
 * <h2>Claims</h2>
 * A claim holds an id (and key) outside the window until it is committed (then it enters the window), released
 * (forgotten) or its lease ends (see {@link Claims}). A live claim answers every other request for its id or key
 * IN_FLIGHT. Under {@link CapacityPolicy#REJECT} a claim reserves its window entries, so its commit never finds the
 * window full.
 *
 * <h2>Room</h2>
 * Under {@link CapacityPolicy#REJECT} only a new event needs room (its id, and its key if it has one; reserved too by
 * a claim): an id or key that is remembered or claimed is answered whether or not the window is full, since answering
 * it records nothing. So room is demanded after the lookup, never before it, and a batch is decided event by event: a
 * new event the full window refuses is that element's 503 ({@link DedupBatchResult}), and the others are decided.
 *
 * <h2>Time</h2>
 * Every instant is the injected clock's. A claim's lease ends at {@code claim time + leaseMs}; an accepted id is
 * remembered until {@code rememberUntilMs} or {@code now + windowMs} (bucket precision, see {@link DedupWindow}).
 * A committed claim is remembered from its commit. An event whose {@code eventTimeMs} is older than
 * {@link #vouchedFromMs()} and whose id is not remembered is {@link DedupVerdict#UNKNOWN} (or accepted unvouched).
 */
final class PartitionCore {

  private static final Future<Void> DONE = Future.succeededFuture();

  private final int partition;
  private final DedupClock clock;
  private final DedupWindow window;
  private final long windowMs;
  private final long maxIds;
  private final boolean reject;
  private final UnvouchedPolicy unvouchedPolicy;
  private final PartitionJournal journal;
  private final PartitionCounters counters;
  private final Claims claims;
  private long memoryBeganMs;
  private Future<?> lastWrite = DONE;
  private final BatchDecider batches;

  private final DedupResult accepted;
  /** {@link #accepted} as a batch element, shared like it. */
  private final DedupBatchResult acceptedElement;
  private final DedupResult acceptedUnvouched;
  private final DedupResult unknown;
  private final DedupResult committed;
  private final DedupResult released;

  /**
   * A core with counters of its own (tests, benchmarks).
   *
   * @param options validated options
   * @param partition the partition's number
   * @param clock the clock of the window and the leases
   * @param journal where decisions are recorded
   */
  PartitionCore(DedupOptions options, int partition, DedupClock clock, PartitionJournal journal) {
    this(options, partition, clock, journal, new PartitionCounters());
  }

  /**
   * @param options validated options
   * @param partition the partition's number
   * @param clock the clock of the window and the leases
   * @param journal where decisions are recorded
   * @param counters the partition's counters, shared with the cores that replace this one after a journal reopen
   */
  PartitionCore(DedupOptions options, int partition, DedupClock clock, PartitionJournal journal,
      PartitionCounters counters) {
    this.partition = partition;
    this.counters = counters;
    this.claims = new Claims(options.getLeaseMs(), counters);
    this.clock = clock;
    this.journal = journal;
    this.windowMs = options.getWindowMs();
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
    this.batches = new BatchDecider(this, journal, clock, partition, windowMs, maxIds);
  }

  /** @return the latest journal write issued; a reply decided now must wait for it */
  Future<?> lastWrite() {
    return lastWrite;
  }

  /** @return the claims this core decides about */
  Claims claims() {
    return claims;
  }

  /** @return {@code IN_FLIGHT} when a live claim holds the event's id or key, else null */
  private DedupResult inFlightIfClaimed(ParsedEvent e, long now) {
    if (claims.isEmpty()) {
      return null;
    }
    Claim c = claims.live(e, now);
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
    if (e.keyFp == 0 && !unvouched && (claims.reserved() == 0 || hasRoom(1))) {
      Verdict v = window.check(e.idFp, e.payloadHash, e.rememberUntilMs);
      if (v == Verdict.ACCEPTED) {
        counters.accepted++;
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
      counters.unknown++;
      return unknown;
    }
    requireRoom(e.keyFp != 0 ? 2 : 1);
    window.check(e.idFp, e.payloadHash, e.rememberUntilMs);
    if (e.keyFp != 0) {
      rememberKey(e.keyFp, e.payloadHash, e.rememberUntilMs);
    }
    counters.accepted++;
    lastWrite = journal.accepted(e.idFp, e.keyFp, e.payloadHash, now, expiresAt(e.rememberUntilMs, now));
    if (unvouched) {
      counters.unvouched++;
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
      counters.unknown++;
      return unknown;
    }
    Claim c = claims.create(e, now);
    requireRoom(c.entries());
    claims.hold(c);
    counters.claims++;
    counters.accepted++;
    if (unvouched) {
      counters.unvouched++;
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
    Claim c = claims.named(e, now, "commit");
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
    claims.committed(c);
    counters.commits++;
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
    Claim c = claims.named(e, now, "release");
    if (c == null) {
      throw RequestFailure.stateConflict("the claim this claimToken names was committed: a committed claim cannot be"
          + " released");
    }
    claims.released(c);
    counters.releases++;
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
    if (claims.isEmpty()) {
      return 0;
    }
    return claims.releaseAllOf(claimer, now, c -> {
      counters.releases++;
      lastWrite = journal.released(c.idFp, c.keyFp);
    });
  }

  /**
   * {@code lookup}: what is known of the id (or, if the id is unknown, of the key). Records nothing.
   *
   * @param e the validated event
   * @return the state and times
   */
  DedupLookup lookup(ParsedEvent e) {
    final long now = clock.nowMs();
    Claim c = claims.isEmpty() ? null : claims.live(e, now);
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
   * no room (see Room above). See {@link BatchDecider}.
   *
   * @param events validated events
   * @param claiming true for {@code claimBatch}, false for {@code checkBatch}
   * @return one element per event, in order: its result, or its 503
   */
  DedupBatchResult[] batch(ParsedEvent[] events, boolean claiming) {
    return batches.decide(events, claiming);
  }

  /**
   * A result of {@link #check} or {@link #claim} as the element of a batch.
   *
   * @param r the result
   * @return its element; the shared one for the shared ACCEPTED
   */
  DedupBatchResult element(DedupResult r) {
    return r == accepted ? acceptedElement : DedupBatchResult.decided(r);
  }

  /**
   * Completes the decision the window's batch check gave a plain event (id only, default expiry, no payload hash,
   * vouched for): an accept is counted and journaled as {@link #check} does, a repeat answered as seen.
   *
   * @param fp the event's id fingerprint
   * @param v the window's verdict
   * @param now the clock's reading, ms
   * @return the event's element
   */
  DedupBatchResult decidedPlain(long fp, Verdict v, long now) {
    if (v == Verdict.ACCEPTED) {
      counters.accepted++;
      lastWrite = journal.accepted(fp, 0, DedupWindow.NO_PAYLOAD_HASH, now, now + windowMs);
      return acceptedElement;
    }
    return DedupBatchResult.decided(seen(window.lookup(fp), v == Verdict.CONFLICT, now));
  }

  /** @return the window; for {@link BatchDecider}, which reads and checks it in runs */
  DedupWindow window() {
    return window;
  }

  /**
   * Forgets every claim whose lease has ended (see {@link Claims#sweepExpiredLeases}).
   *
   * @return the number of live claims forgotten now
   */
  int sweepExpiredLeases() {
    return claims.sweepExpiredLeases(clock.nowMs());
  }

  /** @return the earliest event time this partition can vouch for now (clock ms) */
  long vouchedFromMs() {
    return Math.max(window.memoryStartMs(), memoryBeganMs);
  }

  /** @return the live claims held now (lapsed ones not yet noticed included) */
  int claimsHeld() {
    return claims.held();
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
    return counters.decisionsJson(partition, window.stats(), claims.held(), vouchedFromMs(), windowMs,
        window.bucket().toMillis());
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
    claims.restore(idFp, keyFp, payloadHash, token, claimedAtMs, leaseEndMs, rememberUntilMs, claimer,
        clock.nowMs());
  }

  void memoryBegins(long ms) {
    memoryBeganMs = ms;
  }

  // ---------------------------------------------------------------------------------------------------------------

  /**
   * Records the key of an event whose id was just recorded. The room for both was checked first; should the table
   * still be unable to grow, the id stays recorded and the event accepted (refusing it now would make its retry a
   * duplicate of an effect that never ran), and the key alone is not remembered: counted in {@code keysNotRecorded}.
   */
  private void rememberKey(long keyFp, long payloadHash, long rememberUntilMs) {
    try {
      window.check(keyFp, payloadHash, rememberUntilMs);
    } catch (WindowFullException full) {
      counters.keysNotRecorded++;
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
      counters.duplicates++;
      return DedupResult.of(DedupVerdict.DUPLICATE, partition);
    }
    long age = now - entry.firstSeenMs();
    if (conflict) {
      counters.conflicts++;
    } else {
      counters.duplicate(age);
    }
    return new DedupResult(conflict ? DedupVerdict.CONFLICT : DedupVerdict.DUPLICATE, partition, null,
        entry.firstSeenMs(), age, entry.expiresAtMs(), false);
  }

  private DedupResult inFlight(Claim c, long now) {
    counters.inFlight++;
    return new DedupResult(DedupVerdict.IN_FLIGHT, partition, null, c.claimedAtMs, now - c.claimedAtMs,
        c.leaseEndMs, false);
  }

  private boolean unvouched(long eventTimeMs, long now) {
    if (eventTimeMs < now - windowMs) {
      counters.lateDeliveries++;
    }
    return eventTimeMs < vouchedFromMs();
  }

  /** @return true if {@code entries} more fit beside the entries held and reserved (always, unless REJECT) */
  private boolean hasRoom(long entries) {
    return !reject || window.held() + claims.reserved() + entries <= maxIds;
  }

  /**
   * The message of a refusal by the window itself (its cap under REJECT, or a table that cannot grow), for a single
   * request's 503 and a batch element's alike.
   *
   * @param partition the partition
   * @param maxIds its {@code maxIdsPerPartition}
   * @param full the window's refusal
   * @return the message
   */
  static String windowFullMessage(int partition, long maxIds, WindowFullException full) {
    return "partition " + partition + " window full (maxIdsPerPartition=" + maxIds + "): " + full.getMessage()
        + "; nothing recorded, retry later";
  }

  /** Refuses a new event for which there is no room; called only once the event is known to be new. */
  private void requireRoom(long entries) {
    if (!hasRoom(entries)) {
      long held = window.held();
      counters.capacityRejects++;
      throw RequestFailure.unavailable("window full: partition " + partition + " holds " + held + " entries and "
          + claims.reserved() + " reserved by claims, maxIdsPerPartition=" + maxIds + " (capacityPolicy=REJECT); "
          + "this event needs " + entries + " more (its id, and its key if it has one), nothing recorded; retry later");
    }
  }

  private long expiresAt(long rememberUntilMs, long now) {
    return rememberUntilMs == DedupWindow.DEFAULT_REMEMBER_UNTIL ? now + windowMs : rememberUntilMs;
  }
}
