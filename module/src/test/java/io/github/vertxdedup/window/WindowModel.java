package io.github.vertxdedup.window;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The reference model of {@link DedupWindow}: the contract written as plainly as possible, for differential tests.
 *
 * <p>A map from fingerprint to entry, each with its expiry bucket {@code e = floor(T / b)} (default
 * {@code T = arrival + W}, so {@code e = currentBucket + N}). An entry is live iff {@code currentBucket < e}. That is
 * the rule "remembered for every arrival before {@code T - b}, forgotten for every arrival at or after {@code T}"
 * made exact at bucket precision, which is the precision the window promises. Capacity: at {@code maxIds} live
 * entries a new one is refused (REJECT) or every entry of the smallest expiry bucket goes first (EVICT_OLDEST).
 * A clock reading below the latest one seen counts as the latest one seen.
 *
 * <p>No hashing, no epochs, no sweeping: a second implementation that shares none of the window's tricks.
 */
final class WindowModel {

  /** One remembered id, in buckets. */
  record Entry(long expiryBucket, long firstSeenBucket, long payloadHash) {}

  /** What {@link #check} or {@link #restore} answered: a result, or the type of exception thrown. */
  record Outcome(Object result, Class<? extends RuntimeException> thrown) {
    static Outcome of(Object result) {
      return new Outcome(result, null);
    }

    static Outcome threw(RuntimeException e) {
      return new Outcome(null, e.getClass());
    }
  }

  final long windowMs;
  final long bucketMs;
  final int n;
  final long maxIds;
  final CapacityPolicy policy;
  final boolean payloadHashes;

  private final Map<Long, Entry> entries = new HashMap<>();
  private final TreeMap<Long, List<Long>> byExpiry = new TreeMap<>();

  long nowMs;
  long bucket;
  /** Largest expiry bucket forgotten early; arrivals up to {@code N} buckets before it may be forgotten. */
  long evictedThrough;
  /** One bucket past the newest first sighting among ids forgotten early: every id seen from it on is remembered. */
  long evictionMemoryFloor = Long.MIN_VALUE;

  long accepted;
  long duplicates;
  long conflicts;
  long expired;
  long earlyEvictions;
  long rejected;

  WindowModel(long windowMs, long bucketMs, long maxIds, CapacityPolicy policy, boolean payloadHashes,
      long startMs) {
    this.windowMs = windowMs;
    this.bucketMs = bucketMs;
    this.n = (int) (windowMs / bucketMs);
    this.maxIds = maxIds;
    this.policy = policy;
    this.payloadHashes = payloadHashes;
    this.nowMs = startMs;
    this.bucket = Math.floorDiv(startMs, bucketMs);
    this.evictedThrough = bucket;
  }

  /** Moves time to a clock reading; a reading below the latest seen changes nothing. */
  void advance(long readingMs) {
    nowMs = Math.max(nowMs, readingMs);
    long b = Math.floorDiv(nowMs, bucketMs);
    if (b <= bucket) {
      return;
    }
    bucket = b;
    while (!byExpiry.isEmpty() && byExpiry.firstKey() <= bucket) {
      for (long fingerprint : byExpiry.pollFirstEntry().getValue()) {
        entries.remove(fingerprint);
        expired++;
      }
    }
  }

  Outcome check(long readingMs, long fingerprint, long payloadHash, long rememberUntilMs) {
    if (fingerprint == 0) {
      return Outcome.threw(new IllegalArgumentException());
    }
    advance(readingMs);
    long expiry;
    if (rememberUntilMs == DedupWindow.DEFAULT_REMEMBER_UNTIL) {
      expiry = bucket + n;
    } else if (rememberUntilMs <= nowMs || BigInteger.valueOf(rememberUntilMs)
        .subtract(BigInteger.valueOf(nowMs)).compareTo(BigInteger.valueOf(windowMs)) > 0) {
      return Outcome.threw(new IllegalArgumentException());
    } else {
      expiry = Math.floorDiv(rememberUntilMs, bucketMs);
    }
    Entry entry = entries.get(fingerprint);
    if (entry != null) {
      if (payloadHash != 0 && entry.payloadHash() != 0 && entry.payloadHash() != payloadHash) {
        conflicts++;
        return Outcome.of(WindowVerdict.CONFLICT);
      }
      duplicates++;
      return Outcome.of(WindowVerdict.DUPLICATE);
    }
    if (expiry <= bucket) {
      accepted++; // T falls in the current bucket: nothing to remember
      return Outcome.of(WindowVerdict.ACCEPTED);
    }
    if (!makeRoom()) {
      return Outcome.threw(new WindowFullException(""));
    }
    insert(fingerprint, new Entry(expiry, bucket, payloadHashes ? payloadHash : 0));
    accepted++;
    return Outcome.of(WindowVerdict.ACCEPTED);
  }

  Outcome restore(long readingMs, long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs) {
    if (fingerprint == 0 || expiresAtMs < firstSeenMs) {
      return Outcome.threw(new IllegalArgumentException());
    }
    advance(readingMs);
    long expiry = Math.min(Math.floorDiv(expiresAtMs, bucketMs), bucket + n);
    if (expiry <= bucket || entries.containsKey(fingerprint)) {
      return Outcome.of(false);
    }
    if (!makeRoom()) {
      return Outcome.threw(new WindowFullException(""));
    }
    long firstSeen = Math.max(expiry - n, Math.min(expiry - 1, Math.floorDiv(firstSeenMs, bucketMs)));
    insert(fingerprint, new Entry(expiry, firstSeen, payloadHashes ? payloadHash : 0));
    return Outcome.of(true);
  }

  private boolean makeRoom() {
    if (entries.size() < maxIds) {
      return true;
    }
    if (policy == CapacityPolicy.REJECT) {
      rejected++;
      return false;
    }
    Map.Entry<Long, List<Long>> soonest = byExpiry.pollFirstEntry();
    for (long fingerprint : soonest.getValue()) {
      Entry gone = entries.remove(fingerprint);
      evictionMemoryFloor = Math.max(evictionMemoryFloor, gone.firstSeenBucket() + 1);
      earlyEvictions++;
    }
    evictedThrough = Math.max(evictedThrough, soonest.getKey());
    return true;
  }

  private void insert(long fingerprint, Entry entry) {
    entries.put(fingerprint, entry);
    byExpiry.computeIfAbsent(entry.expiryBucket(), k -> new ArrayList<>()).add(fingerprint);
  }

  boolean contains(long readingMs, long fingerprint) {
    advance(readingMs);
    return entries.containsKey(fingerprint);
  }

  DedupWindow.Entry lookup(long readingMs, long fingerprint) {
    advance(readingMs);
    Entry e = entries.get(fingerprint);
    return e == null ? null : new DedupWindow.Entry(fingerprint, e.firstSeenBucket() * bucketMs,
        e.expiryBucket() * bucketMs, e.payloadHash());
  }

  long held(long readingMs) {
    advance(readingMs);
    return entries.size();
  }

  long memoryStartMs(long readingMs) {
    advance(readingMs);
    return Math.max(bucket - n + 1, evictionMemoryFloor) * bucketMs;
  }

  /** The counters, for comparison with {@link WindowStats} (table size excluded). */
  List<Long> counters(long readingMs) {
    advance(readingMs);
    return List.of(accepted, duplicates, conflicts, (long) entries.size(), expired, earlyEvictions, rejected);
  }

  static List<Long> counters(WindowStats s) {
    return List.of(s.accepted(), s.duplicates(), s.conflicts(), s.held(), s.expired(), s.earlyEvictions(),
        s.rejected());
  }

  /** Fingerprints of the live entries (a copy). */
  List<Long> liveFingerprints() {
    return new ArrayList<>(entries.keySet());
  }
}
