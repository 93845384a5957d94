package io.github.vertxdedup.benchmarks.kafka;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;

/**
 * CPU time of the harness's JVM by kind of thread, between two snapshots: the split by thread kind shows which stage
 * of the consumer pipeline does the work. (On a shared machine it swings from round to round too, if less than wall
 * time for the dedup consumer.)
 *
 * <p>Kinds, by thread name: {@code poll} (the thread that calls {@code KafkaConsumer.poll}: vertx-kafka-client's
 * {@code vert.x-kafka-consumer-thread-N}, or the dedup consumer's {@code dedup-kafka-poll-*}), {@code eventLoops}
 * ({@code vert.x-eventloop-thread-N}), {@code harness} ({@code main}: it waits for the scenario's end, and the dedup
 * scenarios poll their settled counter there for the last duplicates) and {@code broker} (everything else: the in-process broker and the clients' background threads). A thread
 * that ends between the snapshots is not counted, so take the second snapshot before closing the consumer.
 *
 * <p>Uses {@link ThreadMXBean#getThreadCpuTime}; if the JVM does not measure thread CPU time there are no figures
 * ({@link #stop} returns {@code null}), never zeros. Not thread-safe: one scenario at a time.
 */
final class ThreadCpu {

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final Map<Long, Long> startNs;

  private ThreadCpu(Map<Long, Long> startNs) {
    this.startNs = startNs;
  }

  /**
   * @return the CPU time of every live thread now
   */
  static ThreadCpu start() {
    Map<Long, Long> now = new HashMap<>();
    if (THREADS.isThreadCpuTimeSupported() && THREADS.isThreadCpuTimeEnabled()) {
      for (long id : THREADS.getAllThreadIds()) {
        long ns = THREADS.getThreadCpuTime(id);
        if (ns >= 0) {
          now.put(id, ns);
        }
      }
    }
    return new ThreadCpu(now);
  }

  /**
   * @return the CPU time used since {@link #start} by the threads live now, by kind, in nanoseconds; {@code null} if
   *     the JVM does not measure thread CPU time
   */
  KafkaResults.Cpu stop() {
    if (!THREADS.isThreadCpuTimeSupported() || !THREADS.isThreadCpuTimeEnabled()) {
      return null;
    }
    long poll = 0;
    long loops = 0;
    long harness = 0;
    long broker = 0;
    long[] ids = THREADS.getAllThreadIds();
    ThreadInfo[] infos = THREADS.getThreadInfo(ids);
    for (int i = 0; i < ids.length; i++) {
      long ns = THREADS.getThreadCpuTime(ids[i]);
      if (ns < 0 || infos[i] == null) {
        continue;
      }
      long used = ns - startNs.getOrDefault(ids[i], 0L);
      String name = infos[i].getThreadName();
      if (name.startsWith("vert.x-kafka-consumer-thread") || name.startsWith("dedup-kafka-poll")) {
        poll += used;
      } else if (name.startsWith("vert.x-eventloop-thread")) {
        loops += used;
      } else if (name.equals("main")) {
        harness += used;
      } else {
        broker += used;
      }
    }
    return new KafkaResults.Cpu(poll, loops, harness, broker);
  }
}
