package io.github.vertxdedup.benchmarks.window;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * CPU time, for figures taken on a machine shared with other work: time the scheduler gives to another process does
 * not count, where a wall clock would count it. {@link #nowNs()} is the whole process's, so that the garbage
 * collector's threads count too and a structure that makes garbage pays for its collection as it does in wall time;
 * {@link #threadNowNs()} is the calling thread's. The cache and memory bandwidth a neighbour takes still slow the
 * process down, which is why the window's figures are also given as ratios to the memory floor measured in the same
 * run ({@link MemoryFloor}). Stateless; thread-safe.
 */
final class CpuTime {

  private static final com.sun.management.OperatingSystemMXBean OS = operatingSystem();
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private CpuTime() {}

  private static com.sun.management.OperatingSystemMXBean operatingSystem() {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
      return os;
    }
    throw new UnsupportedOperationException(
        "the JVM must provide com.sun.management.OperatingSystemMXBean (process CPU time) but does not");
  }

  /**
   * The process's CPU time, all threads. Its resolution is the operating system's accounting tick (10 ms on Linux):
   * for a run of a second or more, as a 10 M-event run is, well under 1 %.
   *
   * @return the process's CPU time (user and system, all threads), nanoseconds from an arbitrary origin
   * @throws UnsupportedOperationException if this JVM cannot measure it
   */
  static long nowNs() {
    long ns = OS.getProcessCpuTime();
    if (ns < 0) {
      throw new UnsupportedOperationException("process CPU time must be available but the JVM returned " + ns);
    }
    return ns;
  }

  /**
   * The calling thread's CPU time, to the nanosecond: for the memory floor's passes, which are too short for the
   * process's tick and make no garbage, so that the two measures count the same work.
   *
   * @return the calling thread's CPU time (user and system), nanoseconds from an arbitrary origin
   * @throws UnsupportedOperationException if this JVM cannot measure it
   */
  static long threadNowNs() {
    if (!THREADS.isCurrentThreadCpuTimeSupported()) {
      throw new UnsupportedOperationException("thread CPU time must be supported by the JVM but is not");
    }
    return THREADS.getCurrentThreadCpuTime();
  }
}
