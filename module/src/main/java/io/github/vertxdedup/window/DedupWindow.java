package io.github.vertxdedup.window;

import io.github.vertxdedup.time.ManualClock;

import io.github.vertxdedup.time.DedupClock;
import io.github.vertxdedup.time.Durations;

import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * A deduplication window: remembers which event ids (as 64-bit fingerprints) were accepted within the last
 * {@code W} and answers each arrival with {@link WindowVerdict#ACCEPTED} (first sighting: apply the effect),
 * {@link WindowVerdict#DUPLICATE} (drop it, still acknowledge it) or {@link WindowVerdict#CONFLICT} (same id, other payload).
 *
 * <h2>Semantics</h2>
 * Time is cut into buckets of width {@code b}; {@code W} is a whole number {@code N = W / b} of buckets
 * ({@code 1 <= N <= }{@value #MAX_BUCKETS}). An id accepted at arrival time {@code t} gets the remember-until instant
 * {@code T = t + W}, or an earlier {@code T} the caller passes (a remember-until per entry, for ids whose promise is
 * shorter than {@code W}). The rule, for both: <b>an arrival before {@code T - b} finds the id (duplicate); an
 * arrival at or after {@code T} does not (accepted again)</b>; in between either answer may come, because a whole
 * bucket expires at once. So a default entry is remembered for between {@code W - b} and {@code W}. Once forgotten
 * an id is never remembered again, and a duplicate never extends an entry's life (a broken producer cannot keep a
 * key alive).
 * Order does not matter: a late or past-stamped event is judged by its arrival time and goes to the newest bucket.
 *
 * <h2>Time</h2>
 * Arrival time is {@link DedupClock#nowMs()} of the injected clock, which in production is monotonic: a wall-clock
 * step neither wipes the window nor freezes expiry. A clock reading earlier than one already seen is treated as the
 * latest one seen. After an idle gap of {@code W} or more every entry has expired, and the window empties without
 * walking buckets or entries: it drops its table for a new one of its initial size ({@code expectedIds} stays
 * honoured; the JVM allocates the new arrays zeroed).
 *
 * <h2>Cost</h2>
 * {@link #check} is one hash probe, O(1) expected, in a flat open-addressing table (see {@code FingerprintTable}):
 * one random memory access per event. Expiry costs no random access: each slot carries its expiry bucket, expired
 * entries count as absent at once, and a sequential sweep (a fixed share of the table per elapsed bucket while the
 * table holds dead entries, paid by {@link #upkeep} between checks, or by the checks themselves a bucket after it
 * falls due) deletes them. Memory is 12 bytes per slot (20 with payload hashes) at a load of at most 3/4, so 16 to 32
 * bytes per held id as the table doubles; pass {@code expectedIds} to size it once and avoid the doubling rehash (an
 * O(table) pause) in the hot path, or a {@link Builder#growthExecutor growth executor} to have {@link #upkeep} build
 * the doublings on another thread.
 *
 * <h2>Capacity</h2>
 * At most {@code maxIds} live ids. A new id beyond that is refused with {@link WindowFullException} under
 * {@link CapacityPolicy#REJECT} (the default: fail closed), or makes room by forgetting the bucket that expires
 * soonest under {@link CapacityPolicy#EVICT_OLDEST} (counted as early evictions). Evicting is O(N), except that
 * a new id expiring no later than an evicted bucket (every held id went into its bucket, or its remember-until is
 * short) first costs one pass over the table, O(capacity), at most once per eviction.
 *
 * <h2>Thread-safety</h2>
 * Not thread-safe, by contract: one owner (a partition verticle on its event loop) calls every method, except
 * {@link #prepareRestore}, which any thread may call (it reads the window's configuration and its clock only). No
 * locks, no allocation on the {@link #check} path (except when the table grows).
 */
public final class DedupWindow {

  /** Largest bucket count {@code W / b}. Bounded because each slot stores its lifetime in 14 bits. */
  public static final int MAX_BUCKETS = FingerprintTable.MAX_LIFETIME;

  /** Passed as {@code payloadHash} when the event has none: it never conflicts. */
  public static final long NO_PAYLOAD_HASH = 0L;

  /** Passed as {@code rememberUntilMs} for the default {@code T = arrival + W}. */
  public static final long DEFAULT_REMEMBER_UNTIL = Long.MIN_VALUE;

  /**
   * Slots the sweep visits per {@link #check}, on average, while sweep work is owed: small enough to keep the cost
   * per event flat, large enough to keep up with the debt below at any rate above a few events per bucket.
   */
  private static final int SWEEP_SLOTS_PER_CHECK = 16;

  /**
   * The sweep work is paid every this many checks, {@code SWEEP_SLOTS_PER_CHECK} times as many slots at once: one
   * sequential run instead of sixteen slots per check keeps the check itself short, so the processor can start the
   * next check's (independent) table load while this one still waits for its own.
   */
  private static final int SWEEP_EVERY_CHECKS = 64;

  /**
   * The sweep owes one full pass over the table per {@code max(1, N / SWEEP_PASSES_PER_WINDOW)} elapsed buckets, so
   * dead entries stay under about 1/8 of held ones on average and are never older than a window; nothing while the
   * table holds no dead entry.
   */
  private static final int SWEEP_PASSES_PER_WINDOW = 8;

  /**
   * Ids whose home slots {@link #checkBatch} reads ahead at once (and callers of {@link #prefetch} should): enough
   * to keep the ten or so cache misses a core can have outstanding busy, few enough that the lines read are still in
   * L1/L2 when probed.
   */
  public static final int PREFETCH_GROUP = 32;

  private final DedupClock clock;
  private final long windowMs;
  private final long bucketMs;
  private final int bucketCount;
  private final long maxIds;
  private final CapacityPolicy capacityPolicy;
  private final boolean payloadHashes;
  private final int initialCapacity;
  private final int sweepPassBuckets;
  /** Where upkeep has the table's doublings built, or null: on the owner's thread, when a check needs room. */
  private final Executor growthExecutor;

  private FingerprintTable table;
  /** Live entries per expiry bucket, indexed by expiry bucket modulo {@code N + 1}. */
  private final int[] expiringAt;

  /** The latest clock reading seen: the window's now (a reading below it counts as this one). */
  private long nowMs;
  private long currentBucket;
  /** {@code currentBucket} modulo the ring length. */
  private int currentRingIndex;
  /** Start of the bucket after {@code currentBucket}, clock milliseconds: saves a division per check. */
  private long nextBucketStartMs;
  /** Keeps the read-ahead loads of {@link #checkBatch} from being optimised away. */
  private long prefetchSink;
  /**
   * Entries expiring at or before this bucket are forgotten: raised by early eviction (so that evicting a bucket
   * is O(1)), lowered back to the current bucket once the evicted entries are deleted from the table.
   */
  private long evictedThrough;
  /**
   * Every id accepted from this bucket on is still remembered (unless expired): raised by early evictions to one
   * bucket past the newest first sighting among the evicted entries, for {@link #memoryStartMs()}.
   */
  private long evictionMemoryFloor;
  /**
   * The newest first-seen bucket among the entries expiring at each bucket (same ring indexes as
   * {@code expiringAt}): an early eviction of that bucket forgets ids seen up to then. {@code Long.MIN_VALUE} = none.
   */
  private final long[] newestFirstSeenAt;
  private int threshold;
  private long sweepDebt;
  /**
   * The part of {@link #sweepDebt} added by the latest bucket step, which checks leave to {@link #upkeep} for one
   * bucket: a caller that runs upkeep between checks takes the sweep off their path, and without one the checks pay
   * it one bucket later.
   */
  private long freshSweepDebt;
  /** {@link #accepted} at the latest {@link #upkeep}: the accepts since then tell how close the next growth is. */
  private long acceptedAtUpkeep;
  private int checksUntilSweep = SWEEP_EVERY_CHECKS;

  private long held;
  private long accepted;
  private long duplicates;
  private long conflicts;
  private long expired;
  private long earlyEvictions;
  private long rejected;
  /** Doublings built by the growth executor and installed; for tests. */
  long doublingsBeside;
  /**
   * Entries restored in place ({@link #restoreInPlace}) that the table does not hold yet, or null: checks that miss in
   * the table look them up until their table, built beside the owner, is installed.
   */
  private PreparedRestore inPlace;
  /** Whether upkeep has handed {@link #inPlace}'s build to the growth executor. */
  private boolean inPlaceBuildStarted;

  private DedupWindow(Builder b, long windowMs, long bucketMs, long maxIds) {
    this.clock = b.clock;
    this.windowMs = windowMs;
    this.bucketMs = bucketMs;
    this.bucketCount = (int) (windowMs / bucketMs);
    this.maxIds = maxIds;
    this.capacityPolicy = b.capacityPolicy;
    this.payloadHashes = b.payloadHashes;
    this.initialCapacity = slotsFor(b.expectedIds, payloadHashes);
    this.sweepPassBuckets = Math.max(1, bucketCount / SWEEP_PASSES_PER_WINDOW);
    this.growthExecutor = b.growthExecutor;
    this.table = new FingerprintTable(payloadHashes, b.presizeLater ? FingerprintTable.MIN_CAPACITY : initialCapacity);
    this.expiringAt = new int[bucketCount + 1];
    this.newestFirstSeenAt = new long[bucketCount + 1];
    Arrays.fill(newestFirstSeenAt, Long.MIN_VALUE);
    this.nowMs = clock.nowMs();
    this.currentBucket = Math.floorDiv(nowMs, bucketMs);
    this.nextBucketStartMs = bucketStartMs(currentBucket + 1);
    this.currentRingIndex = (int) Math.floorMod(currentBucket, (long) expiringAt.length);
    this.evictedThrough = currentBucket;
    this.evictionMemoryFloor = Long.MIN_VALUE;
    this.threshold = FingerprintTable.threshold(currentBucket);
  }

  /**
   * Starts a builder.
   *
   * @return a new builder; {@link Builder#window(Duration)} is required
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Checks an arrival with no payload hash and the default remember-until ({@code arrival + W}); records it if it is
   * new. Same as {@code check(fingerprint, NO_PAYLOAD_HASH, DEFAULT_REMEMBER_UNTIL)}.
   *
   * @param fingerprint the id's fingerprint (see {@link Fingerprinter}); must not be 0
   * @return {@link WindowVerdict#ACCEPTED} or {@link WindowVerdict#DUPLICATE}
   * @throws IllegalArgumentException if {@code fingerprint} is 0
   * @throws WindowFullException under {@link CapacityPolicy#REJECT} when the window holds {@code maxIds} ids
   */
  public WindowVerdict check(long fingerprint) {
    return check(fingerprint, NO_PAYLOAD_HASH, DEFAULT_REMEMBER_UNTIL);
  }

  /**
   * Checks an arrival at the clock's current time and records it if it is new. O(1) expected; allocates nothing.
   *
   * @param fingerprint the id's fingerprint; must not be 0
   * @param payloadHash the payload's hash ({@link Fingerprinter#payloadHash}), or {@link #NO_PAYLOAD_HASH}. Kept with
   *     the entry only when the window was built with {@link Builder#payloadHashes(boolean) payloadHashes(true)};
   *     otherwise ignored
   * @param rememberUntilMs the instant {@code T} (clock milliseconds) from which the id is forgotten, or
   *     {@link #DEFAULT_REMEMBER_UNTIL} for {@code arrival + W}. Must satisfy {@code now < T <= now + W}
   * @return {@link WindowVerdict#ACCEPTED} if the id is not remembered (it is now, until {@code T}),
   *     {@link WindowVerdict#CONFLICT} if it is remembered with another non-zero payload hash (the first hash is kept),
   *     else {@link WindowVerdict#DUPLICATE}. Neither of the last two changes the entry
   * @throws IllegalArgumentException if {@code fingerprint} is 0, or {@code rememberUntilMs} is not after now or is
   *     beyond {@code now + W} (the message names the limit); nothing is recorded
   * @throws WindowFullException under {@link CapacityPolicy#REJECT} when the id is new and the window holds
   *     {@code maxIds} live ids; nothing is recorded
   */
  public WindowVerdict check(long fingerprint, long payloadHash, long rememberUntilMs) {
    requireFingerprint(fingerprint);
    final long bucket = advance(clock.nowMs());
    return decide(fingerprint, payloadHash, bucket, expiryBucket(nowMs, bucket, rememberUntilMs));
  }

  /**
   * Checks a batch of arrivals with no payload hash and the default remember-until, in order, with the same result
   * as calling {@link #check(long)} for each at one instant (the clock is read once): a repeat inside the batch is a
   * {@link WindowVerdict#DUPLICATE}. Faster than single calls: the home slots of a group of ids (fingerprint and
   * expiry word: every line a decision reads or writes) are read ahead of the probes, so their cache misses overlap
   * instead of following one another, and the sweep work the batch owes is paid in one run before the first group
   * instead of between reads and probes. So a batch may delete an expired entry earlier than single calls would, and
   * its table may double at another moment than theirs ({@link WindowStats#tableSlots()}); verdicts and the other
   * counters are the same. Allocates nothing.
   *
   * @param fingerprints the ids' fingerprints; none may be 0
   * @param offset index of the first fingerprint, and of the first verdict written
   * @param length number of arrivals
   * @param verdicts receives the verdict of {@code fingerprints[offset + i]} at {@code verdicts[offset + i]}
   * @return the number of {@link WindowVerdict#ACCEPTED} verdicts
   * @throws IllegalArgumentException if any fingerprint in the range is 0 (checked before anything is recorded)
   * @throws NullPointerException if either array is null
   * @throws IndexOutOfBoundsException if the range lies outside either array or {@code length} is negative
   * @throws WindowFullException under {@link CapacityPolicy#REJECT} when a new id finds the window full: the
   *     arrivals before it are recorded and their verdicts written, the refused one and those after it are not
   *     (their verdict slots are left as they were)
   */
  public int checkBatch(long[] fingerprints, int offset, int length, WindowVerdict[] verdicts) {
    Objects.requireNonNull(fingerprints, "fingerprints");
    Objects.requireNonNull(verdicts, "verdicts");
    Objects.checkFromIndexSize(offset, length, fingerprints.length);
    Objects.checkFromIndexSize(offset, length, verdicts.length);
    final int end = offset + length;
    for (int i = offset; i < end; i++) {
      if (fingerprints[i] == 0) {
        throw new IllegalArgumentException(
            "fingerprints[" + i + "] must be non-zero (0 marks an empty slot) but was 0");
      }
    }
    final long bucket = advance(clock.nowMs());
    final long expiryBucket = bucket + bucketCount;
    paySweepDebtAhead(length);
    int acceptedHere = 0;
    for (int group = offset; group < end; group += PREFETCH_GROUP) {
      final int groupEnd = Math.min(end, group + PREFETCH_GROUP);
      long sink = 0;
      for (int i = group; i < groupEnd; i++) {
        sink += table.touch(fingerprints[i]);
      }
      prefetchSink += sink;
      for (int i = group; i < groupEnd; i++) {
        WindowVerdict v = judge(fingerprints[i], NO_PAYLOAD_HASH, bucket, expiryBucket);
        verdicts[i] = v;
        if (v == WindowVerdict.ACCEPTED) {
          acceptedHere++;
        }
      }
    }
    return acceptedHere;
  }

  /**
   * Does ahead of the checks the upkeep they would otherwise pay for, so that a caller with time between batches (a
   * partition runs it on a timer) takes it off their path: moves the window to the clock's time, deletes expired
   * entries (the sweep: about {@code maxSlots} slots visited, from where it stopped), and, once the sweep has caught
   * up, makes the room the checks would make before the next upkeep: when its occupied slots and as many accepts as
   * since the previous such upkeep (at most 1/64 of the table) reach the load limit, it follows the rule of a check
   * that finds the table full (a sweep of the whole table when dead entries fill an eighth of it, else a doubling).
   * The window stays correct without it: checks pay the sweep work that upkeep has not paid within a bucket of its
   * falling due, and make room when they need it.
   *
   * <p>With a {@link Builder#growthExecutor growth executor}, a doubling is not made here but handed to the executor
   * when the occupied slots and twice the accepts since the previous call (at most 1/8 of the table) reach the load
   * limit; a later call installs it, O(ids accepted while it was built), and until then every call sweeps nothing and
   * returns 0.
   *
   * <p>Cost: O(slots visited), plus O(table slots) in a call that makes room; a caller bounds its pause with
   * {@code maxSlots} (a slot takes a few nanoseconds when live, more when its entry is deleted). Allocates nothing but
   * a doubled table. Not thread-safe, like every method of the window.
   *
   * @param maxSlots the slots the sweep visits in this call, {@code >= 0}: at most this many, or a few more when it
   *     deletes an entry near the end of its run (the rest of that entry's probe cluster, a handful of slots at the
   *     table's load)
   * @return the sweep work still owed after this call, in slots: 0 once upkeep has caught up until the next bucket,
   *     and 0 while a doubling is being built (the sweep waits for it)
   * @throws IllegalArgumentException if {@code maxSlots} is negative
   */
  public long upkeep(long maxSlots) {
    if (maxSlots < 0) {
      throw new IllegalArgumentException("maxSlots must be >= 0 but was " + maxSlots);
    }
    advance(clock.nowMs());
    if (inPlace != null) {
      upkeepRestoreInPlace();
    }
    if (table.doublingInFlight()) {
      if (!table.finishDoubling(threshold)) {
        return 0; // the sweep waits for the doubling being built: a sweep now would have to drop it
      }
      afterDoublingBeside();
    }
    final long n = Math.min(sweepDebt, maxSlots);
    if (n > 0) {
      table.sweep(n, threshold);
      sweepDebt -= n;
      freshSweepDebt = Math.min(freshSweepDebt, sweepDebt);
    }
    if (sweepDebt == 0) {
      // The sweep has caught up, so checks sweep nothing until the next upkeep (the next step's work is left to it)
      // and the occupied slots only grow with the accepts meanwhile: if these reach the load limit, the checks would
      // make room before the next upkeep. Make it now, by their rule. Judged only at the end of a chain of runs, so
      // that dead entries a partial run has not reached yet do not count.
      final long accepts = accepted - acceptedAtUpkeep;
      acceptedAtUpkeep = accepted;
      if (growthExecutor == null) {
        final long headroom = Math.min(accepts, table.capacity() >>> 6);
        if (headroom > 0 && table.canGrow() && table.occupied() + headroom >= table.resizeAt()) {
          table.makeRoom(held, (int) headroom, threshold); // no debt to clear: none is owed here
        }
      } else {
        // The doubling is built while the checks go on and must be ready before they fill the table: it starts when
        // twice the accepts since the previous upkeep would reach the load limit, an upkeep earlier than one done
        // here, and not capped at 1/64 of the table (a fast partition's upkeep sees more accepts than that between
        // two calls while its table is small), only at 1/8.
        final long lead = Math.min(2 * accepts, table.capacity() >>> 3);
        if (lead > 0 && table.canGrow() && table.occupied() + lead >= table.resizeAt()) {
          growBeside(lead);
        }
      }
    }
    return sweepDebt;
  }

  /**
   * Upkeep's growth with a {@link Builder#growthExecutor growth executor}: by the rule a check follows, a sweep of the
   * whole table when dead entries fill an eighth of it (on this thread), and a doubling, built by the executor if one
   * is still needed after that.
   */
  private void growBeside(long headroom) {
    if (table.occupied() - held >= (table.capacity() >>> 3)) {
      table.sweep(table.capacity(), threshold);
      if (table.occupied() + headroom < table.resizeAt()) {
        return;
      }
    }
    TableDoubling doubling = table.startDoubling(threshold);
    try {
      growthExecutor.execute(doubling);
    } catch (RuntimeException e) {
      // Refused (a pool shutting down): the checks double the table themselves when they need room.
      table.dropDoubling();
      return;
    }
    if (table.finishDoubling(threshold)) { // an executor that ran it at once
      afterDoublingBeside();
    }
  }

  /**
   * After a doubling built beside the owner was installed. The sweep work owed stays owed: entries that expired while
   * it was built were copied, as live ones, and nothing swept them meanwhile.
   */
  private void afterDoublingBeside() {
    sweepDebt = Math.min(sweepDebt, table.capacity());
    freshSweepDebt = Math.min(freshSweepDebt, sweepDebt);
    doublingsBeside++;
  }

  /**
   * Before a change of the table other than an insert, where this class reads the table's size first: installs a
   * doubling built beside the owner if it is finished, else drops it (the table drops it anyway, but after the size
   * was read).
   */
  private void settleDoubling() {
    if (table.doublingInFlight()) {
      if (table.finishDoubling(threshold)) {
        afterDoublingBeside();
      } else {
        table.dropDoubling();
      }
    }
  }

  /**
   * @return true while a doubling of the table, or the table of entries restored in place ({@link #restoreInPlace}),
   *     is being built by the {@link Builder#growthExecutor growth executor} or waits for the next {@link #upkeep} to
   *     install it
   */
  public boolean growing() {
    return table.doublingInFlight() || inPlace != null;
  }

  private WindowVerdict decide(long fingerprint, long payloadHash, long bucket, long expiryBucket) {
    paySweepDebt();
    return judge(fingerprint, payloadHash, bucket, expiryBucket);
  }

  /** One decision, without the sweep work a check pays: {@link #decide}'s body, called directly by batches. */
  private WindowVerdict judge(long fingerprint, long payloadHash, long bucket, long expiryBucket) {
    if (table.needsRoom()) {
      makeRoom();
    }
    int r = table.probe(fingerprint, threshold);
    if (r >= 0) {
      // The kept payload hash is read only when the arrival has one: only then can it conflict.
      return repeat(payloadHash == NO_PAYLOAD_HASH ? NO_PAYLOAD_HASH : table.payloadHashAt(r), payloadHash);
    }
    if (inPlace != null) {
      final int i = liveInPlace(fingerprint);
      if (i >= 0) {
        return repeat(inPlace.payloadHash(i), payloadHash);
      }
    }
    final int lifetime = (int) (expiryBucket - bucket);
    if (lifetime <= 0) {
      // T falls inside the current bucket: the rule allows forgetting it at once, there is nothing to remember.
      accepted++;
      return WindowVerdict.ACCEPTED;
    }
    insert(r, fingerprint, expiryBucket, lifetime, payloadHash, false);
    accepted++;
    return WindowVerdict.ACCEPTED;
  }

  /** The verdict on an arrival of a remembered id whose entry keeps the payload hash {@code kept}. */
  private WindowVerdict repeat(long kept, long payloadHash) {
    if (payloadHash != NO_PAYLOAD_HASH && kept != NO_PAYLOAD_HASH && kept != payloadHash) {
      conflicts++;
      return WindowVerdict.CONFLICT;
    }
    duplicates++;
    return WindowVerdict.DUPLICATE;
  }

  /** The entry restored in place that remembers {@code fingerprint} now, or -1; {@link #inPlace} must be set. */
  private int liveInPlace(long fingerprint) {
    final int i = inPlace.find(fingerprint);
    return i >= 0 && inPlace.expiryBucket(i) > Math.max(currentBucket, evictedThrough) ? i : -1;
  }

  /**
   * Answers whether an id is remembered now, recording nothing. O(1) expected.
   *
   * @param fingerprint the id's fingerprint; must not be 0
   * @return true if an arrival now would be a duplicate (or conflict)
   * @throws IllegalArgumentException if {@code fingerprint} is 0
   */
  public boolean contains(long fingerprint) {
    requireFingerprint(fingerprint);
    advance(clock.nowMs());
    return table.probe(fingerprint, threshold) >= 0 || (inPlace != null && liveInPlace(fingerprint) >= 0);
  }

  /**
   * Reads the home slot of an id (its fingerprint and its expiry word), recording nothing, so that a
   * {@link #lookup}, {@link #check} or {@link #contains} of it soon after finds the slot in cache. A caller deciding
   * a group of ids one at a time calls this for each id of the group (up to {@link #PREFETCH_GROUP}) first: the
   * loads are independent of each other, so their cache misses overlap, where the decisions' own probes would wait
   * for each miss in turn; {@link #checkBatch} does the same inside. O(1), allocates nothing; no effect on any
   * answer.
   *
   * @param fingerprint the id's fingerprint (any value: 0 reads some slot and is harmless)
   */
  public void prefetch(long fingerprint) {
    prefetchSink += table.touch(fingerprint);
  }

  /**
   * Returns what the window knows of an id, recording nothing. Times are at bucket precision: {@code firstSeenMs}
   * is the start of the bucket it was accepted in, {@code expiresAtMs} the start of the bucket from which it is
   * forgotten. Allocates the returned record.
   *
   * @param fingerprint the id's fingerprint; must not be 0
   * @return the live entry, or null if the id is not remembered
   * @throws IllegalArgumentException if {@code fingerprint} is 0
   */
  public Entry lookup(long fingerprint) {
    requireFingerprint(fingerprint);
    long bucket = advance(clock.nowMs());
    int slot = table.probe(fingerprint, threshold);
    if (slot < 0) {
      final int i = inPlace == null ? -1 : liveInPlace(fingerprint);
      return i < 0 ? null : new Entry(fingerprint, inPlace.firstSeenBucket(i) * bucketMs,
          inPlace.expiryBucket(i) * bucketMs, inPlace.payloadHash(i));
    }
    int meta = table.metaAt(slot);
    long expiry = FingerprintTable.expiryBucket(meta, bucket);
    long firstSeen = expiry - FingerprintTable.lifetime(meta);
    return new Entry(fingerprint, firstSeen * bucketMs, expiry * bucketMs, table.payloadHashAt(slot));
  }

  /**
   * Puts back an entry recorded earlier (journal replay after a restart), as of its original times, so that it is
   * forgotten when it would have been. Counted in {@link WindowStats#held()} but not in {@code accepted}.
   *
   * <p>An entry that has already expired is skipped. An entry whose expiry lies beyond {@code now + W} (possible
   * only if the wall clock of the writing process was ahead of this one) is kept until {@code now + W}, the longest
   * the window can hold anything. An id that is already live keeps its current entry. A full window makes room
   * as {@link #check} does: under {@link CapacityPolicy#EVICT_OLDEST} it forgets its soonest-expiring bucket.
   *
   * @param fingerprint the id's fingerprint; must not be 0
   * @param payloadHash its payload hash or {@link #NO_PAYLOAD_HASH}
   * @param firstSeenMs when it was first accepted, clock milliseconds
   * @param expiresAtMs its remember-until instant {@code T}, clock milliseconds
   * @return true if the entry was put back, false if it had expired or the id was already live
   * @throws IllegalArgumentException if {@code fingerprint} is 0 or {@code expiresAtMs < firstSeenMs}
   * @throws WindowFullException under {@link CapacityPolicy#REJECT} when the window already holds {@code maxIds}
   */
  public boolean restore(long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs) {
    requireFingerprint(fingerprint);
    if (expiresAtMs < firstSeenMs) {
      throw new IllegalArgumentException(
          "expiresAtMs must be >= firstSeenMs (" + firstSeenMs + ") but was " + expiresAtMs);
    }
    return restoreAt(advance(clock.nowMs()), fingerprint, payloadHash, firstSeenMs, expiresAtMs);
  }

  /**
   * Puts back a batch of entries, with the same result as {@link #restore} for each at one instant (the clock is read
   * once). Faster than single calls on a large table: as in {@link #checkBatch}, the home slots of a group of
   * entries are read before they are inserted, so their cache misses overlap. Allocates nothing.
   *
   * @param fingerprints the fingerprints; none may be 0
   * @param payloadHashes their payload hashes (or {@link #NO_PAYLOAD_HASH})
   * @param firstSeenMs when each was first accepted, clock milliseconds
   * @param expiresAtMs the remember-until instant of each, clock milliseconds
   * @param length the number of entries, from index 0 of each array
   * @return the number of entries put back (the others had expired or were live already)
   * @throws IllegalArgumentException if a fingerprint is 0 or an expiry precedes its first-seen time (checked
   *     before anything is restored)
   * @throws IndexOutOfBoundsException if an array is shorter than {@code length}
   * @throws WindowFullException under {@link CapacityPolicy#REJECT} when the window is full: the entries before the
   *     refused one are restored
   */
  public int restoreBatch(long[] fingerprints, long[] payloadHashes, long[] firstSeenMs, long[] expiresAtMs,
      int length) {
    Objects.checkFromIndexSize(0, length, fingerprints.length);
    Objects.checkFromIndexSize(0, length, payloadHashes.length);
    Objects.checkFromIndexSize(0, length, firstSeenMs.length);
    Objects.checkFromIndexSize(0, length, expiresAtMs.length);
    for (int i = 0; i < length; i++) {
      if (fingerprints[i] == 0) {
        throw new IllegalArgumentException(
            "fingerprints[" + i + "] must be non-zero (0 marks an empty slot) but was 0");
      }
      if (expiresAtMs[i] < firstSeenMs[i]) {
        throw new IllegalArgumentException("expiresAtMs[" + i + "] must be >= firstSeenMs[" + i + "] ("
            + firstSeenMs[i] + ") but was " + expiresAtMs[i]);
      }
    }
    final long bucket = advance(clock.nowMs());
    int restored = 0;
    for (int group = 0; group < length; group += PREFETCH_GROUP) {
      final int groupEnd = Math.min(length, group + PREFETCH_GROUP);
      long sink = 0;
      for (int i = group; i < groupEnd; i++) {
        sink += table.touch(fingerprints[i]);
      }
      prefetchSink += sink;
      for (int i = group; i < groupEnd; i++) {
        if (restoreAt(bucket, fingerprints[i], payloadHashes[i], firstSeenMs[i], expiresAtMs[i])) {
          restored++;
        }
      }
    }
    return restored;
  }

  private boolean restoreAt(long bucket, long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs) {
    long expiry = Math.min(Math.floorDiv(expiresAtMs, bucketMs), bucket + bucketCount);
    if (expiry <= bucket) {
      return false;
    }
    int lifetime = (int) Math.min(bucketCount, Math.max(1, expiry - Math.floorDiv(firstSeenMs, bucketMs)));
    paySweepDebt();
    if (table.needsRoom()) {
      makeRoom();
    }
    int r = table.probe(fingerprint, threshold);
    if (r >= 0 || (inPlace != null && liveInPlace(fingerprint) >= 0)) {
      return false;
    }
    insert(r, fingerprint, expiry, lifetime, payloadHash, true);
    return true;
  }

  /**
   * Grows the table, if it is smaller, to the size {@link Builder#expectedIds(int) expectedIds(ids)} would have given
   * it ({@code ids} capped at {@code maxIds}), so that that many live ids fit without the table growing. Call it before
   * restoring many entries in ascending order of their home slots, the order of a window snapshot: into a table too
   * small for them, such entries all start their probes in the first slots, where they pile into one probe chain that
   * every insertion walks, a cost quadratic in their number. O(table slots) when it grows (the table is rebuilt), else
   * O(1). Never shrinks the table; the next idle gap of a whole window brings it back to its presized size.
   *
   * @param ids the number of live ids about to be held; at most {@link #maxIdsLimit(boolean)}
   * @throws IllegalArgumentException if {@code ids} is negative
   */
  public void reserve(long ids) {
    if (ids < 0) {
      throw new IllegalArgumentException("ids must be >= 0 but was " + ids);
    }
    int slots = slotsFor(Math.min(ids, maxIds), payloadHashes);
    if (slots > table.capacity()) {
      growTable(slots);
    }
  }

  /** Grows the table to at least {@code slots} slots, after a doubling built beside the owner is settled. */
  private void growTable(int slots) {
    advance(clock.nowMs());
    settleDoubling();
    if (slots > table.capacity()) {
      table.growTo(slots, threshold); // rebuilt with its live entries only: no sweep owed
      clearSweepDebt();
    }
  }

  /**
   * Prepares entries recorded earlier (a window snapshot, read in place) for {@link #restoreInPlace}: one sequential
   * pass over them, O(entries), that picks the entry of each fingerprint the window keeps (the first one live now),
   * counts the kept entries per expiry bucket and indexes them for lookups. Run it off the owner's thread: it reads
   * only this window's configuration and clock, and may be called from any thread, concurrently with the owner.
   *
   * @param entries the entries, in table order (see {@link TableOrderedEntries}); read now, by the lookups of the
   *     window that restores them and by the build of its table, so they must stay readable and unchanged until
   *     {@link #restoringInPlace()} is false
   * @return the prepared restore, for this window only; holds an index of 4 bytes per 16 to 32 entries
   * @throws IllegalArgumentException if an entry's fingerprint is 0, its expiry precedes its first-seen time, or
   *     there are more than {@link Integer#MAX_VALUE} entries
   * @throws NullPointerException if {@code entries} is null
   */
  public PreparedRestore prepareRestore(TableOrderedEntries entries) {
    Objects.requireNonNull(entries, "entries");
    return new PreparedRestore(this, entries, clock.nowMs(), bucketMs, bucketCount, payloadHashes,
        kept -> Math.max(initialCapacity, slotsFor(Math.min(kept, maxIds), payloadHashes)));
  }

  /**
   * Puts back entries recorded earlier with the same result as {@link #restoreBatch} of them at the instant of
   * their {@link #prepareRestore preparation}, without inserting them first: the window answers from the entries in
   * place at once (a check, {@link #contains}, {@link #lookup} or {@link #restore} that finds nothing in the table
   * looks them up: a binary search among the few entries of an index cell) while their table is built beside the
   * owner by the {@link Builder#growthExecutor growth executor}, allocated and filled in table order, O(entries). The
   * next {@link #upkeep} hands the build to the executor (so that it does not compete with the rest of a restart),
   * and the first upkeep after the build installs it: O(table slots) to copy into it the entries accepted meanwhile.
   * Without upkeep calls the window keeps answering from the entries in place. Without a growth executor the table is
   * built here, O(entries), and installed at once; if the executor refuses the build, that upkeep builds it. So a
   * restart answers after a pass over the entries rather than after a table of them is allocated and filled.
   *
   * <p>Until the install, held ids and expiries count the entries restored in place as if they were in the table;
   * {@link WindowStats#tableSlots()} and {@link WindowStats#tableBytes()} do not (nor the entries' own memory, the
   * caller's). An early eviction ({@link CapacityPolicy#EVICT_OLDEST}) that must delete entries at once builds the
   * table here first, O(entries); an idle gap of a whole window drops the entries (all expired), and so does the
   * window after the one in which they all expire if their table is not installed by then (at once if it could not
   * be built): until then it is kept for its install, as the window's presized table.
   *
   * @param prepared what {@link #prepareRestore} of this window returned, handed to the owner's thread
   * @return true if the entries are restored; false, and nothing changed, if the window already holds ids (a restore
   *     in place is for a window that has not served yet), they are not in table order, this window's clock reads a
   *     bucket before the preparation's, the window had read a later bucket than the preparation's before this call
   *     (which of the two readings came first is unknown, and restoreBatch's result depends on it), an entry kept at the preparation has expired since while a later entry of
   *     its fingerprint has not (a restore by batch now keeps the later one), or more entries were kept at the
   *     preparation than {@code maxIds} (even if fewer are live now: a restore by batch then would have evicted or
   *     refused some): restore them with {@link #restoreBatch} then
   * @throws IllegalArgumentException if {@code prepared} was made by another window
   * @throws IllegalStateException if a restore in place is still in progress ({@link #restoringInPlace()})
   */
  public boolean restoreInPlace(PreparedRestore prepared) {
    Objects.requireNonNull(prepared, "prepared");
    if (prepared.window != this) {
      throw new IllegalArgumentException("prepared was made by another window's prepareRestore");
    }
    if (inPlace != null) {
      throw new IllegalStateException("a restore in place is in progress: its table is not installed yet");
    }
    // A window that had already read a later bucket than the preparation's may have read it before the preparation
    // (a clock that stepped back on the preparing thread): restoreBatch then would have capped and expired the entries
    // at that later instant, not at the preparation's.
    final long seenBucket = currentBucket;
    advance(clock.nowMs());
    if (!prepared.ordered || prepared.loadBucket > currentBucket || seenBucket > prepared.loadBucket || held != 0) {
      return false;
    }
    final long liveAfter = Math.max(currentBucket, evictedThrough);
    if (prepared.shadowedExpiry <= liveAfter) {
      // An entry kept at the preparation has expired since, while a later entry of its fingerprint has not: a restore
      // by batch now keeps that one (the preparation may also have read the clock behind this window's latest reading).
      return false;
    }
    if (prepared.kept > maxIds) {
      // restoreBatch at the preparation's instant would have gone past maxIds: evicted early (EVICT_OLDEST) or refused
      // (REJECT). Counted against the entries kept then, not those still live now, so that the counters and the
      // eviction's memory floor agree with that restore's; the caller restores by batch at its own instant instead.
      return false;
    }
    long live = 0;
    for (int k = 1; k <= bucketCount; k++) {
      if (prepared.loadBucket + k > liveAfter) {
        live += prepared.expiringIn[k];
      }
    }
    for (int k = 1; k <= bucketCount; k++) {
      final long expiry = prepared.loadBucket + k;
      if (expiry > liveAfter && prepared.expiringIn[k] > 0) {
        final int ring = ringIndex(expiry);
        expiringAt[ring] += prepared.expiringIn[k];
        newestFirstSeenAt[ring] = Math.max(newestFirstSeenAt[ring], prepared.newestFirstSeenIn[k]);
      }
    }
    held += live;
    // As restoreBatch at the preparation's instant would have: the entries kept then that have expired since count as
    // expired.
    expired += prepared.kept - live;
    inPlace = prepared;
    inPlaceBuildStarted = false;
    if (growthExecutor == null) {
      finishRestoreInPlaceHere();
    }
    return true;
  }

  /**
   * Upkeep's part in a restore in place: hands the build of the entries' table to the growth executor (the first
   * upkeep after the restore, so that the build does not compete with the rest of the owner's recovery), then
   * installs it once built.
   */
  private void upkeepRestoreInPlace() {
    if (!inPlaceBuildStarted) {
      inPlaceBuildStarted = true;
      try {
        growthExecutor.execute(inPlace);
      } catch (RuntimeException e) {
        finishRestoreInPlaceHere(); // refused (a pool shutting down): built here
        return;
      }
    }
    if (inPlace.isFinished()) {
      installRestoreInPlace();
    }
  }

  /**
   * @return true from a {@link #restoreInPlace} until its table is installed (or its entries are dropped, all
   *     expired): meanwhile the window reads the entries it was given
   */
  public boolean restoringInPlace() {
    return inPlace != null;
  }

  /** Installs the table of the entries restored in place, built beside the owner; drops them if the build failed. */
  private void installRestoreInPlace() {
    final FingerprintTable built = inPlace.built();
    if (built == null) {
      return; // the build failed (out of memory): the window goes on answering from the entries in place
    }
    adoptRestoredTable(built);
  }

  /** Builds the table of the entries restored in place on this thread, now, and installs it. */
  private void finishRestoreInPlaceHere() {
    if (inPlace != null) {
      final FingerprintTable built = inPlace.isFinished() && inPlace.built() != null ? inPlace.built()
          : inPlace.buildOnOwner();
      adoptRestoredTable(built);
    }
  }

  /** Makes {@code built} the table, with the entries of the current one that are live. */
  private void adoptRestoredTable(FingerprintTable built) {
    settleDoubling();
    built.absorbLive(table, threshold);
    table = built;
    inPlace = null;
    // The built table holds the entries kept at the preparation, some of which have expired since: owe a pass.
    clearSweepDebt();
    if (table.occupied() != held) {
      sweepDebt = table.capacity();
    }
  }

  /** Forgets the entries restored in place (they have all expired) and cancels their table's build. */
  private void dropRestoreInPlace() {
    if (inPlace != null) {
      inPlace.cancel();
      inPlace = null;
    }
  }

  /**
   * Grows the table to the size {@link Builder#expectedIds expectedIds} gave it, if it is smaller (a window built with
   * {@link Builder#presizeLater}): O(table slots) when it grows (the table is allocated, zeroed and rebuilt with its
   * live entries), else O(1); nothing during a {@link #restoreInPlace}, whose table is built that large. Call it off
   * the event loop before the window serves, as the allocation of a large table is long.
   */
  public void presize() {
    if (table.capacity() < initialCapacity && inPlace == null) {
      growTable(initialCapacity);
    }
  }

  /**
   * @return true if the table has the size {@link Builder#expectedIds expectedIds} gave it, or a table at least that
   *     large is being built beside the owner ({@link #restoreInPlace}); false if {@link #presize()} is still due
   */
  public boolean presized() {
    return table.capacity() >= initialCapacity || inPlace != null;
  }

  /** Slots for {@code ids} live ids plus the dead share the sweep leaves behind, within the 3/4 load limit. */
  private static int slotsFor(long ids, boolean payloadHashes) {
    long wanted = ids == 0 ? 0 : (ids + ids / 8) * 4 / 3 + 1;
    return (int) Math.min(wanted, FingerprintTable.maxCapacity(payloadHashes));
  }

  /**
   * Returns the counters. Reads the clock first, so {@code held} excludes ids expired by now.
   *
   * @return a snapshot (a new record)
   */
  public WindowStats stats() {
    advance(clock.nowMs());
    return new WindowStats(accepted, duplicates, conflicts, held, expired, earlyEvictions, rejected,
        table.capacity(), table.bytes());
  }

  /** @return the number of ids remembered now; O(1) */
  public long held() {
    advance(clock.nowMs());
    return held;
  }

  /** @return the window {@code W} */
  public Duration window() {
    return Duration.ofMillis(windowMs);
  }

  /** @return the bucket width {@code b} */
  public Duration bucket() {
    return Duration.ofMillis(bucketMs);
  }

  /** @return {@code N = W / b} */
  public int bucketCount() {
    return bucketCount;
  }

  /** @return the clock this window reads */
  public DedupClock clock() {
    return clock;
  }

  /**
   * Returns the earliest arrival time this window covers now: an event that first arrived before it may
   * have been forgotten. It is {@code now - W + b} at bucket precision, or later after an early eviction.
   *
   * @return clock milliseconds
   */
  public long memoryStartMs() {
    long bucket = advance(clock.nowMs());
    long oldestRemembered = Math.max(bucket - bucketCount + 1, evictionMemoryFloor);
    return oldestRemembered * bucketMs;
  }

  /**
   * Counts the live entries by scanning the whole table, O(capacity): for tests, which compare it with
   * {@link #held()}.
   */
  long liveEntriesInTable() {
    advance(clock.nowMs());
    return table.countLive(threshold);
  }

  /** The hash table, for tests that look at its tallies. */
  FingerprintTable table() {
    return table;
  }

  // ---------------------------------------------------------------------------------------------------------------

  private static void requireFingerprint(long fingerprint) {
    if (fingerprint == 0) {
      throw new IllegalArgumentException("fingerprint must be non-zero (0 marks an empty slot) but was 0");
    }
  }

  private long expiryBucket(long nowMs, long bucket, long rememberUntilMs) {
    if (rememberUntilMs == DEFAULT_REMEMBER_UNTIL) {
      return bucket + bucketCount;
    }
    if (rememberUntilMs <= nowMs) {
      throw new IllegalArgumentException(
          "rememberUntilMs must be after now (" + nowMs + ") but was " + rememberUntilMs);
    }
    // T > now here, so T - now is positive: compared unsigned it stays right where the signed difference overflows.
    if (Long.compareUnsigned(rememberUntilMs - nowMs, windowMs) > 0) {
      throw new IllegalArgumentException("rememberUntilMs must be <= now + window (" + nowMs + " + " + windowMs
          + " = " + (nowMs + windowMs) + ") but was " + rememberUntilMs);
    }
    return Math.floorDiv(rememberUntilMs, bucketMs);
  }

  private int ringIndex(long expiryBucket) {
    long ahead = expiryBucket - currentBucket;
    if (ahead >= 0 && ahead < expiringAt.length) {
      // The usual case (expiry within the next N buckets): no 64-bit division on the hot path.
      int i = currentRingIndex + (int) ahead;
      return i >= expiringAt.length ? i - expiringAt.length : i;
    }
    return (int) Math.floorMod(expiryBucket, (long) expiringAt.length);
  }

  /** Start of a bucket in clock milliseconds, saturated at {@code Long.MAX_VALUE}. */
  private long bucketStartMs(long bucket) {
    return bucket > Long.MAX_VALUE / bucketMs ? Long.MAX_VALUE : bucket * bucketMs;
  }

  /**
   * Moves the window to a clock reading: expires whole buckets, schedules sweep work. A reading below the latest
   * one seen counts as that one, so that every check (the remember-until validation included) sees one timeline.
   */
  private long advance(long readingMs) {
    if (readingMs > nowMs) {
      nowMs = readingMs;
    }
    if (nowMs < nextBucketStartMs) {
      return currentBucket;
    }
    final long bucket = Math.floorDiv(nowMs, bucketMs);
    if (bucket <= currentBucket) {
      return currentBucket;
    }
    nextBucketStartMs = bucketStartMs(bucket + 1);
    final long elapsed = bucket - currentBucket;
    if (elapsed >= bucketCount) {
      // Idle for a whole window: everything has expired. No walk: a new table of the initial (presized) size.
      expired += held;
      held = 0;
      Arrays.fill(expiringAt, 0);
      Arrays.fill(newestFirstSeenAt, Long.MIN_VALUE);
      if (table.occupied() != 0 || table.capacity() > initialCapacity) {
        // Back to the presized size, or kept at its smaller one for a presizeLater window that presize() has not
        // grown yet. An empty table of at most that size is kept as it is: no allocation for nothing (a restore on
        // the owner's thread after a recovery longer than W would otherwise allocate the presized table there).
        table.clear(Math.min(table.capacity(), initialCapacity));
      }
      dropRestoreInPlace();
      clearSweepDebt();
      evictedThrough = bucket;
    } else {
      for (long e = currentBucket + 1; e <= bucket; e++) {
        int i = ringIndex(e);
        held -= expiringAt[i];
        expired += expiringAt[i];
        expiringAt[i] = 0;
        newestFirstSeenAt[i] = Long.MIN_VALUE;
      }
      if (inPlace != null && bucket >= inPlace.loadBucket + bucketCount
          && (inPlace.isFinished() && inPlace.built() == null || bucket >= inPlace.loadBucket + 2L * bucketCount)) {
        // Every entry restored in place has expired. Their table, being built or still to be handed over by upkeep,
        // is kept for its install even so for another window: it is the window's presized table, which a window built
        // with presizeLater gets from nothing else. Dropped if it could not be built, or after that window (its dead
        // entries must stay well within half an expiry epoch of the current bucket when it is installed).
        dropRestoreInPlace();
      }
      if (table.occupied() == held) {
        // No entry in the table is dead (held counts the live ones exactly): a sweep would find nothing, now or for
        // the work still owed, as while the window fills in its first W after a start or while nothing expires.
        clearSweepDebt();
      } else {
        // Rounded up: rounded down, a small table in a window of many buckets (capacity < N / 8) owed nothing for a
        // one-bucket step, dead entries were never swept, and after 2^17 buckets their wrapped epochs read as live.
        // The previous step's work is due from now on, this step's is left to upkeep for a bucket. At most one pass
        // is owed for a step: a pass deletes every entry dead by then, and more would only walk the table again.
        final long added = (elapsed * table.capacity() + sweepPassBuckets - 1) / sweepPassBuckets;
        freshSweepDebt = Math.min(added, table.capacity());
        sweepDebt += freshSweepDebt;
      }
    }
    currentBucket = bucket;
    currentRingIndex = (int) Math.floorMod(bucket, (long) expiringAt.length);
    threshold = FingerprintTable.threshold(Math.max(bucket, evictedThrough));
    final long due = sweepDebt - freshSweepDebt;
    if (due > table.capacity()) {
      // The checks fell more than a pass behind (few checks per bucket, no upkeep): catch up now, so that no more than
      // a pass is due besides the pass at most left to upkeep, and no dead entry waits more than a few passes' buckets.
      // A doubling installed here keeps at most a pass of its debt owed (afterDoublingBeside): nothing to catch up.
      settleDoubling();
      final long stillDue = sweepDebt - freshSweepDebt;
      if (stillDue > table.capacity()) {
        table.sweep(stillDue - table.capacity(), threshold);
        sweepDebt = table.capacity() + freshSweepDebt;
      }
    }
    return bucket;
  }

  /** Forgets the sweep work owed: the table was just swept whole, rebuilt or replaced. */
  private void clearSweepDebt() {
    sweepDebt = 0;
    freshSweepDebt = 0;
  }

  private void paySweepDebt() {
    if (--checksUntilSweep <= 0) {
      checksUntilSweep = SWEEP_EVERY_CHECKS;
      final long due = sweepDebt - freshSweepDebt;
      if (due > 0 && !table.doublingInFlight()) {
        int n = (int) Math.min(due, (long) SWEEP_SLOTS_PER_CHECK * SWEEP_EVERY_CHECKS);
        table.sweep(n, threshold);
        sweepDebt -= n;
      }
    }
  }

  /**
   * Pays, in one sequential run before a batch's probes, the sweep work that {@code checks} single checks would pay
   * one run every {@link #SWEEP_EVERY_CHECKS} of them: the same slots, from the same cursor, and the same countdown to
   * the next run afterwards. Between a batch's read-ahead and its probes a sweep run would only compete with the
   * probes' cache lines and stall them; before the read-ahead it streams alone.
   */
  private void paySweepDebtAhead(int checks) {
    if (checks < checksUntilSweep) {
      checksUntilSweep -= checks;
      return;
    }
    final int after = checks - checksUntilSweep;
    final long runs = 1 + after / SWEEP_EVERY_CHECKS;
    checksUntilSweep = SWEEP_EVERY_CHECKS - after % SWEEP_EVERY_CHECKS;
    final long due = sweepDebt - freshSweepDebt;
    if (due > 0 && !table.doublingInFlight()) {
      long n = Math.min(due, runs * SWEEP_SLOTS_PER_CHECK * SWEEP_EVERY_CHECKS);
      table.sweep(n, threshold);
      sweepDebt -= n;
    }
  }

  private void makeRoom() {
    settleDoubling(); // a finished doubling may be all the room needed
    if (!table.needsRoom()) {
      return;
    }
    int before = table.capacity();
    if (!table.makeRoom(held, 0, threshold)) {
      rejected++;
      throw new WindowFullException("dedup window full: the table reached its largest size ("
          + table.capacity() + " slots) with " + held + " live ids");
    }
    if (table.capacity() != before) {
      clearSweepDebt();
    }
  }

  /**
   * Records a new entry at the insertion point {@code r} that {@code table.probe} returned, after making room for it
   * under the capacity policy.
   */
  private void insert(int r, long fingerprint, long expiry, int lifetime, long payloadHash, boolean restoring) {
    if (held >= maxIds) {
      if (capacityPolicy == CapacityPolicy.REJECT) {
        rejected++;
        throw new WindowFullException("dedup window full: maxIds=" + maxIds + " live ids held; "
            + (restoring ? "entry not restored" : "new id refused") + " (capacityPolicy=REJECT)");
      }
      evictOldestBucket();
    }
    if (expiry <= evictedThrough) {
      // The entry expires no later than a bucket evicted early (typically the one just evicted, when every held id
      // went into the current bucket): under the raised threshold it would be forgotten as soon as written. Delete
      // the evicted entries for real with one full sweep, O(capacity), then put the threshold back where time has
      // it. At most once per eviction: costly only if short-lived ids keep arriving at a full window. Entries restored
      // in place cannot be deleted where they are: their table is made now, so that the sweep deletes them too.
      finishRestoreInPlaceHere();
      settleDoubling();
      table.sweep(table.capacity(), threshold);
      clearSweepDebt();
      evictedThrough = currentBucket;
      threshold = FingerprintTable.threshold(currentBucket);
      r = table.probe(fingerprint, threshold);
    }
    table.put(-r - 1, fingerprint, FingerprintTable.meta(expiry, lifetime), payloadHash);
    int ring = ringIndex(expiry);
    expiringAt[ring]++;
    newestFirstSeenAt[ring] = Math.max(newestFirstSeenAt[ring], expiry - lifetime);
    held++;
  }

  private void evictOldestBucket() {
    long from = Math.max(currentBucket, evictedThrough) + 1;
    for (long e = from; e <= currentBucket + bucketCount; e++) {
      int i = ringIndex(e);
      int n = expiringAt[i];
      if (n > 0) {
        held -= n;
        earlyEvictions += n;
        expiringAt[i] = 0;
        evictedThrough = e;
        // Ids first seen up to the newest sighting in this bucket may now be forgotten; later ones may not.
        evictionMemoryFloor = Math.max(evictionMemoryFloor, newestFirstSeenAt[i] + 1);
        newestFirstSeenAt[i] = Long.MIN_VALUE;
        threshold = FingerprintTable.threshold(evictedThrough);
        return;
      }
    }
    throw new IllegalStateException("no live bucket to evict although held=" + held);
  }

  /**
   * What the window remembers of one id. Times at bucket precision, clock milliseconds.
   *
   * @param fingerprint the id's fingerprint
   * @param firstSeenMs start of the bucket in which it was accepted
   * @param expiresAtMs start of the bucket from which it is forgotten
   * @param payloadHash the payload hash kept with it, or {@link #NO_PAYLOAD_HASH}
   */
  public record Entry(long fingerprint, long firstSeenMs, long expiresAtMs, long payloadHash) {}

  /**
   * Builds a {@link DedupWindow}. Not thread-safe; each setter validates its argument at once.
   */
  public static final class Builder {
    private Duration window;
    private Duration bucket;
    private DedupClock clock = DedupClock.system();
    private long maxIds = -1;
    private CapacityPolicy capacityPolicy = CapacityPolicy.REJECT;
    private boolean payloadHashes;
    private int expectedIds;
    private Executor growthExecutor;
    private boolean presizeLater;

    private Builder() {}

    /**
     * Sets {@code W}, how long an accepted id is remembered. Required; choose it above the longest redelivery path
     * of your system: the longest of its scenarios, stages in sequence added, plus a margin
     * ({@code docs/choosing-window.md}).
     *
     * @param window positive, whole milliseconds
     * @return this builder
     * @throws IllegalArgumentException if not positive, not a whole number of milliseconds, or longer than
     *     {@link Long#MAX_VALUE} ms
     * @throws NullPointerException if null
     */
    public Builder window(Duration window) {
      this.window = requirePositiveMillis("window", window);
      return this;
    }

    /**
     * Sets the bucket width {@code b}; {@code W} must be a whole multiple of it, with at most {@value #MAX_BUCKETS}
     * buckets. Default {@code W / 60}.
     *
     * @param bucket positive, whole milliseconds
     * @return this builder
     * @throws IllegalArgumentException if not positive, not a whole number of milliseconds, or longer than
     *     {@link Long#MAX_VALUE} ms
     * @throws NullPointerException if null
     */
    public Builder bucket(Duration bucket) {
      this.bucket = requirePositiveMillis("bucket", bucket);
      return this;
    }

    /**
     * Sets the clock. Default {@link DedupClock#system()}; tests pass a {@link ManualClock}.
     *
     * @param clock the clock
     * @return this builder
     * @throws NullPointerException if null
     */
    public Builder clock(DedupClock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Caps the number of live ids. Default and upper limit: {@link #maxIdsLimit(boolean)}.
     *
     * @param maxIds {@code 1 ..} the limit
     * @return this builder
     * @throws IllegalArgumentException if out of range
     */
    public Builder maxIds(long maxIds) {
      if (maxIds < 1) {
        throw new IllegalArgumentException("maxIds must be >= 1 but was " + maxIds);
      }
      this.maxIds = maxIds;
      return this;
    }

    /**
     * Sets what happens to a new id when {@code maxIds} are held. Default {@link CapacityPolicy#REJECT}.
     *
     * @param policy the policy
     * @return this builder
     * @throws NullPointerException if null
     */
    public Builder capacityPolicy(CapacityPolicy policy) {
      this.capacityPolicy = Objects.requireNonNull(policy, "capacityPolicy");
      return this;
    }

    /**
     * Keeps an 8-byte payload hash with every entry so that the same id with another payload is a
     * {@link WindowVerdict#CONFLICT}. Default false: the window then pays nothing for it (12-byte slots instead of 20).
     *
     * @param payloadHashes whether to keep payload hashes
     * @return this builder
     */
    public Builder payloadHashes(boolean payloadHashes) {
      this.payloadHashes = payloadHashes;
      return this;
    }

    /**
     * Sizes the table once for this many live ids (typically rate x W), so that it never doubles (an O(table)
     * rehash) while serving. Default 0: start small and grow.
     *
     * @param expectedIds {@code >= 0}
     * @return this builder
     * @throws IllegalArgumentException if negative
     */
    public Builder expectedIds(int expectedIds) {
      if (expectedIds < 0) {
        throw new IllegalArgumentException("expectedIds must be >= 0 but was " + expectedIds);
      }
      this.expectedIds = expectedIds;
      return this;
    }

    /**
     * Has the table's doublings built on another thread, so that growing takes no O(table) pause on the owner's
     * thread. {@link DedupWindow#upkeep} then does not double the table itself when the next doubling is near: it
     * hands the executor a task that allocates a table of twice the slots and copies the live entries into it (the
     * JVM zeroes the new arrays there too), while the owner goes on deciding on the current table; the next
     * {@code upkeep} installs the result, copying the ids accepted meanwhile (O(those ids)). While the task runs the
     * sweep of expired entries waits ({@code upkeep} returns 0 then) and {@link DedupWindow#growing()} is true. A check
     * that finds the table at its load limit before the task has finished doubles it itself and drops the task's
     * result, as does any other rebuild of the table ({@link DedupWindow#reserve}, an early eviction's sweep, the
     * idle reset): verdicts never wait for the executor. Memory: the old and the new table both live until the
     * install. Default null: every doubling runs on the owner's thread, in the {@code upkeep} or check that needs it.
     *
     * @param growthExecutor runs each doubling task once, on any thread (a Vert.x worker, for a window on an event
     *     loop); may run it at once, in {@code execute}. A task it refuses ({@code execute} throws) is dropped and the
     *     checks double the table when they need room. Null for none
     * @return this builder
     */
    public Builder growthExecutor(Executor growthExecutor) {
      this.growthExecutor = growthExecutor;
      return this;
    }

    /**
     * Leaves the table {@link #expectedIds(int) presized for} by {@code expectedIds} to be allocated later: the window
     * starts with the smallest table, and {@link DedupWindow#presize()} (on a thread the owner hands the window to and
     * takes it back from) or the table a {@link DedupWindow#restoreInPlace} builds beside the owner brings it to that
     * size. For an owner that restores its window before serving: a restore in place then answers without waiting
     * for a large table to be allocated and zeroed (its build makes one of at least that size). Default false: the
     * presized table is allocated by {@link #build()}.
     *
     * @param presizeLater whether to allocate the presized table later
     * @return this builder
     */
    public Builder presizeLater(boolean presizeLater) {
      this.presizeLater = presizeLater;
      return this;
    }

    /**
     * Builds the window; it reads the clock once to find its first bucket.
     *
     * @return a new, empty window
     * @throws IllegalArgumentException if {@code window} is missing, is not a whole multiple of {@code bucket}, has
     *     more than {@value #MAX_BUCKETS} buckets, or {@code maxIds} / {@code expectedIds} exceed the table's limit
     */
    public DedupWindow build() {
      if (window == null) {
        throw new IllegalArgumentException("window is required (there is no safe default window)");
      }
      // Resolved into locals, not into the fields: a builder may be changed and built again.
      long w = window.toMillis();
      long b;
      if (bucket == null) {
        if (w % 60 != 0) {
          throw new IllegalArgumentException("bucket defaults to window / 60, so window must be a multiple of 60 ms"
              + " but was " + w + " ms; set bucket explicitly");
        }
        b = w / 60;
      } else {
        b = bucket.toMillis();
      }
      if (w % b != 0) {
        throw new IllegalArgumentException(
            "window (" + w + " ms) must be a whole multiple of bucket (" + b + " ms)");
      }
      if (w / b > MAX_BUCKETS) {
        throw new IllegalArgumentException("window / bucket must be <= " + MAX_BUCKETS + " buckets but was "
            + (w / b) + " (window " + w + " ms, bucket " + b + " ms); choose a wider bucket");
      }
      long limit = maxIdsLimit(payloadHashes);
      if (maxIds > limit) {
        throw new IllegalArgumentException("maxIds must be <= " + limit + " but was " + maxIds);
      }
      if (expectedIds > limit) {
        throw new IllegalArgumentException("expectedIds must be <= " + limit + " but was " + expectedIds);
      }
      if (maxIds != -1 && expectedIds > maxIds) {
        throw new IllegalArgumentException(
            "expectedIds must be <= maxIds (" + maxIds + ") but was " + expectedIds);
      }
      return new DedupWindow(this, w, b, maxIds == -1 ? limit : maxIds);
    }

    private static Duration requirePositiveMillis(String name, Duration d) {
      Objects.requireNonNull(d, name);
      try {
        Durations.positiveMillis(name, d);
      } catch (ArithmeticException e) {
        throw new IllegalArgumentException(name + " must be <= " + Long.MAX_VALUE + " ms but was " + d, e);
      }
      return d;
    }
  }

  /**
   * The largest {@code maxIds} a window can have: the table (2^27 slots, or 2^26 with payload hashes), filled to at most
   * 3/4 of its largest slot count.
   *
   * @param payloadHashes whether entries carry payload hashes (20-byte slots instead of 12)
   * @return 100,663,295 without payload hashes, 50,331,647 with
   */
  public static long maxIdsLimit(boolean payloadHashes) {
    return FingerprintTable.maxEntries(payloadHashes);
  }
}
