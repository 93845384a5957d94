package io.github.vertxdedup.benchmarks.service;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerticle;
import io.github.vertxdedup.kafka.testkit.LoopbackCluster;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Decisions per second of the event-bus service in a Vert.x cluster, from a client on the partition owner's member
 * and from a client on another member, single {@code check} and {@code checkBatch}, alternated A B A B in one run.
 *
 * <p>Two clustered members in this JVM, each its own Vert.x with its own Hazelcast cluster manager on loopback
 * ({@link LoopbackCluster}): {@code owner} runs the service (one partition, memory only), {@code other} only a client.
 * Both clients use {@link DedupClient#create(Vertx, DedupOptions)}, so JSON bodies either way: on the owner's member
 * the clustered event bus delivers locally (a copy of the {@code JsonObject}, no bytes), from the other member every
 * request and reply is encoded, written over a TCP connection on 127.0.0.1 and decoded. The members share this JVM's
 * cores and heap, so the remote figures include both ends' work on the same machine, as two processes on one host
 * would, without the second JVM's own JIT and GC.
 *
 * <p>A closed loop per scenario: a driver verticle on the client's member keeps {@code bench.inflight} requests
 * outstanding. Ids are all new. System properties: {@code bench.warmupSec} (5), {@code bench.measureSec} (10),
 * {@code bench.rounds} (3), {@code bench.inflight} (1000), {@code bench.batch} (100), {@code bench.windowMs} (5000).
 * Prints one line per scenario and round, and the load average per round. Real time: a benchmark, not a test.
 */
public final class ClusterThroughput {

  private static final int WARMUP_SEC = Integer.getInteger("bench.warmupSec", 5);
  private static final int MEASURE_SEC = Integer.getInteger("bench.measureSec", 10);
  private static final int ROUNDS = Integer.getInteger("bench.rounds", 3);
  private static final int IN_FLIGHT = Integer.getInteger("bench.inflight", 1000);
  private static final int BATCH = Integer.getInteger("bench.batch", 100);
  private static final long WINDOW_MS = Long.getLong("bench.windowMs", 5000L);

  private ClusterThroughput() {}

  /**
   * Runs the scenarios and prints their rates.
   *
   * @param args none
   * @throws Exception if a member or a deployment fails to start
   */
  public static void main(String[] args) throws Exception {
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    System.out.printf(Locale.ROOT, "%s: in flight %d, batch %d, window %d ms, warmup %d s, measure %d s, %d cores,"
            + " load average %.2f%n", Instant.now(), IN_FLIGHT, BATCH, WINDOW_MS, WARMUP_SEC, MEASURE_SEC,
        Runtime.getRuntime().availableProcessors(), os.getSystemLoadAverage());
    String cluster = LoopbackCluster.newClusterName();
    Vertx owner = LoopbackCluster.member(cluster).await();
    Vertx other = LoopbackCluster.member(cluster).await();
    DedupOptions options = new DedupOptions()
        .setAddress("bench")
        .setWindowMs(WINDOW_MS)
        .setBucketMs(WINDOW_MS / 100)
        .setPayloadHashes(false)
        .setMaxIdsPerPartition(100_000_000)
        .setMaxBatch(Math.max(BATCH, DedupOptions.DEFAULT_MAX_BATCH));
    long[] next = {0};
    try {
      for (int round = 1; round <= ROUNDS; round++) {
        System.out.printf(Locale.ROOT, "round %d, load average %.2f%n", round, os.getSystemLoadAverage());
        for (String scenario : List.of("check-owner", "check-remote", "batch-owner", "batch-remote")) {
          Vertx service = owner;
          Vertx caller = scenario.endsWith("owner") ? owner : other;
          String deployment = service.deployVerticle(new DedupVerticle(),
              new DeploymentOptions().setConfig(options.toJson())).await();
          DedupClient client = DedupClient.create(caller, options);
          LoadDriver driver;
          if (scenario.startsWith("check")) {
            driver = new LoadDriver(IN_FLIGHT, 1, n -> client.check(new DedupEvent("evt-" + next[0]++)));
          } else {
            driver = new LoadDriver(IN_FLIGHT, BATCH, n -> {
              List<DedupEvent> events = new ArrayList<>(BATCH);
              for (int i = 0; i < BATCH; i++) {
                events.add(new DedupEvent("evt-" + next[0]++));
              }
              return client.checkBatch(events).map(ClusterThroughput::checkSize);
            });
          }
          double rate = LoadDriver.measure(caller, driver, WARMUP_SEC, MEASURE_SEC);
          service.undeploy(deployment).await();
          System.out.printf(Locale.ROOT, "round %d  %-14s %,12.0f decisions/s   (errors %d)%n", round, scenario,
              rate, driver.errors);
          System.gc();
        }
      }
    } finally {
      Future.join(owner.close(), other.close()).await();
    }
    System.out.printf(Locale.ROOT, "load average at the end: %.2f%n", os.getSystemLoadAverage());
  }

  private static List<DedupBatchResult> checkSize(List<DedupBatchResult> results) {
    if (results.size() != BATCH) {
      throw new IllegalStateException("expected " + BATCH + " verdicts but got " + results.size());
    }
    return results;
  }
}
