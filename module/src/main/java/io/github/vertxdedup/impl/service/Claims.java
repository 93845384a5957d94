package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.impl.protocol.ParsedEvent;
import io.github.vertxdedup.impl.protocol.RequestFailure;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Queue;
import java.util.function.Consumer;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The live claims of one partition, and the committed ones a repeated commit must still find: who holds an id (or
 * key) outside the window, until when, with which token. {@link PartitionCore} decides; this keeps the claims.
 * Confined to the partition's event loop (not thread-safe, no locks).
 *
 * <h2>Claims</h2>
 * A claim holds an id (and key) outside the window, in two hash maps (by id and by key fingerprint), until it is
 * committed (then it enters the window), released (forgotten) or its lease ends. A lapsed claim is noticed when a
 * request touches it ({@link #live}, {@link #named}), or by {@link #sweepExpiredLeases} (a periodic timer); either
 * way it is counted once, in {@link PartitionCounters#expiredLeases}. The sweep finds lapsed claims through a queue in
 * lease-end order (see {@link #leaseOrder}), so it costs O(claims whose lease ended) rather than a scan of every
 * claim. A claim reserves its window entries ({@link #reserved}), so that under {@code CapacityPolicy.REJECT} its
 * commit never finds the window full. A claim keeps the claimer its request named (journaled with it);
 * {@link #releaseAllOf} gives back a restarted claimer's orphaned claims at once.
 *
 * <h2>Committed claims</h2>
 * A token of a claim with the default lease names its lease end ({@link ClaimTokens}), so a repeated commit finds its
 * committed claim by binary search in {@link #leaseOrder}, which keeps every claim until its lease ends anyway; no map
 * of committed claims is kept for them (it would cost a cache miss per commit and another per sweep on every claim).
 * A claim whose token cannot locate it (a random token, a claim restored from the journal, or one that went to
 * {@link #leaseOrderLate}) is kept in {@link #committedUnindexed} once committed.
 */
final class Claims {

  private final long defaultLeaseMs;
  private final PartitionCounters counters;
  private final ClaimTokens tokens = new ClaimTokens();
  private final Long2ObjectHashMap<Claim> byId = new Long2ObjectHashMap<>();
  private final Long2ObjectHashMap<Claim> byKey = new Long2ObjectHashMap<>();
  /**
   * Claims committed while their lease still runs whose token cannot locate them in {@link #leaseOrder} (see
   * Committed claims above), by id. A repeated commit with the same token (a retry after a lost reply) is answered
   * COMMITTED again; any other commit of a no-longer-claimed id is a 409. Forgotten at lease end (lazily, and by
   * {@link #sweepExpiredLeases}), and on restart.
   */
  private final Long2ObjectHashMap<Claim> committedUnindexed = new Long2ObjectHashMap<>();
  /**
   * Every claim made or restored, in the order of its lease end, for {@link #sweepExpiredLeases} and for finding a
   * committed claim by its token. A claim's entry stays in it after it is committed (a repeated commit finds it there
   * until its lease ends), released or expired, but as numbers only (see {@link ClaimQueue}): the claim object is let
   * go, and the sweep drops such an entry when its lease ends. Claims are appended in claim order, which is lease-end
   * order while leases have one length (the default {@code leaseMs}, as the Kafka consumer uses) and the clock does
   * not go back; a claim whose lease ends before the last one appended (a shorter per-request {@code leaseMs}) goes
   * to {@link #leaseOrderLate}, a heap. So a sweep costs O(entries whose lease ended), plus O(log n) per entry of the
   * heap.
   */
  private final ClaimQueue leaseOrder = new ClaimQueue();
  /** Claims appended out of lease-end order, by lease end (see {@link #leaseOrder}). */
  private final PriorityQueue<Claim> leaseOrderLate =
      new PriorityQueue<>(Comparator.comparingLong((Claim c) -> c.leaseEndMs));
  /** Window entries reserved by live claims (1 per claim, 2 with a key). */
  private long reserved;

  /**
   * @param defaultLeaseMs the partition's lease, ms: a claim with it gets a token that names its lease end
   * @param counters where expired leases are counted
   */
  Claims(long defaultLeaseMs, PartitionCounters counters) {
    this.defaultLeaseMs = defaultLeaseMs;
    this.counters = counters;
  }

  /** @return true if no claim is held (lapsed ones not yet noticed count as held) */
  boolean isEmpty() {
    return byId.isEmpty();
  }

  /** @return the live claims held now (lapsed ones not yet noticed included) */
  int held() {
    return byId.size();
  }

  /** @return window entries reserved by live claims (1 per claim, 2 with a key) */
  long reserved() {
    return reserved;
  }

  /**
   * A new claim of {@code e}, not yet held ({@link #hold}): its lease ends {@code leaseMs} (the event's, else the
   * partition's) after {@code now}, and its token is issued now.
   *
   * @param e the event
   * @param now the clock's reading, ms
   * @return the claim
   */
  Claim create(ParsedEvent e, long now) {
    long leaseMs = e.leaseMs != 0 ? e.leaseMs : defaultLeaseMs;
    long leaseEndMs = now + leaseMs;
    long token = leaseMs == defaultLeaseMs ? tokens.withLeaseEnd(leaseEndMs) : tokens.random();
    return new Claim(e.idFp, e.keyFp, e.payloadHash, e.rememberUntilMs, Long.toHexString(token), token,
        ClaimTokens.leaseEndMs(token) == leaseEndMs, now, leaseEndMs, e.claimer);
  }

  /** Holds a claim made by {@link #create} or restored: its id (and key) are claimed until it ends. O(1) expected. */
  void hold(Claim c) {
    byId.put(c.idFp, c);
    if (c.keyFp != 0) {
      byKey.put(c.keyFp, c);
    }
    reserved += c.entries();
    queueForSweep(c);
  }

  /**
   * The live claim that holds the event's id, else its key; a lapsed one found on the way is forgotten and counted.
   *
   * @return the claim, or null
   */
  Claim live(ParsedEvent e, long now) {
    Claim c = byId.get(e.idFp);
    if (c != null && c.expiredAt(now)) {
      expire(c);
      c = null;
    }
    if (c == null && e.keyFp != 0) {
      c = byKey.get(e.keyFp);
      if (c != null && c.expiredAt(now)) {
        expire(c);
        c = null;
      }
    }
    return c;
  }

  /**
   * Finds the claim a commit or release names.
   *
   * @param e the event (id and claimToken)
   * @param now the clock's reading, ms
   * @param action "commit" or "release", for the messages
   * @return the claim; null if the id is not claimed but a claim of it with this token was committed and its lease
   *     still runs (the same commit again)
   * @throws RequestFailure 409 if the claim's lease ran out, the id is not claimed, or the token differs
   */
  Claim named(ParsedEvent e, long now, String action) {
    Claim c = byId.get(e.idFp);
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

  /** A held claim was committed: it is let go, and a repeated commit finds it until its lease ends. */
  void committed(Claim c) {
    c.committed = true;
    remove(c);
    if (!c.indexed) {
      committedUnindexed.put(c.idFp, c);
    }
  }

  /** A held claim was released: it is let go. */
  void released(Claim c) {
    remove(c);
  }

  /**
   * Lets go of every live claim held by {@code claimer}, handing each to {@code onRelease} as it goes; a lapsed one is
   * forgotten and counted as expired instead. O(live claims).
   *
   * @param claimer the claimer; not null
   * @param now the clock's reading, ms
   * @param onRelease called with each claim let go that was still live, in no particular order
   * @return the number of claims let go that were still live
   */
  int releaseAllOf(String claimer, long now, Consumer<Claim> onRelease) {
    List<Claim> mine = new ArrayList<>();
    for (Claim c : byId.values()) {
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
      released++;
      onRelease.accept(c);
    }
    return released;
  }

  /**
   * Holds a claim the journal replays, unless its lease has ended or its id is claimed already. Found through
   * {@link #committedUnindexed} once committed: a token written by an earlier run may name another lease length.
   */
  void restore(long idFp, long keyFp, long payloadHash, String token, long claimedAtMs, long leaseEndMs,
      long rememberUntilMs, String claimer, long now) {
    if (leaseEndMs <= now || byId.containsKey(idFp)) {
      return;
    }
    hold(new Claim(idFp, keyFp, payloadHash, rememberUntilMs, token, ClaimTokens.parse(token), false, claimedAtMs,
        leaseEndMs, claimer));
  }

  /**
   * Forgets every claim whose lease has ended, counting each in {@code expiredLeases}, and every committed claim
   * whose lease has ended (a repeated commit of it is then a 409). O(claims whose lease ended since the last sweep,
   * including committed, released and already-noticed ones), not O(live claims): see {@link #leaseOrder}.
   *
   * @param now the clock's reading, ms
   * @return the number of live claims forgotten now
   */
  int sweepExpiredLeases(long now) {
    return sweep(leaseOrder, now) + sweep(leaseOrderLate, now);
  }

  /** @return claim objects the lease-ordered queue still holds (live claims, and committed ones it must keep); tests */
  int queuedClaimObjects() {
    return leaseOrder.claimsHeld();
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
    if (byId.get(c.idFp) == c) {
      remove(c);
      counters.expiredLeases++;
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

  private void expire(Claim c) {
    remove(c);
    counters.expiredLeases++;
  }

  private void remove(Claim c) {
    byId.remove(c.idFp);
    if (c.keyFp != 0) {
      byKey.remove(c.keyFp);
    }
    reserved -= c.entries();
    if (c.queueSeq >= 0) {
      // The queue keeps the numbers a repeated commit is found by; the claim object only where the sweep still needs
      // it at lease end (a committed claim that committedUnindexed holds until then).
      leaseOrder.detach(c.queueSeq, c.committed && c.indexed, c.committed && !c.indexed);
    }
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
    long token = ClaimTokens.parse(e.claimToken);
    if (token == 0) {
      return false;
    }
    long leaseEndMs = ClaimTokens.leaseEndMs(token);
    if (leaseEndMs <= now) {
      return false;
    }
    // The queue keeps the token as a number; the text must be the one issued (parsing also takes upper case).
    return leaseOrder.findCommitted(leaseEndMs, e.idFp, token) && Long.toHexString(token).equals(e.claimToken);
  }
}
