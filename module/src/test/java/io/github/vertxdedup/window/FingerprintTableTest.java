package io.github.vertxdedup.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The open-addressing table on its own, against a {@link HashMap} from fingerprint to expiry bucket.
 *
 * <p>Fingerprints are partly chosen so that their home slots collide (long probe chains, chains that wrap past
 * the end of the array), which is where backward-shift deletion and dead-slot reuse can go wrong.
 */
class FingerprintTableTest {

  /** Upper bound for a test that must answer at once: only a guard against an endless probe loop. */
  private static final Duration HANG_GUARD = Duration.ofSeconds(30);

  /** The multiplicative inverse of {@link FingerprintTable#FIBONACCI} modulo 2^64. */
  private static final long FIBONACCI_INVERSE = inverse(FingerprintTable.FIBONACCI);

  private static long inverse(long odd) {
    long x = odd; // correct to 3 bits; each Newton step doubles the correct bits
    for (int i = 0; i < 5; i++) {
      x *= 2 - odd * x;
    }
    return x;
  }

  /** A fingerprint whose home slot in a table of {@code capacity} slots is {@code home}; also used by the fuzz test. */
  static long withHome(int home, int capacity, long lowBits) {
    int bits = Integer.numberOfTrailingZeros(capacity);
    long hashed = ((long) home << (Long.SIZE - bits)) | (lowBits & (-1L >>> bits));
    long fingerprint = hashed * FIBONACCI_INVERSE;
    return fingerprint == 0 ? withHome(home, capacity, lowBits + 1) : fingerprint;
  }

  private static void add(FingerprintTable table, long fingerprint, long expiry, int threshold) {
    int r = table.probe(fingerprint, threshold);
    assertThat(r).as("probe of absent %s", fingerprint).isNegative();
    table.put(-r - 1, fingerprint, FingerprintTable.meta(expiry, 1), 0L);
  }

  /**
   * {@link FingerprintTable#putAscending}: entries in ascending order of their homes land exactly where probing
   * inserts in the same order would put them, the last cluster wrapping past the table's end into its first slots
   * included; an entry out of order falls back to probing and every entry stays findable.
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
  void shouldPutEntriesInAscendingHomeOrderWhereProbingWouldPutThem(int seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int round = 0; round < 200; round++) {
      int capacity = 64 << rnd.nextInt(4);
      int n = 1 + rnd.nextInt(capacity * 3 / 4 - 1);
      // Homes crowd the end of the table in some rounds, so that the last cluster wraps.
      boolean crowdTheEnd = rnd.nextBoolean();
      List<Long> fps = new ArrayList<>();
      while (fps.size() < n) {
        long fp = rnd.nextLong() | 1;
        if (crowdTheEnd && rnd.nextInt(4) != 0 && (fp * FingerprintTable.FIBONACCI) >>> 62 != 3) {
          continue;
        }
        if (!fps.contains(fp)) {
          fps.add(fp);
        }
      }
      fps.sort((a, b) -> Long.compareUnsigned(a * FingerprintTable.FIBONACCI, b * FingerprintTable.FIBONACCI));
      boolean outOfOrder = rnd.nextInt(4) == 0 && n > 2;
      if (outOfOrder) {
        int j = 1 + rnd.nextInt(n - 1);
        fps.add(j - 1, fps.remove(j)); // one entry moves before its predecessor
      }
      int meta = FingerprintTable.meta(100, 1);
      FingerprintTable ascending = new FingerprintTable(false, capacity);
      FingerprintTable probed = new FingerprintTable(false, capacity);
      for (long fp : fps) {
        ascending.putAscending(fp, meta, 0);
        int r = probed.probe(fp, FingerprintTable.threshold(99));
        probed.put(-r - 1, fp, meta, 0);
      }
      assertThat(ascending.occupied()).isEqualTo(n);
      for (int slot = 0; slot < capacity; slot++) {
        assertThat(ascending.fingerprintAt(slot)).as("round %d, slot %d", round, slot)
            .isEqualTo(probed.fingerprintAt(slot));
      }
      for (long fp : fps) {
        assertThat(ascending.probe(fp, FingerprintTable.threshold(99))).isNotNegative();
      }
    }
  }

  @Test
  void shouldComputeHomesTheTestRelieson() {
    FingerprintTable table = new FingerprintTable(false, 64);
    for (int h = 0; h < 64; h++) {
      assertThat(table.home(withHome(h, 64, h * 31L))).isEqualTo(h);
    }
  }

  @ParameterizedTest(name = "colliding homes: {0}")
  @ValueSource(booleans = {false, true})
  void shouldAnswerLookupOfAbsentIdAtOnceWhenFilledToResizePointAndAllExpired(boolean colliding) {
    FingerprintTable table = new FingerprintTable(false, 64);
    int threshold = FingerprintTable.threshold(100);
    long n = 0;
    while (!table.needsRoom()) {
      n++;
      long fingerprint = colliding ? withHome(60, 64, n) : n * 0x5851F42D4C957F2DL;
      add(table, fingerprint, 101, threshold);
    }
    assertThat(table.occupied()).isEqualTo(48);
    int later = FingerprintTable.threshold(101); // every entry has now expired

    int r = assertTimeoutPreemptively(HANG_GUARD, () -> table.probe(-12345L, later));

    assertThat(r).isNegative();
    // The insertion point is the empty slot that ends the chain; the table is at its load limit, so the window makes
    // room first: a whole sweep deletes the 48 dead entries.
    assertThat(table.fingerprintAt(-r - 1)).isZero();
    assertThat(table.makeRoom(0, 0, later)).isTrue();
    assertThat(table.occupied()).isZero();
    int slot = -table.probe(-12345L, later) - 1;
    table.put(slot, -12345L, FingerprintTable.meta(200, 99), 0L);
    assertThat(table.occupied()).isEqualTo(1);
    assertThat(table.probe(-12345L, later)).isEqualTo(slot);
  }

  @Test
  void shouldDeleteEveryDeadEntryInOneSweepOfTheWholeTable() {
    FingerprintTable table = new FingerprintTable(false, 64);
    int threshold = FingerprintTable.threshold(0);
    for (long n = 1; !table.needsRoom(); n++) {
      add(table, withHome((int) (n % 7) + 58, 64, n), n % 3 == 0 ? 50 : 10, threshold);
    }
    int live = 0;
    for (int i = 0; i < table.capacity(); i++) {
      if (table.fingerprintAt(i) != 0 && FingerprintTable.expiryBucket(table.metaAt(i), 0) == 50) {
        live++;
      }
    }

    int removed = table.sweep(table.capacity(), FingerprintTable.threshold(10));

    assertThat(table.occupied()).isEqualTo(live);
    assertThat(removed).isEqualTo(48 - live);
    assertChainsIntact(table);
  }

  /**
   * The sweep computes the dead flags of a chunk of slots at once before it looks for the first dead one: every
   * distance between an entry's expiry epoch and the threshold must be judged as {@link FingerprintTable#isLive}
   * judges it, the edges of the live range and the wrap of the epoch period included, whatever the sweep's run
   * lengths.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {3L, 0xBADCAFEL, 77L})
  void sweep_deletesExactlyTheDeadEntriesAtEveryEpochDistance(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    int half = FingerprintTable.HALF_EPOCH;
    int period = FingerprintTable.EPOCH_MASK + 1;
    int[] edges = {0, 1, 2, half - 2, half - 1, half, half + 1, period - 2, period - 1};
    long thresholdBucket = random.nextLong(1L << 40);
    int threshold = FingerprintTable.threshold(thresholdBucket);
    FingerprintTable table = new FingerprintTable(false, 1024);
    Map<Long, Boolean> liveById = new HashMap<>();
    long fingerprint = 1;
    while (!table.needsRoom()) {
      int distance = random.nextInt(4) == 0 ? edges[random.nextInt(edges.length)] : random.nextInt(period);
      long expiry = thresholdBucket + distance;
      int meta = FingerprintTable.meta(expiry, 1);
      int r = table.probe(fingerprint, threshold);
      table.put(-r - 1, fingerprint, meta, 0L);
      liveById.put(fingerprint, FingerprintTable.isLive(meta, threshold));
      fingerprint += 1 + random.nextInt(1 << 20);
    }
    long live = liveById.values().stream().filter(b -> b).count();
    assertThat(live).as("the table must hold live and dead entries both").isBetween(1L, liveById.size() - 1L);

    // One whole pass in runs of random length (a run may start or end inside a block, or wrap past the end).
    long swept = 0;
    while (swept < table.capacity()) {
      long run = Math.min(table.capacity() - swept, 1 + random.nextInt(3 * FingerprintTable.SWEEP_CHUNK));
      table.sweep(run, threshold);
      swept += run;
    }

    assertThat(table.occupied()).isEqualTo(live);
    assertThat(table.countLive(threshold)).isEqualTo(live);
    for (Map.Entry<Long, Boolean> e : liveById.entrySet()) {
      assertThat(table.probe(e.getKey(), threshold) >= 0).as("fingerprint %d", e.getKey()).isEqualTo(e.getValue());
    }
    assertChainsIntact(table);
  }

  @Test
  void shouldFindEveryLiveEntryAfterDeletionsAroundTheEndOfTheArray() {
    FingerprintTable table = new FingerprintTable(true, 64);
    int threshold = FingerprintTable.threshold(0);
    List<Long> survivors = new ArrayList<>();
    for (int n = 1; n <= 40; n++) {
      long fingerprint = withHome((62 + n % 3) % 64, 64, n);
      boolean survives = n % 4 == 0;
      int r = table.probe(fingerprint, threshold);
      table.put(-r - 1, fingerprint, FingerprintTable.meta(survives ? 9 : 5, 1), n);
      if (survives) {
        survivors.add(fingerprint);
      }
    }
    int after = FingerprintTable.threshold(5);
    table.sweep(table.capacity(), after);

    assertThat(table.occupied()).isEqualTo(survivors.size());
    for (long fingerprint : survivors) {
      int slot = table.probe(fingerprint, after);
      assertThat(slot).isNotNegative();
      assertThat(table.fingerprintAt(slot)).isEqualTo(fingerprint);
      assertThat(table.payloadHashAt(slot)).isNotZero();
    }
    assertChainsIntact(table);
  }

  /**
   * One cluster, wrapping past the end of the array, with two dead entries: each live entry after them moves to the
   * earliest emptied slot at or after its home, not simply to the first one emptied, and the walk ends the cluster.
   */
  @Test
  void shouldMoveEachLiveEntryToTheEarliestEmptiedSlotItsChainAllows() {
    FingerprintTable table = new FingerprintTable(false, 64);
    int threshold = FingerprintTable.threshold(0);
    // Inserted in this order, they take slots 60, 61, 62, 63, 0 and 1.
    long deadA = withHome(60, 64, 1);
    long liveB = withHome(61, 64, 2);
    long deadC = withHome(60, 64, 3);
    long liveD = withHome(62, 64, 4);
    long liveE = withHome(60, 64, 5);
    long liveF = withHome(63, 64, 6);
    long[] inOrder = {deadA, liveB, deadC, liveD, liveE, liveF};
    for (long fingerprint : inOrder) {
      add(table, fingerprint, fingerprint == deadA || fingerprint == deadC ? 5 : 9, threshold);
    }
    assertThat(table.fingerprintAt(1)).isEqualTo(liveF);

    int removed = table.sweep(table.capacity(), FingerprintTable.threshold(5));

    assertThat(removed).isEqualTo(2);
    // B cannot move before its home 61; D's earliest emptied slot at or after its home 62 is 62 (C's), not 60 (A's);
    // E then takes 60, and F the slot D left, 63.
    assertThat(table.fingerprintAt(60)).isEqualTo(liveE);
    assertThat(table.fingerprintAt(61)).isEqualTo(liveB);
    assertThat(table.fingerprintAt(62)).isEqualTo(liveD);
    assertThat(table.fingerprintAt(63)).isEqualTo(liveF);
    assertThat(table.fingerprintAt(0)).isZero();
    assertThat(table.fingerprintAt(1)).isZero();
    assertThat(table.occupied()).isEqualTo(4);
    assertChainsIntact(table);
  }

  /**
   * A cluster with more dead entries than a walk keeps emptied slots for: the walk leaves the rest in place and the
   * sweep walks again from the first of them, in one whole pass as in runs of any length, across the array's end.
   */
  @ParameterizedTest(name = "run length {0}")
  @ValueSource(ints = {1, 7, 64, 300, 1024})
  void shouldDeleteEveryDeadEntryOfAClusterLongerThanAWalkKeepsTrackOf(int run) {
    FingerprintTable table = new FingerprintTable(true, 1024);
    int threshold = FingerprintTable.threshold(0);
    List<Long> survivors = new ArrayList<>();
    int dead = 0;
    for (int n = 1; n <= 700; n++) {
      long fingerprint = withHome(1000 + n % 5, 1024, n);
      boolean survives = n % 5 == 0;
      int r = table.probe(fingerprint, threshold);
      table.put(-r - 1, fingerprint, FingerprintTable.meta(survives ? 9 : 5, 1), n);
      if (survives) {
        survivors.add(fingerprint);
      } else {
        dead++;
      }
    }
    assertThat(dead).isGreaterThan(4 * FingerprintTable.MAX_HOLES);
    int after = FingerprintTable.threshold(5);

    int removed = 0;
    for (long swept = 0; swept < table.capacity(); swept += run) {
      removed += table.sweep(Math.min(run, table.capacity() - swept), after);
    }

    assertThat(removed).isEqualTo(dead);
    assertThat(table.occupied()).isEqualTo(survivors.size());
    for (long fingerprint : survivors) {
      int slot = table.probe(fingerprint, after);
      assertThat(slot).as("fingerprint %d", fingerprint).isNotNegative();
      assertThat(table.payloadHashAt(slot)).isNotZero();
    }
    assertChainsIntact(table);
  }

  @Test
  void shouldGrowAndKeepOnlyLiveEntriesWhenMakingRoom() {
    FingerprintTable table = new FingerprintTable(false, 0);
    int threshold = FingerprintTable.threshold(0);
    for (long n = 1; !table.needsRoom(); n++) {
      add(table, n, 5, threshold);
    }
    assertThat(table.makeRoom(48, 0, threshold)).isTrue();
    assertThat(table.capacity()).isEqualTo(128);
    assertThat(table.occupied()).isEqualTo(48);
    for (long n = 1; n <= 48; n++) {
      assertThat(table.probe(n, threshold)).isNotNegative();
    }
    // All dead now: room is made by sweeping, not by growing.
    for (long n = 49; !table.needsRoom(); n++) {
      add(table, n, 5, threshold);
    }
    int later = FingerprintTable.threshold(5);
    assertThat(table.makeRoom(0, 0, later)).isTrue();
    assertThat(table.capacity()).isEqualTo(128);
    assertThat(table.occupied()).isZero();
  }

  /**
   * Random add / expire / lookup / sweep / make-room steps against a map from fingerprint to absolute expiry
   * bucket. The threshold runs over several epoch periods (2^18 buckets), so wrapping expiry epochs are covered.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1L, 0xC0FFEEL})
  void shouldAgreeWithHashMapOverRandomSteps(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    int steps = 500_000;
    boolean payloadHashes = random.nextBoolean();
    FingerprintTable table = new FingerprintTable(payloadHashes, 0);
    Map<Long, Long> expiryOf = new HashMap<>(); // live entries only
    Map<Long, Long> payloadOf = new HashMap<>();
    long now = 1L << 40; // absolute bucket; only its low EPOCH_BITS reach the table
    long lastFullSweep = now;
    long[] pool = new long[0];
    for (int step = 0; step < steps; step++) {
      if (step % 50_000 == 0) {
        // A new id space every so often: small ones give duplicates and re-adds, large ones growth.
        int size = new int[] {8, 60, 700, 6_000}[random.nextInt(4)];
        pool = new long[size];
        for (int i = 0; i < size; i++) {
          pool[i] = random.nextInt(3) == 0
              ? withHome(random.nextInt(4) == 0 ? 63 : random.nextInt(3), 64, random.nextLong())
              : random.nextLong() | 1;
        }
      }
      int threshold = FingerprintTable.threshold(now);
      int op = random.nextInt(100);
      long fingerprint = pool[random.nextInt(pool.length)];
      if (op < 45) { // add, if absent
        Long expiry = expiryOf.get(fingerprint);
        boolean live = expiry != null && expiry > now;
        int r = table.probe(fingerprint, threshold);
        assertThat(r >= 0).as("step %d: live %s", step, fingerprint).isEqualTo(live);
        if (!live) {
          if (table.needsRoom()) {
            assertThat(table.makeRoom(expiryOf.size(), 0, threshold)).isTrue();
            r = table.probe(fingerprint, threshold);
          }
          long newExpiry = now + 1 + random.nextInt(random.nextBoolean() ? 4 : FingerprintTable.MAX_LIFETIME);
          long payload = random.nextLong();
          table.put(-r - 1, fingerprint, FingerprintTable.meta(newExpiry, 1 + random.nextInt(16)), payload);
          expiryOf.put(fingerprint, newExpiry);
          payloadOf.put(fingerprint, payload);
        }
      } else if (op < 80) { // lookup
        Long expiry = expiryOf.get(fingerprint);
        int r = table.probe(fingerprint, threshold);
        if (expiry != null && expiry > now) {
          assertThat(r).as("step %d: lookup of live %s", step, fingerprint).isNotNegative();
          assertThat(table.fingerprintAt(r)).isEqualTo(fingerprint);
          assertThat(FingerprintTable.expiryBucket(table.metaAt(r), now)).isEqualTo(expiry);
          assertThat(table.payloadHashAt(r)).isEqualTo(payloadHashes ? payloadOf.get(fingerprint) : 0L);
        } else {
          assertThat(r).as("step %d: lookup of dead %s", step, fingerprint).isNegative();
        }
      } else if (op < 92) { // time passes: entries expire
        now += random.nextInt(10) == 0 ? random.nextInt(2_000) : random.nextInt(3);
        final long current = now;
        expiryOf.values().removeIf(e -> e <= current);
      } else { // sweep part of the table, now and then all of it
        boolean full = random.nextInt(20) == 0;
        table.sweep(full ? table.capacity() : random.nextInt(64), threshold);
        if (full) {
          lastFullSweep = now;
          assertThat(table.occupied()).isEqualTo(expiryOf.size());
        }
      }
      if (now - lastFullSweep > FingerprintTable.HALF_EPOCH / 2) {
        // The window's promise to the table: no dead entry outlives half an epoch period.
        table.sweep(table.capacity(), FingerprintTable.threshold(now));
        lastFullSweep = now;
      }
      if (step % 25_000 == 0) {
        assertChainsIntact(table);
      }
    }
    assertChainsIntact(table);
  }

  /** Every entry is reachable from its home slot without crossing an empty slot; occupied counts them. */
  private static void assertChainsIntact(FingerprintTable table) {
    int capacity = table.capacity();
    int occupied = 0;
    for (int i = 0; i < capacity; i++) {
      long fingerprint = table.fingerprintAt(i);
      if (fingerprint == 0) {
        continue;
      }
      occupied++;
      for (int j = table.home(fingerprint); j != i; j = (j + 1) & (capacity - 1)) {
        assertThat(table.fingerprintAt(j)).as("slot %d on the chain from home to slot %d", j, i).isNotZero();
      }
    }
    assertThat(table.occupied()).isEqualTo(occupied);
  }
}
