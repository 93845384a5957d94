package io.github.vertxdedup.benchmarks.window;

import java.util.SplittableRandom;

/**
 * A pre-generated stream of arrivals: fingerprints and their arrival times, plus the verdict counts any correct
 * window must give on it. Generated once, outside the measured code.
 *
 * <p>Fresh ids are {@code mix(seed + n)} for the n-th fresh id, where {@code mix} is the 64-bit finaliser of
 * SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014, with Stafford's
 * "variant 13" constants). The finaliser is a bijection, so fresh ids never repeat by accident, and they look
 * uniform, like real fingerprints. Redeliveries reuse an earlier fresh id (see {@link Workload}).
 *
 * <p>Memory: 12 bytes per event (a {@code long} fingerprint and an {@code int} time offset); 120 MB for 10 M events.
 * Immutable after generation (the arrays are exposed for speed; callers must not write to them).
 */
public final class EventStream {

  /** Start of simulated time, clock milliseconds (2026-11-29T00:00:00Z); any value would do. */
  public static final long START_MS = 1_795_910_400_000L;

  private final Workload workload;
  private final long[] fingerprints;
  private final int[] offsetMs;
  private final long expectedAccepted;
  private final long expectedDuplicates;

  private EventStream(Workload workload, long[] fingerprints, int[] offsetMs, long accepted, long duplicates) {
    this.workload = workload;
    this.fingerprints = fingerprints;
    this.offsetMs = offsetMs;
    this.expectedAccepted = accepted;
    this.expectedDuplicates = duplicates;
  }

  /**
   * Generates the stream of a workload. O(events) time; deterministic for a given workload.
   *
   * @param workload the shape of the stream
   * @return the stream
   */
  public static EventStream generate(Workload workload) {
    final int n = workload.events();
    final long[] ids = new long[n];
    final int[] offsets = new int[n];
    // Fresh ids in arrival order, with their arrival offsets: the pool redeliveries draw from.
    final long[] fresh = new long[n];
    final int[] freshAt = new int[n];
    int freshCount = 0;
    int recentFrom = 0;   // first fresh id still within redeliverySpanMs
    int staleCursor = 0;  // next fresh id to redeliver late; each is redelivered late at most once
    long accepted = 0;
    long duplicates = 0;
    final SplittableRandom random = new SplittableRandom(workload.seed());
    final double redelivery = workload.redeliveryShare();
    final double lateLimit = redelivery + workload.staleShare();
    for (int i = 0; i < n; i++) {
      final int at = (int) ((long) i * 1000L / workload.eventsPerSecond());
      offsets[i] = at;
      while (recentFrom < freshCount && freshAt[recentFrom] < at - workload.redeliverySpanMs()) {
        recentFrom++;
      }
      final double draw = random.nextDouble();
      if (draw < redelivery && recentFrom < freshCount) {
        ids[i] = fresh[recentFrom + random.nextInt(freshCount - recentFrom)];
        duplicates++;
      } else if (draw >= redelivery && draw < lateLimit && staleCursor < freshCount
          && freshAt[staleCursor] <= at - workload.staleAgeMs()) {
        ids[i] = fresh[staleCursor++];
        accepted++;
      } else {
        long id = mix(workload.seed() + freshCount + 1);
        fresh[freshCount] = id;
        freshAt[freshCount] = at;
        freshCount++;
        ids[i] = id;
        accepted++;
      }
    }
    return new EventStream(workload, ids, offsets, accepted, duplicates);
  }

  /** SplitMix64's finaliser: a bijection on 64-bit values; 0 is its only fixed point at 0. */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** @return the workload this stream was generated from */
  public Workload workload() {
    return workload;
  }

  /** @return the number of events */
  public int size() {
    return fingerprints.length;
  }

  /** @return the fingerprints in arrival order; never 0; do not modify */
  public long[] fingerprints() {
    return fingerprints;
  }

  /** @return arrival times in milliseconds after {@link #START_MS}, non-decreasing; do not modify */
  public int[] offsetsMs() {
    return offsetMs;
  }

  /** @return how many events a correct window accepts (fresh ids and late redeliveries) */
  public long expectedAccepted() {
    return expectedAccepted;
  }

  /** @return how many events a correct window reports as duplicates (recent redeliveries) */
  public long expectedDuplicates() {
    return expectedDuplicates;
  }
}
