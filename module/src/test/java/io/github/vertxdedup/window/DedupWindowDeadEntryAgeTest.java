package io.github.vertxdedup.window;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Random checks, batches, remember-until checks, restores, upkeep, reserves and clock steps (within a bucket, across
 * buckets, across a whole window), under both capacity policies and small {@code maxIds}: after every operation
 * {@code held} equals the live entries in the table, which the sweep's rule of owing nothing while no entry is dead
 * relies on, and no dead entry is older than {@code 3N + 16} buckets, far below the half epoch period after which
 * its wrapped expiry would read as live. {@code -Ddedup.held.fuzz.seeds=N} sets the number of windows (100 by
 * default).
 */
class DedupWindowDeadEntryAgeTest {

  private long readingMs;

  @Test
  void shouldHoldExactlyTheLiveEntriesAndSweepEveryDeadOneWithinAFewWindows() {
    long seeds = Long.getLong("dedup.held.fuzz.seeds", 100);
    for (long seed = 0; seed < seeds; seed++) {
      one(seed);
    }
  }

  private void one(long seed) {
    SplittableRandom r = new SplittableRandom(seed * 31 + 11);
    final long b = 10;
    int n = new int[] {1, 2, 3, 8, 9, 16, 60, 200}[r.nextInt(8)];
    readingMs = r.nextLong(1L << 30);
    boolean evict = r.nextBoolean();
    long maxIds = r.nextBoolean() ? 1 + r.nextInt(300) : 5_000;
    DedupWindow.Builder builder = DedupWindow.builder().window(Duration.ofMillis(n * b)).bucket(Duration.ofMillis(b))
        .clock(() -> readingMs).capacityPolicy(evict ? CapacityPolicy.EVICT_OLDEST : CapacityPolicy.REJECT)
        .payloadHashes(r.nextBoolean()).maxIds(maxIds).expectedIds((int) Math.min(maxIds, r.nextInt(3) == 0 ? 200 : 0));
    DedupWindow w = builder.build();
    long[] pool = new long[1 + r.nextInt(2000)];
    for (int i = 0; i < pool.length; i++) {
      pool[i] = r.nextLong() | 1;
    }
    int steps = 3000 + r.nextInt(3000);
    for (int step = 0; step < steps; step++) {
      int op = r.nextInt(100);
      try {
        if (op < 40) {
          long fp = pool[r.nextInt(pool.length)];
          if (r.nextBoolean()) {
            w.check(fp);
          } else {
            long t = readingMs + 1 + r.nextLong(n * b);
            w.check(fp, r.nextLong(), t);
          }
        } else if (op < 48) {
          int len = 1 + r.nextInt(70);
          long[] ids = new long[len];
          for (int i = 0; i < len; i++) {
            ids[i] = pool[r.nextInt(pool.length)];
          }
          w.checkBatch(ids, 0, len, new WindowVerdict[len]);
        } else if (op < 56) {
          long fp = pool[r.nextInt(pool.length)];
          long first = readingMs - r.nextLong(3 * n * b);
          long exp = first + r.nextLong(3 * n * b);
          w.restore(fp, r.nextLong(), first, exp);
        } else if (op < 60) {
          int len = 1 + r.nextInt(50);
          long[] f = new long[len];
          long[] p = new long[len];
          long[] fs = new long[len];
          long[] ex = new long[len];
          for (int i = 0; i < len; i++) {
            f[i] = pool[r.nextInt(pool.length)];
            p[i] = r.nextLong();
            fs[i] = readingMs - r.nextLong(3 * n * b);
            ex[i] = fs[i] + r.nextLong(3 * n * b);
          }
          w.restoreBatch(f, p, fs, ex, len);
        } else if (op < 70) {
          w.upkeep(r.nextInt(4) == 0 ? Long.MAX_VALUE : r.nextInt(2000));
        } else if (op < 92) {
          int k = r.nextInt(20);
          readingMs += k < 15 ? r.nextInt((int) b) : k < 19 ? b * (1 + r.nextInt(n)) : b * (n + r.nextInt(3));
        } else if (op < 93) {
          w.reserve(r.nextInt(3000));
        } else {
          w.contains(pool[r.nextInt(pool.length)]);
        }
      } catch (WindowFullException expected) {
        // Refused under REJECT: the invariants below hold all the same.
      }
      long held = w.held();
      long live = w.liveEntriesInTable();
      if (held != live) {
        throw new AssertionError("seed " + seed + " step " + step + " op " + op + ": held " + held + " live " + live);
      }
      FingerprintTable t = w.table();
      long bucket = Math.floorDiv(readingMs, b);
      for (int i = 0; i < t.capacity(); i++) {
        if (t.fingerprintAt(i) != 0) {
          int meta = t.metaAt(i);
          long e = FingerprintTable.expiryBucket(meta, bucket);
          if (e <= bucket) {
            if (bucket - e > 3L * n + 16) {
              throw new AssertionError("seed " + seed + " step " + step + ": dead entry aged " + (bucket - e)
                  + " buckets, n=" + n);
            }
          }
        }
      }
    }
  }
}
