package io.github.vertxdedup.impl.service;

import io.vertx.core.Context;
import java.util.function.Supplier;

/**
 * Runs a partition's window upkeep ({@link io.github.vertxdedup.window.DedupWindow#upkeep}) between its requests, so
 * that the sweep of expired entries and the table's growth stay off the path of the checks: every
 * {@link #periodMs(long)} a timer (the partition's tick when that period is the tick's) calls {@link #run()}, which
 * pays the sweep work owed in runs of about {@link #SLOTS_PER_RUN} slots (a run finishes the probe cluster it is
 * deleting in), each run queued on the partition's context behind the work already there. A partition whose event
 * loop has no time left between requests still answers right: its checks pay what upkeep has not paid a bucket after
 * it fell due, as they did before upkeep existed.
 *
 * <p>On its own timer (buckets under 4 s), upkeep stops while the partition is idle ({@link #runTimed()}).
 *
 * <p>Called on the partition's event loop only.
 */
final class WindowUpkeep {

  /**
   * Slots one run's sweep visits (and the rest of the probe cluster it deletes in at the end, a handful of slots at
   * the table's load): a pause of about a millisecond or less on the event loop (a few ns per live or empty slot,
   * more per expired entry deleted), so that a request queued behind a run waits little. A doubling is built on a
   * worker (the partition's window has a growth executor) and installed by a later run, O(ids accepted meanwhile); a
   * run that sweeps the whole table to make room (dead entries fill an eighth of it) pauses for O(table).
   */
  static final long SLOTS_PER_RUN = 1 << 16;

  /**
   * The shortest period: every timer that fires wakes the partition's event loop, at about 0.1 ms of CPU each on an
   * idle 2-core virtual machine (64 partitions at 10 ms cost 0.4-0.7 of a core), so a period bounds that idle cost.
   */
  static final long MIN_PERIOD_MS = 100;

  private final Context context;
  private final Supplier<PartitionCore> ready;
  /** True while a chain of runs is queued: a timer firing meanwhile starts no second one. */
  private boolean running;
  /** The window's accepted count at the latest {@link #wanted()}: a change since then is new work for upkeep. */
  private long acceptedAtWanted;

  /**
   * @param context the partition's context, where the runs after the first are queued
   * @param ready the partition's core while it is ready to answer, else null (recovering, stopping)
   */
  WindowUpkeep(Context context, Supplier<PartitionCore> ready) {
    this.context = context;
    this.ready = ready;
  }

  /**
   * The upkeep timer's period for a bucket length: a quarter of a bucket, between {@link #MIN_PERIOD_MS} and
   * {@link PartitionVerticle#TICK_MS}. Sweep work falls due once per bucket step, and checks leave the latest step's
   * work to upkeep for one bucket, so upkeep runs a few times per bucket of 400 ms or more; with shorter buckets the
   * checks pay part of the sweep. At {@link PartitionVerticle#TICK_MS} (buckets of 4 s or more) the tick runs it: no
   * timer of its own.
   *
   * @param bucketMs the window's bucket length, ms
   * @return the period, ms
   */
  static long periodMs(long bucketMs) {
    return Math.max(MIN_PERIOD_MS, Math.min(PartitionVerticle.TICK_MS, bucketMs / 4));
  }

  /**
   * A run on the upkeep's own timer: {@link #run()}, then {@link #wanted()}. A partition cancels that timer when it
   * returns false, so that an idle partition does not wake its event loop up to ten times a second for nothing; its
   * tick sets the timer again once {@link #wanted()} sees work.
   *
   * @return true while the timer is wanted
   */
  boolean runTimed() {
    run();
    return wanted();
  }

  /**
   * Whether upkeep has work coming: the partition is ready and its window has accepted an id since the previous call
   * (growth may come near), owes sweep work (entries expired), is having its table doubled on a worker (the next
   * upkeep installs it), or a chain of runs is queued. Reads the window's counters (one small record) and runs an
   * upkeep of no slots (which moves the window to the clock's time and installs a finished doubling).
   *
   * @return true if the upkeep's timer should run
   */
  boolean wanted() {
    PartitionCore core = ready.get();
    if (core == null) {
      return false;
    }
    long accepted = core.windowStats().accepted();
    boolean accepting = accepted != acceptedAtWanted;
    acceptedAtWanted = accepted;
    // upkeep(0) first: it installs a doubling its worker has finished.
    return core.upkeep(0) > 0 || accepting || running || core.windowGrowing();
  }

  /** Pays the sweep work owed now, one run now and the others queued one at a time; nothing if a chain is queued. */
  void run() {
    if (!running) {
      step();
    }
  }

  private void step() {
    running = false; // first: a run that throws ends its chain, and the next timer starts a new one
    PartitionCore core = ready.get();
    if (core != null && core.upkeep(SLOTS_PER_RUN) > 0) {
      running = true;
      context.runOnContext(v -> step());
    }
  }
}
