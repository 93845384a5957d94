package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.window.PreparedRestore;
import io.github.vertxdedup.window.TableOrderedEntries;
import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupLookup;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.EntryState;
import io.github.vertxdedup.UncoveredPolicy;
import io.github.vertxdedup.UnvouchedPolicy;
import io.github.vertxdedup.impl.journal.PartitionJournal;
import io.github.vertxdedup.impl.protocol.ParsedEvent;
import io.github.vertxdedup.impl.protocol.RequestFailure;
import io.github.vertxdedup.window.CapacityPolicy;
import io.github.vertxdedup.time.DedupClock;
import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.window.WindowVerdict;
import io.github.vertxdedup.window.WindowStats;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * The decisions of one partition, with no event bus in sight: whether an event is new, held by a claim, remembered
 * or beyond what the partition covers, and what a commit or release does. It owns the partition's window and
 * decides; its parts do the rest: {@link Claims} keeps the claims, {@link WindowRoom} says whether a new event fits,
 * {@link PartitionRecorder} writes a decision into the window and the journal, {@link PartitionResults} makes (and
 * counts) the answers, and {@link BatchDecider} decides a batch with the outcomes of single requests. Confined to the
 * partition's event loop (not thread-safe, no locks).
 *
 * <h2>Ids and keys</h2>
 * An event has an id and may have a business key; both are fingerprinted (separate scopes) and both are recorded in
 * the one window on accept, so an event is a duplicate if either was seen: a redelivered event repeats its id, a
 * business operation sent again under a new id repeats its key, and one lookup in the one window catches either. An
 * event without a key costs one probe: {@link DedupWindow#check}.
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
 * it records nothing. So room is demanded ({@link WindowRoom}) after the lookup, never before it, and a batch is
 * decided event by event: a new event the full window refuses is that element's 503 ({@link DedupBatchResult}), and
 * the others are decided.
 *
 * <h2>Time</h2>
 * Every instant is the injected clock's. A claim's lease ends at {@code claim time + leaseMs}; an accepted id is
 * remembered until {@code rememberUntilMs} or {@code now + windowMs} (bucket precision, see {@link DedupWindow}).
 * A committed claim is remembered from its commit. An event whose {@code eventTimeMs} is older than
 * {@link #coveredFromMs()} and whose id is not remembered is {@link DedupVerdict#UNKNOWN} (or accepted uncovered).
 *
 * <h2>Takeover</h2>
 * A core of a partition taken over from another owner without that owner's journal ({@link #takenOver}) covers from
 * the takeover, and until {@code W} has passed since, a new id is accepted marked unvouched, or refused with 503
 * under {@link UnvouchedPolicy#REFUSE}: its window cannot know what the previous owner accepted.
 */
final class PartitionCore {

  private final int partition;
  private final DedupClock clock;
  private final DedupWindow window;
  private final long windowMs;
  private final UncoveredPolicy uncoveredPolicy;
  private final UnvouchedPolicy unvouchedPolicy;
  /** New ids are unvouched before this instant (clock ms); {@link Long#MIN_VALUE}: never. */
  private long unvouchedUntilMs = Long.MIN_VALUE;
  private final PartitionCounters counters;
  private final Claims claims;
  private final PartitionRecorder recorder;
  private final PartitionResults results;
  private final WindowRoom room;
  private final BatchDecider batches;
  private long memoryBeganMs;

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
    this(options, partition, clock, journal, counters, newWindow(options, clock, null));
  }

  /**
   * A core around a window built by {@link #newWindow} (a partition builds it on a worker: a presized table is
   * allocated and zeroed there, not on its event loop).
   *
   * @param options validated options, the same the window was built from
   * @param partition the partition's number
   * @param clock the clock of the window and the leases, the same the window reads
   * @param journal where decisions are recorded
   * @param counters the partition's counters, shared with the cores that replace this one after a journal reopen
   * @param window a new, empty window from {@link #newWindow}; from now on this core's alone
   */
  PartitionCore(DedupOptions options, int partition, DedupClock clock, PartitionJournal journal,
      PartitionCounters counters, DedupWindow window) {
    this.partition = partition;
    this.counters = counters;
    this.claims = new Claims(options.getLeaseMs(), counters);
    this.clock = clock;
    this.windowMs = options.getWindowMs();
    this.uncoveredPolicy = options.getUncoveredPolicy();
    this.unvouchedPolicy = options.getUnvouchedPolicy();
    this.window = Objects.requireNonNull(window, "window");
    this.memoryBeganMs = clock.nowMs();
    this.recorder = new PartitionRecorder(window, journal, counters, windowMs);
    this.results = new PartitionResults(partition, counters);
    this.room = new WindowRoom(partition, options.getMaxIdsPerPartition(), options.getCapacityPolicy(), window, claims,
        counters);
    this.batches = new BatchDecider(this, window, journal, clock, windowMs, room, results);
  }

  /**
   * Builds the empty window of a partition: its table presized for {@code expectedIdsPerPartition} (up to 1.5 GiB,
   * allocated and zeroed here, O(table)), or, with a growth executor, left for the recovery to presize ({@link
   * DedupWindow.Builder#presizeLater}). Any thread: it touches nothing shared, and reads {@code clock} once.
   *
   * @param options validated options
   * @param clock the clock of the window
   * @param growthExecutor where the window's upkeep has its table's doublings built
   *     ({@link DedupWindow.Builder#growthExecutor}), or null: on the partition's event loop
   * @return a new, empty window
   * @throws IllegalArgumentException if the options do not make a window (validated options always do)
   */
  static DedupWindow newWindow(DedupOptions options, DedupClock clock, Executor growthExecutor) {
    return DedupWindow.builder()
        .window(Duration.ofMillis(options.getWindowMs()))
        .bucket(Duration.ofMillis(options.getEffectiveBucketMs()))
        .clock(clock)
        .maxIds(options.getMaxIdsPerPartition())
        .capacityPolicy(options.getCapacityPolicy())
        .payloadHashes(options.isPayloadHashes())
        .expectedIds(options.getExpectedIdsPerPartition())
        .growthExecutor(growthExecutor)
        // A partition with a growth pool is rebuilt by its recovery before it serves: the recovery presizes the table
        // on a worker, or a snapshot restored in place has it built on the pool while the partition already answers.
        .presizeLater(growthExecutor != null)
        .build();
  }

  /** @return the latest journal write issued; a reply decided now must wait for it */
  Future<?> lastWrite() {
    return recorder.lastWrite();
  }

  /** @return the claims this core decides about */
  Claims claims() {
    return claims;
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
    return firstSighting(e, false);
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
    return firstSighting(e, true);
  }

  /**
   * The one path of {@link #check} and {@link #claim}: an event a live claim holds is IN_FLIGHT; one the window
   * remembers is a DUPLICATE (or CONFLICT); one older than the partition covers is UNKNOWN under that policy;
   * only then is the event new, and it is accepted (check) or claimed (claim) if there is room.
   */
  private DedupResult firstSighting(ParsedEvent e, boolean claiming) {
    final long now = clock.nowMs();
    Claim held = liveClaim(e, now);
    if (held != null) {
      return results.inFlight(held, now);
    }
    boolean uncovered = e.eventTimeMs != ParsedEvent.NO_EVENT_TIME && uncovered(e.eventTimeMs, now);
    // One probe decides a plain check when the window's own cap is the only limit (no claim reserves room) or there
    // is room anyway; otherwise the lookup below comes first, so that a remembered id never needs room. An uncovered
    // event takes that probe too when its policy accepts it: it is then decided as a covered one, and only marked.
    if (!claiming && e.keyFp == 0 && (!uncovered || acceptsUncovered()) && now >= unvouchedUntilMs
        && (claims.reserved() == 0 || room.has(1))) {
      return checked(e.idFp, e.payloadHash, e.rememberUntilMs,
          window.check(e.idFp, e.payloadHash, e.rememberUntilMs), uncovered, now);
    }
    DedupWindow.Entry entry = remembered(e);
    if (entry != null) {
      return results.seen(entry, conflicts(entry, e.payloadHash), now);
    }
    if (uncovered && uncoveredPolicy == UncoveredPolicy.UNKNOWN) {
      return results.unknown();
    }
    return claiming ? hold(e, uncovered, now) : accept(e, uncovered, now);
  }

  /** Accepts a new event if there is room: its id (and key) enter the window, and the accept is journaled. */
  private DedupResult accept(ParsedEvent e, boolean uncovered, long now) {
    boolean unvouched = unvouched(now);
    room.require(e.keyFp != 0 ? 2 : 1);
    recorder.accepted(e, uncovered, now);
    return results.accepted(uncovered, unvouched);
  }

  /** Claims a new event if there is room: a claim holds its id (and key) outside the window until it ends. */
  private DedupResult hold(ParsedEvent e, boolean uncovered, long now) {
    boolean unvouched = unvouched(now);
    Claim c = claims.create(e, now);
    room.require(c.entries());
    claims.hold(c);
    recorder.claimed(c, uncovered, now);
    return results.claimed(c.token, uncovered, unvouched);
  }

  /**
   * Whether a new id accepted now is unvouched: within {@code W} after a takeover without the previous owner's
   * journal. Under {@link UnvouchedPolicy#REFUSE} such an id is refused instead.
   *
   * @param now the clock's reading, ms
   * @return true if a new id accepted now is marked unvouched
   * @throws RequestFailure 503 under {@link UnvouchedPolicy#REFUSE} within that window; nothing recorded
   */
  private boolean unvouched(long now) {
    if (now >= unvouchedUntilMs) {
      return false;
    }
    if (unvouchedPolicy == UnvouchedPolicy.REFUSE) {
      throw RequestFailure.unavailable("partition " + partition + " was taken over without its previous owner's"
          + " journal and cannot tell a new id from one accepted before the takeover until " + unvouchedUntilMs
          + " (clock ms, " + (unvouchedUntilMs - now) + " ms from now; unvouchedPolicy=REFUSE); nothing recorded,"
          + " retry later");
    }
    return true;
  }

  /**
   * @param now the clock's reading, ms
   * @return true if new ids are unvouched now (within {@code W} after a takeover without the previous owner's
   *     journal): a batch then decides every event on the single path
   */
  boolean unvouchedAt(long now) {
    return now < unvouchedUntilMs;
  }

  /**
   * Marks this core as the window of a partition taken over from another owner without that owner's journal, new
   * ids unvouched until {@code unvouchedUntilMs} (the takeover plus {@code W}, or later if the journal carried an
   * earlier takeover's mark): it covers events from {@code unvouchedUntilMs - W} on (an older event whose id is not
   * remembered gets the {@code uncoveredPolicy}), and a new id is unvouched until {@code unvouchedUntilMs}. Called
   * on each core built after the takeover (a journal reopen builds a new one).
   *
   * @param unvouchedUntilMs new ids are unvouched before this instant, clock ms
   */
  void takenOver(long unvouchedUntilMs) {
    memoryBeganMs = Math.max(memoryBeganMs, unvouchedUntilMs - windowMs);
    this.unvouchedUntilMs = unvouchedUntilMs;
  }

  /** @return the instant before which a new id is unvouched, clock ms, or {@link Long#MIN_VALUE} if none */
  long unvouchedUntilMs() {
    return unvouchedUntilMs;
  }

  /**
   * Completes a check that the window decided by itself in one probe (an event without a key, or a run of them in a
   * batch): an accept is counted and journaled, a repeat answered as seen.
   *
   * @param idFp the event's id fingerprint
   * @param payloadHash its payload hash, or {@link DedupWindow#NO_PAYLOAD_HASH}
   * @param rememberUntilMs its remember-until, or {@link DedupWindow#DEFAULT_REMEMBER_UNTIL}
   * @param v the window's verdict
   * @param uncovered true if the event is older than the partition covers (only under
   *     {@link UncoveredPolicy#ACCEPT}): an accept is marked and counted so
   * @param now the clock's reading, ms
   * @return the result; {@link PartitionResults#accepted()} for an accept
   */
  DedupResult checked(long idFp, long payloadHash, long rememberUntilMs, WindowVerdict v, boolean uncovered,
      long now) {
    if (v == WindowVerdict.ACCEPTED) {
      recorder.windowAccepted(idFp, payloadHash, rememberUntilMs, uncovered, now);
      // Not reached within the unvouched window (the single path decides then), but never unmarked if it were.
      return results.accepted(uncovered, now < unvouchedUntilMs);
    }
    return results.seen(window.lookup(idFp), v == WindowVerdict.CONFLICT, now);
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
      return results.committed();
    }
    // Into the window first: should the window refuse, the claim stays held and nothing is recorded.
    recorder.committed(c, now);
    claims.committed(c);
    return results.committed();
  }

  /**
   * {@code commitBatch}: {@link #commit} of each event in order, each answered on its own (see
   * {@link BatchDecider#commit}). O(events).
   *
   * @param events the validated events (id and claimToken each)
   * @return one result per event, in order
   */
  DedupCommitResult[] commitBatch(ParsedEvent[] events) {
    return batches.commit(events);
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
    recorder.released(c);
    return results.released();
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
    return claims.releaseAllOf(claimer, now, recorder::released);
  }

  /**
   * {@code lookup}: what is known of the id (or, if the id is unknown, of the key). Records nothing.
   *
   * @param e the validated event
   * @return the state and times
   */
  DedupLookup lookup(ParsedEvent e) {
    final long now = clock.nowMs();
    Claim c = liveClaim(e, now);
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
   * answered on its own: a new event the full window refuses is that element's 503, and the others are decided (see
   * Room above, and {@link BatchDecider}).
   *
   * @param events validated events
   * @param claiming true for {@code claimBatch}, false for {@code checkBatch}
   * @return one element per event, in order: its result, or its 503
   */
  DedupBatchResult[] batch(ParsedEvent[] events, boolean claiming) {
    return batches.decide(events, claiming);
  }

  /**
   * Forgets every claim whose lease has ended (see {@link Claims#sweepExpiredLeases}).
   *
   * @return the number of live claims forgotten now
   */
  int sweepExpiredLeases() {
    return claims.sweepExpiredLeases(clock.nowMs());
  }

  /**
   * Runs the window's upkeep ({@link DedupWindow#upkeep}): its sweep and growth, off the checks' path.
   *
   * @param maxSlots the most slots the sweep visits now
   * @return the sweep work still owed, in slots
   */
  long upkeep(long maxSlots) {
    return window.upkeep(maxSlots);
  }

  /** @return true while the window's table is being doubled on a worker ({@link DedupWindow#growing()}) */
  boolean windowGrowing() {
    return window.growing();
  }

  /** @return true if an event older than the partition covers is accepted (and marked) like a covered one */
  boolean acceptsUncovered() {
    return uncoveredPolicy == UncoveredPolicy.ACCEPT;
  }

  /** @return the earliest event time this partition covers now (clock ms) */
  long coveredFromMs() {
    return Math.max(window.memoryStartMs(), memoryBeganMs);
  }

  /** @return the core's clock now, milliseconds */
  long nowMs() {
    return clock.nowMs();
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
    return counters.decisionsJson(partition, window.stats(), claims.held(), coveredFromMs(), windowMs,
        window.bucket().toMillis());
  }

  // Recovery (called on the partition's context by the journal) ---------------------------------------------------

  void restore(long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs) {
    window.restore(fingerprint, payloadHash, firstSeenMs, expiresAtMs);
  }

  /**
   * Grows the window's table for {@code entries} entries about to be restored in table order ({@link
   * DedupWindow#reserve}). Called by the recovery's worker before the core is used by any other thread.
   *
   * @param entries the number of entries
   */
  void reserve(long entries) {
    window.reserve(entries);
  }

  /** @return true unless the window's table still needs {@link #presizeWindow()} ({@link DedupWindow#presized()}) */
  boolean windowPresized() {
    return window.presized();
  }

  /**
   * Presizes the window's table ({@link DedupWindow#presize()}): called on a worker by the recovery, while nothing
   * else uses the core.
   */
  void presizeWindow() {
    window.presize();
  }

  /**
   * Prepares a restore in place of a snapshot's entries ({@link DedupWindow#prepareRestore}): called by the recovery's
   * worker; reads only the window's configuration and clock.
   */
  PreparedRestore prepareRestore(TableOrderedEntries entries) {
    return window.prepareRestore(entries);
  }

  /** Restores a snapshot's entries in place ({@link DedupWindow#restoreInPlace}), on the partition's context. */
  boolean restoreInPlace(PreparedRestore prepared) {
    return window.restoreInPlace(prepared);
  }

  void restoreBatch(long[] fingerprints, long[] payloadHashes, long[] firstSeenMs, long[] expiresAtMs, int length) {
    window.restoreBatch(fingerprints, payloadHashes, firstSeenMs, expiresAtMs, length);
  }

  void restoreClaim(long idFp, long keyFp, long payloadHash, String token, long claimedAtMs, long leaseEndMs,
      long rememberUntilMs, String claimer) {
    claims.restore(idFp, keyFp, payloadHash, token, claimedAtMs, leaseEndMs, rememberUntilMs, claimer,
        clock.nowMs());
  }

  /**
   * Sets the instant from which this partition holds every id it must remember (see {@link #coveredFromMs()}): its
   * journal's, on recovery, or a rebuild's ({@link LocalPartition#coverFrom}).
   *
   * @param ms clock milliseconds
   */
  void memoryBegins(long ms) {
    memoryBeganMs = ms;
  }

  // ---------------------------------------------------------------------------------------------------------------

  /** @return the live claim that holds the event's id or key, else null (a lapsed one found is forgotten) */
  private Claim liveClaim(ParsedEvent e, long now) {
    return claims.isEmpty() ? null : claims.live(e, now);
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

  private boolean uncovered(long eventTimeMs, long now) {
    if (eventTimeMs < now - windowMs) {
      counters.lateDeliveries++;
    }
    return eventTimeMs < coveredFromMs();
  }
}
