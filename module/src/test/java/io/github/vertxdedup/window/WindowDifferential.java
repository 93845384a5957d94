package io.github.vertxdedup.window;

import io.github.vertxdedup.time.DedupClock;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;

/**
 * Drives a {@link DedupWindow} and a {@link WindowModel} with the same calls and the same clock readings, and
 * fails at the first answer on which they differ, with the last calls that led there.
 *
 * <p>The window reads a {@link DedupClock} lambda over a mutable field, so a test can also move the reading
 * backwards (which the model treats as "no time passed").
 */
final class WindowDifferential {

  private static final int TRACE = 40;

  private long readingMs;
  final DedupWindow window;
  final WindowModel model;
  private final Deque<String> trace = new ArrayDeque<>();
  /** Doublings handed to the growth executor and not run yet. */
  private final Deque<Runnable> growthTasks = new ArrayDeque<>();
  private final String config;
  long operations;

  /**
   * @param maxIds the cap, or 0 for the window's default (no practical cap)
   */
  WindowDifferential(long windowMs, long bucketMs, long maxIds, CapacityPolicy policy, boolean payloadHashes,
      long startMs) {
    this(windowMs, bucketMs, maxIds, policy, payloadHashes, startMs, false);
  }

  /**
   * @param maxIds the cap, or 0 for the window's default (no practical cap)
   * @param growBeside true: the window's doublings are built by a growth executor that queues them until
   *     {@link #runGrowth()}, so that checks, sweeps and clock moves happen between a doubling's start, its build and
   *     its install
   */
  WindowDifferential(long windowMs, long bucketMs, long maxIds, CapacityPolicy policy, boolean payloadHashes,
      long startMs, boolean growBeside) {
    this.readingMs = startMs;
    this.config = "window=" + windowMs + "ms bucket=" + bucketMs + "ms maxIds=" + maxIds + " policy=" + policy
        + " payloadHashes=" + payloadHashes + " start=" + startMs + " growBeside=" + growBeside;
    DedupWindow.Builder builder = DedupWindow.builder()
        .window(Duration.ofMillis(windowMs))
        .bucket(Duration.ofMillis(bucketMs))
        .clock(() -> readingMs)
        .capacityPolicy(policy)
        .payloadHashes(payloadHashes);
    if (maxIds > 0) {
      builder.maxIds(maxIds);
    }
    if (growBeside) {
      builder.growthExecutor(growthTasks::add);
    }
    this.window = builder.build();
    this.model = new WindowModel(windowMs, bucketMs, maxIds > 0 ? maxIds : DedupWindow.maxIdsLimit(payloadHashes),
        policy, payloadHashes, startMs);
  }

  /** The window's "now": the latest clock reading seen. */
  long nowMs() {
    return model.nowMs;
  }

  long readingMs() {
    return readingMs;
  }

  void setReading(long ms) {
    note("clock " + readingMs + " -> " + ms);
    readingMs = ms;
  }

  void advance(long deltaMs) {
    setReading(readingMs + deltaMs);
  }

  WindowModel.Outcome check(long fingerprint, long payloadHash, long rememberUntilMs) {
    note("check(" + fingerprint + ", " + payloadHash + ", "
        + (rememberUntilMs == DedupWindow.DEFAULT_REMEMBER_UNTIL ? "default" : rememberUntilMs) + ")");
    WindowModel.Outcome expected = model.check(readingMs, fingerprint, payloadHash, rememberUntilMs);
    WindowModel.Outcome actual;
    try {
      actual = WindowModel.Outcome.of(window.check(fingerprint, payloadHash, rememberUntilMs));
    } catch (IllegalArgumentException | IllegalStateException e) {
      actual = WindowModel.Outcome.threw(e);
    }
    agree("check", actual, expected);
    return actual;
  }

  WindowModel.Outcome check(long fingerprint) {
    return check(fingerprint, DedupWindow.NO_PAYLOAD_HASH, DedupWindow.DEFAULT_REMEMBER_UNTIL);
  }

  WindowModel.Outcome restore(long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs) {
    note("restore(" + fingerprint + ", " + payloadHash + ", " + firstSeenMs + ", " + expiresAtMs + ")");
    WindowModel.Outcome expected = model.restore(readingMs, fingerprint, payloadHash, firstSeenMs, expiresAtMs);
    WindowModel.Outcome actual;
    try {
      actual = WindowModel.Outcome.of(window.restore(fingerprint, payloadHash, firstSeenMs, expiresAtMs));
    } catch (IllegalArgumentException | IllegalStateException e) {
      actual = WindowModel.Outcome.threw(e);
    }
    agree("restore", actual, expected);
    return actual;
  }

  boolean contains(long fingerprint) {
    note("contains(" + fingerprint + ")");
    boolean actual = window.contains(fingerprint);
    agree("contains", actual, model.contains(readingMs, fingerprint));
    return actual;
  }

  void lookup(long fingerprint) {
    note("lookup(" + fingerprint + ")");
    agree("lookup", window.lookup(fingerprint), model.lookup(readingMs, fingerprint));
  }

  /**
   * Runs the window's upkeep, which the model does not know of: it must change no answer, only what the table holds
   * (the checks that follow compare the answers). A negative {@code maxSlots} must be refused.
   */
  void upkeep(long maxSlots) {
    note("upkeep(" + maxSlots + ")");
    if (maxSlots < 0) {
      String failure;
      try {
        window.upkeep(maxSlots);
        failure = "accepted";
      } catch (IllegalArgumentException e) {
        failure = e.getMessage().startsWith("maxSlots must be >= 0") ? null : e.getMessage();
      }
      agree("upkeep(" + maxSlots + ") refused", failure, null);
      return;
    }
    model.advance(readingMs); // upkeep moves the window to the clock's time, as a check does
    long owed = window.upkeep(maxSlots);
    agree("sweep work owed is not negative", owed >= 0, true);
  }

  /**
   * Builds the doublings the window handed to its growth executor, as a worker would, between two calls of the
   * owner: the next upkeep or check that needs room installs them. Changes no answer.
   *
   * @return the number built
   */
  int runGrowth() {
    note("growth task x" + growthTasks.size());
    int n = 0;
    for (Runnable task; (task = growthTasks.poll()) != null; n++) {
      task.run();
    }
    return n;
  }

  void held() {
    note("held()");
    agree("held", window.held(), model.held(readingMs));
  }

  void stats() {
    note("stats()");
    WindowStats stats = window.stats();
    agree("stats", WindowModel.counters(stats), model.counters(readingMs));
    long stride = model.payloadHashes ? 20 : 12;
    agree("tableBytes", stats.tableBytes(), stats.tableSlots() * stride);
  }

  void memoryStart() {
    note("memoryStartMs()");
    agree("memoryStartMs", window.memoryStartMs(), model.memoryStartMs(readingMs));
  }

  /** Full comparison: counters, and the live entries found by scanning the window's table. */
  void verifyAll() {
    stats();
    for (long fingerprint : model.liveFingerprints()) {
      lookup(fingerprint);
    }
    agree("live entries in the table", window.liveEntriesInTable(), window.held());
  }

  private void agree(String what, Object actual, Object expected) {
    operations++;
    if (!Objects.equals(actual, expected)) {
      throw new AssertionError(what + ": window answered " + actual + " but the model " + expected
          + "\n  after " + operations + " operations; " + config + "; now=" + model.nowMs + " (bucket "
          + model.bucket + ")\n  last calls, oldest first:\n    " + String.join("\n    ", trace));
    }
  }

  private void note(String call) {
    if (trace.size() == TRACE) {
      trace.removeFirst();
    }
    trace.addLast(call);
  }
}
