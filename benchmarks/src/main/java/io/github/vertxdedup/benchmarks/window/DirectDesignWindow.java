package io.github.vertxdedup.benchmarks.window;

import org.agrona.collections.LongArrayList;
import org.agrona.collections.LongHashSet;

/**
 * The "direct design": the textbook bucket-ring dedup window, kept as a compact reference to measure our window
 * against: one union set of all held ids (Agrona {@link LongHashSet}, open addressing over a {@code long[]},
 * default load factor 0.65) plus, per bucket, the list of ids it added (Agrona {@link LongArrayList}), in a ring of
 * {@code N = W / b} buckets. When a bucket's slot comes round again, its ids are removed from the set one by one.
 *
 * <p>Cost: one set lookup (and insert) per event, plus one set removal per id when its bucket expires: two random
 * accesses into a table of several megabytes per accepted id. Memory: about 8 / 0.65 bytes per id in the set at its
 * fullest, 8 more in the bucket lists (plus their growth slack). Nothing presized: the set starts at Agrona's
 * default capacity and doubles.
 *
 * <p>Semantics of the textbook ring: an id accepted in bucket {@code k} is forgotten when bucket {@code k + N} starts;
 * after an idle gap of {@code N} buckets or more everything is dropped at once. Not thread-safe.
 */
public final class DirectDesignWindow implements DedupContender {

  private final SimulatedClock clock;
  private final long bucketMs;
  private final int bucketCount;
  private final LongHashSet seen = new LongHashSet();
  /** Bucket {@code k}'s ids live at index {@code k mod N}. */
  private final LongArrayList[] ring;
  private long head;
  private LongArrayList newest;

  /**
   * @param workload gives {@code W} and {@code b}
   * @param clock the simulated clock; read once here and once per {@link #firstSeen}
   */
  public DirectDesignWindow(Workload workload, SimulatedClock clock) {
    this.clock = clock;
    this.bucketMs = workload.bucketMs();
    this.bucketCount = (int) (workload.windowMs() / workload.bucketMs());
    this.ring = new LongArrayList[bucketCount];
    for (int i = 0; i < bucketCount; i++) {
      ring[i] = new LongArrayList();
    }
    this.head = Math.floorDiv(clock.nowMs(), bucketMs);
    this.newest = ring[slot(head)];
  }

  @Override
  public boolean firstSeen(long fingerprint) {
    advance(clock.nowMs());
    if (!seen.add(fingerprint)) {
      return false;
    }
    newest.addLong(fingerprint);
    return true;
  }

  private void advance(long nowMs) {
    final long bucket = Math.floorDiv(nowMs, bucketMs);
    if (bucket <= head) {
      return;
    }
    if (bucket - head >= bucketCount) {
      seen.clear();
      for (LongArrayList ids : ring) {
        ids.clear();
      }
    } else {
      for (long k = head + 1; k <= bucket; k++) {
        // This slot held bucket k - N, whose ids are forgotten from the start of bucket k on.
        final LongArrayList expired = ring[slot(k)];
        for (int i = 0, n = expired.size(); i < n; i++) {
          seen.remove(expired.getLong(i));
        }
        expired.clear();
      }
    }
    head = bucket;
    newest = ring[slot(bucket)];
  }

  private int slot(long bucket) {
    return (int) Math.floorMod(bucket, (long) bucketCount);
  }

  @Override
  public long held() {
    return seen.size();
  }

  @Override
  public Object footprintRoot() {
    // The ring and the set; not the clock.
    return new Object[] {seen, ring};
  }
}
