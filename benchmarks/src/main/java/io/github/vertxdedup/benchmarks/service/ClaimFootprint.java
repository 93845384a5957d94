package io.github.vertxdedup.benchmarks.service;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Heap a partition keeps per claim that was committed while its lease still runs: what an effect-first consumer holds
 * for one lease ({@code leaseMs}, 30 s by default) of claims, since a repeated commit is answered COMMITTED until the
 * lease ends.
 *
 * <p>One memory-only partition ({@link LocalPartition#deployInMemory}) with a {@link ManualClock} that never moves (so
 * no lease ends), its window pre-sized for every id (so the window's table is allocated before the first reading);
 * {@code claims} ids are claimed and committed in-process in batches of 1,000. The used heap after full collections
 * ({@code System.gc()}, three times, 200 ms apart) is read before the first claim and after the last commit; the
 * difference over the claims is printed: the window's entries are in the table allocated before, so the difference is
 * what the claims left behind. Run with {@code -XX:+UseParallelGC} for the most repeatable reading (a full collection
 * compacts; G1 may keep some garbage).
 *
 * <p>Usage: {@code ClaimFootprint [claims]} (1,000,000 by default). Not a JMH benchmark: it measures a size, once.
 */
public final class ClaimFootprint {

  private static final int BATCH = 1_000;

  private ClaimFootprint() {}

  /**
   * @param args {@code [claims]}
   * @throws Exception if the partition fails
   */
  public static void main(String[] args) throws Exception {
    int claims = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    if (claims < BATCH) {
      throw new IllegalArgumentException("claims must be >= " + BATCH + " but was " + claims);
    }
    Vertx vertx = Vertx.vertx();
    try {
      DedupOptions options = new DedupOptions().setAddress("footprint").setPartitions(1)
          .setWindow(Duration.ofHours(1)).setLeaseMs(30_000).setMaxBatch(BATCH)
          .setExpectedIdsPerPartition(claims).validate();
      ManualClock clock = new ManualClock(1_700_000_000_000L);
      LocalPartition client = LocalPartition.deployInMemory(vertx, options, clock, null).toCompletionStage()
          .toCompletableFuture().get(30, TimeUnit.SECONDS);
      long before = usedAfterGc();
      for (int from = 0; from < claims; from += BATCH) {
        List<DedupEvent> batch = new ArrayList<>(BATCH);
        for (int i = from; i < Math.min(claims, from + BATCH); i++) {
          batch.add(new DedupEvent("order-" + i));
        }
        List<DedupBatchResult> claimed = client.claimBatch(batch).toCompletionStage().toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
        List<DedupEvent> commits = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
          if (claimed.get(i).failed()) {
            throw new IllegalStateException("a claim of batch " + from / BATCH + " failed: " + claimed.get(i));
          }
          commits.add(new DedupEvent(batch.get(i).getId()).setClaimToken(claimed.get(i).result().claimToken()));
        }
        List<DedupCommitResult> committed = client.commitBatch(commits).toCompletionStage().toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
        if (!committed.stream().allMatch(DedupCommitResult::committed)) {
          throw new IllegalStateException("a commit of batch " + from / BATCH + " failed: " + committed);
        }
      }
      long after = usedAfterGc();
      System.out.printf(Locale.ROOT, "%,d claims committed inside their lease: used heap %,d -> %,d bytes,"
          + " %.1f bytes per claim%n", claims, before, after, (after - before) / (double) claims);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static long usedAfterGc() throws InterruptedException {
    Runtime r = Runtime.getRuntime();
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(200);
    }
    return r.totalMemory() - r.freeMemory();
  }
}
