package io.github.vertxdedup.benchmarks.window;

/**
 * The shape of a generated event stream and of the window that deduplicates it.
 *
 * <p>Events arrive at a steady {@code eventsPerSecond} of simulated time. Each is, by independent draws:
 * a redelivery of an id accepted within the last {@code redeliverySpanMs} (share {@code redeliveryShare}); a late
 * redelivery of an id first accepted at least {@code staleAgeMs} ago (share {@code staleShare}), which every window
 * has forgotten; or else a fresh id.
 *
 * @param events number of events in the stream, {@code >= 1}
 * @param eventsPerSecond arrival rate in events per second of simulated time, {@code 1 ..} 1,000,000
 * @param windowMs the dedup window {@code W}, milliseconds
 * @param bucketMs the bucket width {@code b}, milliseconds; divides {@code windowMs}
 * @param redeliveryShare probability that an event redelivers a recent id, {@code [0, 1)}
 * @param redeliverySpanMs how far back a recent redelivery reaches, milliseconds; at most {@code W - b}, so every
 *     window (forgetting between {@code W - b} and {@code W}) still remembers the id
 * @param staleShare probability that an event redelivers an id older than {@code staleAgeMs}, {@code [0, 1)}
 * @param staleAgeMs the least age of a late redelivery, milliseconds; at least {@code W}, so every window has
 *     forgotten the id and accepts it again
 * @param seed seed of the random choices, {@code >= 0}; the same workload always gives the same stream
 */
public record Workload(int events, int eventsPerSecond, long windowMs, long bucketMs, double redeliveryShare,
    long redeliverySpanMs, double staleShare, long staleAgeMs, long seed) {

  /**
   * The reference workload, the one the window's targets were set for: 10 M events at 100 k events/s (100 s simulated),
   * {@code W} = 60 s, {@code b} = 1 s, 10 % redeliveries of ids accepted in the last 5 s, so about 5.4 M ids
   * (90 k new ids/s x 60 s) are held at peak.
   */
  public static final Workload SEED = new Workload(10_000_000, 100_000, 60_000, 1_000, 0.10, 5_000, 0.0, 0, 42);

  /**
   * Checks the limits given above.
   *
   * @throws IllegalArgumentException naming the first field out of range
   */
  public Workload {
    if (events < 1) {
      throw new IllegalArgumentException("events must be >= 1 but was " + events);
    }
    if (eventsPerSecond < 1 || eventsPerSecond > 1_000_000) {
      throw new IllegalArgumentException("eventsPerSecond must be in [1, 1000000] but was " + eventsPerSecond);
    }
    if (bucketMs < 1 || windowMs < bucketMs || windowMs % bucketMs != 0) {
      throw new IllegalArgumentException("windowMs must be a positive multiple of bucketMs but was windowMs="
          + windowMs + ", bucketMs=" + bucketMs);
    }
    if (!(redeliveryShare >= 0 && staleShare >= 0 && redeliveryShare + staleShare < 1)) {
      throw new IllegalArgumentException("redeliveryShare + staleShare must be in [0, 1) but was "
          + redeliveryShare + " + " + staleShare);
    }
    if (redeliverySpanMs < 0 || redeliverySpanMs > windowMs - bucketMs) {
      throw new IllegalArgumentException("redeliverySpanMs must be in [0, windowMs - bucketMs = "
          + (windowMs - bucketMs) + "] but was " + redeliverySpanMs);
    }
    if (seed < 0) {
      throw new IllegalArgumentException("seed must be >= 0 but was " + seed);
    }
    if (staleShare > 0 && staleAgeMs < windowMs) {
      throw new IllegalArgumentException(
          "staleAgeMs must be >= windowMs (" + windowMs + ") when staleShare > 0 but was " + staleAgeMs);
    }
  }

  /**
   * Returns the same workload with another number of events (the rest unchanged).
   *
   * @param newEvents number of events, {@code >= 1}
   * @return the resized workload
   */
  public Workload withEvents(int newEvents) {
    return new Workload(newEvents, eventsPerSecond, windowMs, bucketMs, redeliveryShare, redeliverySpanMs,
        staleShare, staleAgeMs, seed);
  }

  /**
   * @return the number of ids a window holds in steady state: the rate of accepted events (fresh ids and late
   *     redeliveries) x {@code W}
   */
  public int expectedHeldIds() {
    return (int) Math.round(eventsPerSecond * (1.0 - redeliveryShare) * windowMs / 1000.0);
  }
}
