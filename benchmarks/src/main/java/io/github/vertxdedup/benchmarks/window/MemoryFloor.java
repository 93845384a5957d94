package io.github.vertxdedup.benchmarks.window;

import java.util.SplittableRandom;

/*
 * The memory floor a hash table of a given size sits on, measured on the machine that runs the window's benchmark, so
 * that the window's cost per event can be given as a multiple of it instead of as an absolute time that depends on
 * the machine and its load.
 *
 * Two costs, on one long[] of the table's byte size, filled so that every page is mapped before anything is timed:
 *   independent  reads of random elements whose addresses do not depend on one another (the next index comes from a
 *                counter through a hash): the processor overlaps as many of the cache (and TLB) misses as it can
 *                keep in flight, so this is the cost per miss of a perfectly batched structure: the floor of
 *                checkBatch, which knows a whole poll's ids before it reads any slot.
 *   dependent    a pointer chase through one random cycle over all elements (Sattolo's algorithm: each element holds
 *                the index of the next): each load's address is the previous load's value, so no two misses
 *                overlap. This is the floor of a single check, whose caller needs its answer before it can send the
 *                next id.
 * Each figure is the median of a few passes, each long enough to leave the caches of the previous one behind. Time is
 * CPU time (CpuTime: the thread's, as a pass is too short for the process's accounting tick and collects no garbage),
 * like the window's figures it is set against: on a machine shared with other work, time the scheduler gives to
 * another process counts in neither.
 */

/**
 * Measures the independent and the dependent random-load cost of a table of a given size (see the comment above).
 * Not thread-safe; allocates the table for the duration of {@link #measure}.
 */
public final class MemoryFloor {

  /** Independent loads per timed pass. */
  static final int INDEPENDENT_LOADS = 4_000_000;
  /** Dependent loads per timed pass: fewer, as each costs a whole memory latency. */
  static final int DEPENDENT_LOADS = 500_000;
  /** Timed passes per figure, after one untimed pass of each kind; the figure is their median. */
  static final int PASSES = 5;

  /**
   * The two costs, nanoseconds per load.
   *
   * @param tableBytes the size of the table measured, bytes
   * @param independentNs one random load among many independent ones
   * @param dependentNs one random load whose address depends on the previous load
   */
  public record Floor(long tableBytes, double independentNs, double dependentNs) {}

  /** Keeps the loads' results live so that the JIT cannot drop them. */
  private static long sink;

  private MemoryFloor() {}

  /**
   * Measures both costs on a new {@code long[]} of {@code tableBytes} bytes (rounded down to whole longs). Takes
   * a few seconds per 100 MB.
   *
   * @param tableBytes the table's size, at least 64 bytes and below 16 GiB
   * @return the measured costs
   * @throws IllegalArgumentException if {@code tableBytes} is out of range
   */
  public static Floor measure(long tableBytes) {
    if (tableBytes < 64 || tableBytes / Long.BYTES > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("tableBytes must be in [64, 16 GiB) but was " + tableBytes);
    }
    final int n = (int) (tableBytes / Long.BYTES);
    final long[] table = new long[n];
    // Sattolo's algorithm: a uniformly random permutation with a single cycle through all n elements.
    for (int i = 0; i < n; i++) {
      table[i] = i;
    }
    SplittableRandom random = new SplittableRandom(7);
    for (int i = n - 1; i > 0; i--) {
      int j = random.nextInt(i);
      long t = table[i];
      table[i] = table[j];
      table[j] = t;
    }
    independent(table, INDEPENDENT_LOADS);
    dependent(table, DEPENDENT_LOADS);
    double[] independent = new double[PASSES];
    double[] dependent = new double[PASSES];
    for (int p = 0; p < PASSES; p++) {
      independent[p] = independent(table, INDEPENDENT_LOADS);
      dependent[p] = dependent(table, DEPENDENT_LOADS);
    }
    return new Floor((long) n * Long.BYTES, median(independent), median(dependent));
  }

  /** Random loads whose addresses come from a counter: ns per load. */
  static double independent(long[] table, int loads) {
    final long n = table.length;
    final long start = System.nanoTime() ^ sink;
    long sum = 0;
    long t0 = CpuTime.threadNowNs();
    for (int i = 0; i < loads; i++) {
      // multiplyHigh maps the uniform 64-bit hash onto [0, n) without a division.
      int index = (int) Math.multiplyHigh(EventStream.mix(start + i) >>> 1, n << 1);
      sum += table[index];
    }
    long elapsed = CpuTime.threadNowNs() - t0;
    sink += sum;
    return elapsed / (double) loads;
  }

  /** Loads that follow the cycle stored in the table: ns per load. */
  static double dependent(long[] table, int loads) {
    int index = (int) ((System.nanoTime() ^ sink) & Integer.MAX_VALUE) % table.length;
    long t0 = CpuTime.threadNowNs();
    for (int i = 0; i < loads; i++) {
      index = (int) table[index];
    }
    long elapsed = CpuTime.threadNowNs() - t0;
    sink += index;
    return elapsed / (double) loads;
  }

  static double median(double[] values) {
    double[] v = values.clone();
    java.util.Arrays.sort(v);
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
}
