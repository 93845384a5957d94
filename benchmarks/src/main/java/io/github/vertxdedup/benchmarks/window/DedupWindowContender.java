package io.github.vertxdedup.benchmarks.window;

import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.window.WindowVerdict;
import java.time.Duration;

/** Our {@link DedupWindow}, optionally presized with {@code expectedIds}. Single-threaded. */
final class DedupWindowContender implements DedupContender, BatchContender {

  private final DedupWindow window;
  private final boolean batches;
  private final boolean upkeep;
  /** Wall time inside {@code checkBatch} and inside {@code upkeep}, ns, when {@link #upkeep} is on. */
  private long batchNanos;
  private long upkeepNanos;
  /** checkBatch writes verdicts at the events' own indexes: one slot per event of the stream, allocated once. */
  private WindowVerdict[] verdicts = new WindowVerdict[0];

  /**
   * @param workload gives {@code W} and {@code b}
   * @param clock the simulated clock
   * @param expectedIds passed to {@link DedupWindow.Builder#expectedIds(int)}; 0 to let the table grow
   */
  DedupWindowContender(Workload workload, SimulatedClock clock, int expectedIds) {
    this(workload, clock, expectedIds, false);
  }

  /**
   * @param workload gives {@code W} and {@code b}
   * @param clock the simulated clock
   * @param expectedIds passed to {@link DedupWindow.Builder#expectedIds(int)}; 0 to let the table grow
   * @param batches whether {@link Contender#run} feeds it through {@link DedupWindow#checkBatch}
   */
  DedupWindowContender(Workload workload, SimulatedClock clock, int expectedIds, boolean batches) {
    this(workload, clock, expectedIds, batches, false);
  }

  /**
   * @param workload gives {@code W} and {@code b}
   * @param clock the simulated clock
   * @param expectedIds passed to {@link DedupWindow.Builder#expectedIds(int)}; 0 to let the table grow
   * @param batches whether {@link Contender#run} feeds it through {@link DedupWindow#checkBatch}
   * @param upkeep whether each batch is followed by {@link DedupWindow#upkeep} of all the sweep work owed (as a
   *     partition's timer does between polls), the two timed apart
   */
  DedupWindowContender(Workload workload, SimulatedClock clock, int expectedIds, boolean batches, boolean upkeep) {
    this.batches = batches;
    this.upkeep = upkeep;
    this.window = DedupWindow.builder()
        .window(Duration.ofMillis(workload.windowMs()))
        .bucket(Duration.ofMillis(workload.bucketMs()))
        .clock(clock)
        .expectedIds(expectedIds)
        .build();
  }

  @Override
  public boolean firstSeen(long fingerprint) {
    return window.check(fingerprint) == WindowVerdict.ACCEPTED;
  }

  @Override
  public boolean batches() {
    return batches;
  }

  @Override
  public int firstSeenBatch(long[] fingerprints, int offset, int length) {
    if (verdicts.length < fingerprints.length) {
      verdicts = new WindowVerdict[fingerprints.length];
    }
    if (!upkeep) {
      return window.checkBatch(fingerprints, offset, length, verdicts);
    }
    long t0 = System.nanoTime();
    int accepted = window.checkBatch(fingerprints, offset, length, verdicts);
    long t1 = System.nanoTime();
    window.upkeep(Long.MAX_VALUE);
    long t2 = System.nanoTime();
    batchNanos += t1 - t0;
    upkeepNanos += t2 - t1;
    return accepted;
  }

  /**
   * @return the share of the time in {@code checkBatch} and {@code upkeep} that {@code checkBatch} took, or NaN
   *     without upkeep
   */
  double batchShare() {
    long all = batchNanos + upkeepNanos;
    return upkeep && all > 0 ? batchNanos / (double) all : Double.NaN;
  }

  @Override
  public long held() {
    return window.held();
  }

  /** @return the bytes of the window's hash table now, for the memory floor measured beside it */
  long tableBytes() {
    return window.stats().tableBytes();
  }

  @Override
  public Object footprintRoot() {
    return window;
  }
}
