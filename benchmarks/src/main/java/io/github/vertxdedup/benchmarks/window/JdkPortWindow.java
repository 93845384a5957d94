package io.github.vertxdedup.benchmarks.window;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;

/**
 * A plain JDK port of the textbook bucket ring (as {@link DirectDesignWindow}): a {@code HashSet<Long>}
 * as the union set and an {@code ArrayDeque} of per-bucket {@code ArrayList<Long>}, newest first. What a team
 * would write without a primitive-collections library: every id is boxed, every set entry is a node object.
 *
 * <p>Semantics as {@link DirectDesignWindow}. Nothing presized. Not thread-safe.
 */
public final class JdkPortWindow implements DedupContender {

  private final SimulatedClock clock;
  private final long bucketMs;
  private final int bucketCount;
  private final HashSet<Long> seen = new HashSet<>();
  private final ArrayDeque<ArrayList<Long>> buckets = new ArrayDeque<>();
  private long head;

  /**
   * @param workload gives {@code W} and {@code b}
   * @param clock the simulated clock; read once here and once per {@link #firstSeen}
   */
  public JdkPortWindow(Workload workload, SimulatedClock clock) {
    this.clock = clock;
    this.bucketMs = workload.bucketMs();
    this.bucketCount = (int) (workload.windowMs() / workload.bucketMs());
    this.head = Math.floorDiv(clock.nowMs(), bucketMs);
    buckets.addFirst(new ArrayList<>());
  }

  @Override
  public boolean firstSeen(long fingerprint) {
    advance(clock.nowMs());
    final Long id = fingerprint;
    if (!seen.add(id)) {
      return false;
    }
    buckets.peekFirst().add(id);
    return true;
  }

  private void advance(long nowMs) {
    final long bucket = Math.floorDiv(nowMs, bucketMs);
    if (bucket - head >= bucketCount) {
      seen.clear();
      buckets.clear();
      buckets.addFirst(new ArrayList<>());
      head = bucket;
      return;
    }
    while (head < bucket) {
      buckets.addFirst(new ArrayList<>());
      head++;
      if (buckets.size() > bucketCount) {
        for (Long id : buckets.pollLast()) {
          seen.remove(id);
        }
      }
    }
  }

  @Override
  public long held() {
    return seen.size();
  }

  @Override
  public Object footprintRoot() {
    return new Object[] {seen, buckets};
  }
}
