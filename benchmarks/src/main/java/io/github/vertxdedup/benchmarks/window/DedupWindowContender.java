package io.github.vertxdedup.benchmarks.window;

import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.window.WindowVerdict;
import java.time.Duration;

/** Our {@link DedupWindow}, optionally presized with {@code expectedIds}. Single-threaded. */
final class DedupWindowContender implements DedupContender, BatchContender {

  private final DedupWindow window;
  private final boolean batches;
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
    this.batches = batches;
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
    return window.checkBatch(fingerprints, offset, length, verdicts);
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
