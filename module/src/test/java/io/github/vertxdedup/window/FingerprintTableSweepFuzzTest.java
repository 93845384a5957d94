package io.github.vertxdedup.window;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The sweep against a model, over many random tables: capacities 64 to 2,048, filled to anywhere up to one empty
 * slot, homes bunched at a few slots (often near the end of the array, so that clusters wrap), 5 % to 95 % of the
 * entries dead (clusters with more dead entries than a walk keeps emptied slots for), dead copies of a fingerprint
 * before its live copy, expiry epochs at every distance up to half a period, with and without payload hashes, swept
 * in runs of random lengths from a random cursor. After every run: every chain whole, {@code occupied} right, every
 * live entry found with its expiry word and payload hash, and exactly the dead entries not yet deleted; after a whole
 * pass, none. {@code -Ddedup.sweep.fuzz.runs=N} sets the number of tables (400 by default).
 */
class FingerprintTableSweepFuzzTest {

  /** A live entry as the model holds it. */
  private record E(long key, int meta, long payload) {}

  private static boolean dead(int meta, int threshold) {
    return meta != 0 && !FingerprintTable.isLive(meta, threshold);
  }

  @Test
  void shouldDeleteExactlyTheDeadEntriesAndKeepEveryChainWhole() {
    int[] caps = {64, 128, 256, 512, 1024, 2048};
    long runs = Long.getLong("dedup.sweep.fuzz.runs", 400);
    for (long seed = 0; seed < runs; seed++) {
      one(seed, caps[(int) (seed % caps.length)]);
    }
  }

  private static void one(long seed, int cap) {
    SplittableRandom r = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + 7);
    boolean payloads = r.nextBoolean();
    FingerprintTable t = new FingerprintTable(payloads, cap);
    assertThat(t.capacity()).isEqualTo(cap);
    long now = r.nextLong(1L << 40);
    int threshold = FingerprintTable.threshold(now);
    // position the cursor anywhere (no dead entries yet: empty table)
    t.sweep(r.nextInt(cap), threshold);
    // fill level: sometimes near full (cap - 1)
    int mode = r.nextInt(4);
    int target = mode == 0 ? cap - 1 : mode == 1 ? cap - 1 - r.nextInt(4) : r.nextInt(cap * 3 / 4 + 1);
    double deadP = new double[] {0.05, 0.3, 0.7, 0.95}[r.nextInt(4)];
    // homes concentrated: a few hot spots, often near the end of the array
    int spots = 1 + r.nextInt(4);
    int[] hot = new int[spots];
    for (int i = 0; i < spots; i++) {
      hot[i] = r.nextBoolean() ? cap - 1 - r.nextInt(Math.min(cap, 300)) : r.nextInt(cap);
    }
    Map<Long, E> live = new HashMap<>();
    List<Long> deadKeys = new ArrayList<>();
    int deadCount = 0;
    for (int n = 0; n < target; n++) {
      long fp;
      if (r.nextInt(5) == 0 && !deadKeys.isEmpty()) {
        fp = deadKeys.get(r.nextInt(deadKeys.size())); // duplicate of a dead copy
      } else {
        int home = r.nextInt(3) == 0 ? r.nextInt(cap) : (hot[r.nextInt(spots)] + r.nextInt(3)) & (cap - 1);
        fp = FingerprintTableTest.withHome(home, cap, r.nextLong());
      }
      if (live.containsKey(fp)) {
        continue;
      }
      boolean isDead = r.nextDouble() < deadP;
      // epoch distance from now: dead -> expiry in (now - HALF + 1 .. now], live -> (now .. now + HALF - 1]
      long d = r.nextInt(3) == 0 ? r.nextInt(FingerprintTable.HALF_EPOCH) : r.nextInt(3);
      long expiry = isDead ? now - d : now + 1 + d;
      if (!isDead && expiry - now >= FingerprintTable.HALF_EPOCH) {
        expiry = now + 1;
      }
      int meta = FingerprintTable.meta(expiry, 1 + r.nextInt(FingerprintTable.MAX_LIFETIME));
      assertThat(dead(meta, threshold)).isEqualTo(isDead);
      int p = t.probe(fp, threshold);
      assertThat(p).isNegative();
      long payload = r.nextLong() | 1;
      t.put(-p - 1, fp, meta, payload);
      if (isDead) {
        deadKeys.add(fp);
        deadCount++;
      } else {
        live.put(fp, new E(fp, meta, payloads ? payload : 0L));
      }
    }
    check(t, live, threshold, seed, cap, deadCount, -1);
    // partial sweeps of random counts until a whole pass is owed
    long total = 0;
    int removed = 0;
    int style = r.nextInt(3);
    while (total < cap) {
      long count = style == 0 ? cap : style == 1 ? 1 + r.nextInt(cap) : 1 + r.nextInt(Math.max(1, r.nextInt(300) + 1));
      count = Math.min(count, cap - total);
      removed += t.sweep(count, threshold);
      total += count;
      check(t, live, threshold, seed, cap, deadCount - removed, -1);
    }
    assertThat(removed).as("seed %d cap %d removed", seed, cap).isEqualTo(deadCount);
    check(t, live, threshold, seed, cap, 0, 0);
  }

  private static void check(FingerprintTable t, Map<Long, E> live, int threshold, long seed, int cap, int expectDead,
      int mustBeDead) {
    int occ = 0;
    int liveSeen = 0;
    int deadSeen = 0;
    for (int i = 0; i < cap; i++) {
      long k = t.fingerprintAt(i);
      if (k == 0) {
        assertThat(t.metaAt(i)).as("seed %d empty meta at %d", seed, i).isZero();
        continue;
      }
      occ++;
      for (int j = t.home(k); j != i; j = (j + 1) & (cap - 1)) {
        assertThat(t.fingerprintAt(j)).as("seed %d chain slot %d to %d", seed, j, i).isNotZero();
      }
      if (dead(t.metaAt(i), threshold)) {
        deadSeen++;
      } else {
        liveSeen++;
        E e = live.get(k);
        assertThat(e).as("seed %d unexpected live at %d", seed, i).isNotNull();
        assertThat(t.metaAt(i)).isEqualTo(e.meta());
        assertThat(t.payloadHashAt(i)).isEqualTo(e.payload());
      }
    }
    assertThat(occ).as("seed %d occupied", seed).isEqualTo(t.occupied());
    assertThat(liveSeen).as("seed %d live", seed).isEqualTo(live.size());
    assertThat(deadSeen).as("seed %d dead", seed).isEqualTo(expectDead);
    for (E e : live.values()) {
      int p = t.probe(e.key(), threshold);
      assertThat(p).as("seed %d probe", seed).isNotNegative();
      assertThat(t.metaAt(p)).isEqualTo(e.meta());
    }
  }
}
