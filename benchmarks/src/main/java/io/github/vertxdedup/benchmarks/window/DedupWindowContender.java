package io.github.vertxdedup.benchmarks.window;

import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.window.Verdict;
import java.time.Duration;

/** Our {@link DedupWindow}, optionally presized with {@code expectedIds}. Single-threaded. */
final class DedupWindowContender implements DedupContender {

  private final DedupWindow window;

  /**
   * @param workload gives {@code W} and {@code b}
   * @param clock the simulated clock
   * @param expectedIds passed to {@link DedupWindow.Builder#expectedIds(int)}; 0 to let the table grow
   */
  DedupWindowContender(Workload workload, SimulatedClock clock, int expectedIds) {
    this.window = DedupWindow.builder()
        .window(Duration.ofMillis(workload.windowMs()))
        .bucket(Duration.ofMillis(workload.bucketMs()))
        .clock(clock)
        .expectedIds(expectedIds)
        .build();
  }

  @Override
  public boolean firstSeen(long fingerprint) {
    return window.check(fingerprint) == Verdict.ACCEPTED;
  }

  @Override
  public long held() {
    return window.held();
  }

  @Override
  public Object footprintRoot() {
    return window;
  }
}
