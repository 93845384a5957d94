package io.github.vertxdedup.benchmarks.window;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Duration;
import java.util.concurrent.ConcurrentMap;

/**
 * Caffeine as a dedup window: a {@code Cache<Long, Boolean>} with {@code expireAfterWrite(W)}, checked with
 * {@code asMap().putIfAbsent(id, TRUE)} (null back means first sighting). Time comes from the simulated clock
 * through Caffeine's {@code Ticker}. Maintenance (expiry, buffer draining) runs on the calling thread
 * ({@code executor(Runnable::run)}) so that its cost is measured, as the other structures' expiry is; with the
 * default executor it would run on the common pool, on the second core. Nothing presized. Per-entry expiry, so an
 * id is forgotten exactly {@code W} after it was accepted (the rings forget between {@code W - b} and {@code W}).
 *
 * <p>Not used concurrently here, though the cache is thread-safe.
 */
final class CaffeineContender implements DedupContender {

  private final Cache<Long, Boolean> cache;
  private final ConcurrentMap<Long, Boolean> map;

  /**
   * @param workload gives {@code W}
   * @param clock the simulated clock, as the cache's ticker
   */
  CaffeineContender(Workload workload, SimulatedClock clock) {
    this.cache = Caffeine.newBuilder()
        .expireAfterWrite(Duration.ofMillis(workload.windowMs()))
        .ticker(clock)
        .executor(Runnable::run)
        .build();
    this.map = cache.asMap();
  }

  @Override
  public boolean firstSeen(long fingerprint) {
    return map.putIfAbsent(fingerprint, Boolean.TRUE) == null;
  }

  @Override
  public long held() {
    cache.cleanUp();
    return cache.estimatedSize();
  }

  @Override
  public Object footprintRoot() {
    return cache;
  }
}
