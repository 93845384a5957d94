package io.github.vertxdedup.window;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import org.agrona.BitUtil;

/*
 * The union set of a dedup window: an open-addressing hash table of 64-bit fingerprints with linear probing, where
 * every entry carries its own expiry, so that a lookup costs one random memory access and expiry is a sequential
 * walk.
 *
 * Layout: one byte array of slots, each slot's fields side by side (interleaved), read and written through
 * VarHandle views in the platform's byte order:
 *   +0   fingerprint, 8 bytes, 0 = empty slot
 *   +8   meta, 4 bytes: OCCUPIED (sign bit) | expiry epoch (EPOCH_BITS, wrapping) << LIFETIME_BITS | (lifetime - 1);
 *        0 = empty slot
 *   +12  payload hash, 8 bytes, 0 = none; only when payload hashes are tracked
 * so a slot is 12 bytes (20 with payload hashes), as many as three parallel arrays would take. Everything a decision
 * reads or writes about one slot (is this its fingerprint, is that entry still live, write the new entry) lies in
 * one cache line, or in two adjacent ones for the few slots that straddle a line boundary (2 or 3 of every 16 plain
 * slots), and in one page: one cache miss and one TLB miss per decision, where parallel arrays of fingerprints and
 * metas cost two of each (a match reads the meta, an accepted id writes it). A probe (a few slots at a load of at
 * most 3/4) nearly always stays within the 5 or so slots of the line it starts in, or runs into the next line,
 * which the processor's adjacent-line and stream prefetchers fetch. The price is the sweep's: it reads the metas
 * only, so it now streams 12 bytes per slot instead of 4; that stream is sequential (prefetched) and small beside
 * the random accesses it saves.
 *
 * Why not Agrona's LongHashSet plus one id list per bucket (the textbook bucket ring)? That shape costs two random
 * accesses per event: one to look up / insert, and one more when the id's bucket expires and the id is deleted from the
 * set. Here an expired entry is simply "dead": lookups skip it, and a sweep that walks metas sequentially
 * (hardware-prefetch friendly) removes dead entries with backward-shift deletion (Knuth, TAOCP vol. 3, 6.4, Algorithm
 * R), which keeps every probe chain intact without tombstones. A dead copy of a fingerprint may sit in a chain before a
 * live one (it is re-accepted after expiry, before the sweep reaches the old copy): lookups look past dead copies.
 *
 * Expiry epochs wrap every 2^EPOCH_BITS buckets. Comparisons are done modulo that period, which is correct while
 * every entry in the table lies within half a period of the current bucket; the window guarantees that by
 * capping the bucket count (MAX_LIFETIME), sweeping the whole table at least once per window, and emptying the
 * table after an idle gap of a whole window.
 *
 * Home slot: Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): the high bits of fingerprint * 2^64/phi. Fingerprints
 * are already uniform; the multiply protects callers who pass raw sequential numbers.
 *
 * Not thread-safe: the window (and so a single event loop) owns it.
 */
final class FingerprintTable {

  static final int LIFETIME_BITS = 14;
  /** Largest lifetime (and so bucket count) an entry can have, in buckets. */
  static final int MAX_LIFETIME = 1 << LIFETIME_BITS;
  static final int EPOCH_BITS = Integer.SIZE - 1 - LIFETIME_BITS;
  static final int EPOCH_MASK = (1 << EPOCH_BITS) - 1;
  static final int HALF_EPOCH = 1 << (EPOCH_BITS - 1);
  private static final int LIFETIME_MASK = MAX_LIFETIME - 1;
  /** Set in the meta of every entry, so that a meta of 0 means an empty slot. */
  private static final int OCCUPIED = Integer.MIN_VALUE;

  /** Bytes per slot: fingerprint and meta, plus the payload hash when tracked. */
  static final int PLAIN_STRIDE = Long.BYTES + Integer.BYTES;
  static final int PAYLOAD_STRIDE = PLAIN_STRIDE + Long.BYTES;

  static final int MIN_CAPACITY = 64;
  /** Slots the sweep tests at once, branch-free, for a dead entry before it visits them one by one. */
  static final int SWEEP_BLOCK = 16;
  static final long FIBONACCI = 0x9E3779B97F4A7C15L;

  private final boolean payloadHashes;
  private final int maxCapacity;

  /** Reads and writes a slot's 8-byte fields (fingerprint, payload hash) at a byte offset: any alignment. */
  private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());
  /** Reads and writes a slot's meta at a byte offset. */
  private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.nativeOrder());
  /** Offset of the meta in a slot. */
  private static final int META = Long.BYTES;
  /** Offset of the payload hash in a slot (with payload hashes only). */
  private static final int PAYLOAD = Long.BYTES + Integer.BYTES;

  /** Bytes per slot: {@link #PLAIN_STRIDE} or {@link #PAYLOAD_STRIDE}. */
  private final int stride;
  /** The slots, {@code stride} bytes each; slot {@code i} starts at byte {@code i * stride}. */
  private byte[] slots;
  private int capacity;
  private int mask;
  private int shift;
  private int occupied;
  private int resizeAt;
  private int sweepCursor;

  /** Tallies for tests and diagnostics, never reset: dead entries deleted, entries moved back. */
  long deletedEntries;
  long shiftedEntries;

  FingerprintTable(boolean payloadHashes, int initialCapacity) {
    this.payloadHashes = payloadHashes;
    this.stride = payloadHashes ? PAYLOAD_STRIDE : PLAIN_STRIDE;
    this.maxCapacity = maxCapacity(payloadHashes);
    allocate(Math.max(MIN_CAPACITY, BitUtil.findNextPositivePowerOfTwo(initialCapacity)));
  }

  /**
   * Largest slot count: keeps the table, one byte array, below 2 GiB: 1.5 GiB at 2^27 plain slots, 1.25 GiB at 2^26
   * slots with payload hashes (2^27 of those would need 2.5 GiB).
   */
  static int maxCapacity(boolean payloadHashes) {
    return payloadHashes ? 1 << 26 : 1 << 27;
  }

  /** Largest number of live entries the largest table holds at its load limit. */
  static int maxEntries(boolean payloadHashes) {
    int cap = maxCapacity(payloadHashes);
    return cap - (cap >>> 2) - 1;
  }

  private void allocate(int newCapacity) {
    slots = new byte[newCapacity * stride];
    capacity = newCapacity;
    mask = newCapacity - 1;
    shift = Long.SIZE - Integer.numberOfTrailingZeros(newCapacity);
    occupied = 0;
    // Load limit 3/4; the largest table may fill further, short of one empty slot that ends every probe.
    resizeAt = newCapacity == maxCapacity ? newCapacity - 1 : newCapacity - (newCapacity >>> 2);
    sweepCursor = 0;
  }

  private static long keyAt(byte[] t, int at) {
    return (long) LONG.get(t, at);
  }

  private static int metaAt(byte[] t, int at) {
    return (int) INT.get(t, at + META);
  }

  static int meta(long expiryBucket, int lifetime) {
    return OCCUPIED | ((int) (expiryBucket & EPOCH_MASK) << LIFETIME_BITS) | (lifetime - 1);
  }

  static int threshold(long bucket) {
    return (int) (bucket & EPOCH_MASK);
  }

  /** True if an entry with this meta is still remembered, i.e. its expiry epoch is after {@code threshold}. */
  static boolean isLive(int meta, int threshold) {
    int d = (((meta >>> LIFETIME_BITS) & EPOCH_MASK) - threshold) & EPOCH_MASK;
    // Non-short-circuit '&': no branch here, the caller's one branch decides.
    return (d != 0) & (d < HALF_EPOCH);
  }

  /** True if the slot holds an entry whose expiry epoch is not after {@code threshold}. */
  private static boolean isDead(int meta, int threshold) {
    return (meta != 0) & !isLive(meta, threshold);
  }

  /** The absolute expiry bucket of an entry, given any bucket within half an epoch period of it. */
  static long expiryBucket(int meta, long nearBucket) {
    int d = (((meta >>> LIFETIME_BITS) & EPOCH_MASK) - threshold(nearBucket)) << (Integer.SIZE - EPOCH_BITS)
        >> (Integer.SIZE - EPOCH_BITS);
    return nearBucket + d;
  }

  static int lifetime(int meta) {
    return (meta & LIFETIME_MASK) + 1;
  }

  /** The slot where the probe chain of {@code fingerprint} starts. Package-private for the table's tests. */
  int home(long fingerprint) {
    return (int) ((fingerprint * FIBONACCI) >>> shift);
  }

  /**
   * Finds the live entry of {@code fingerprint}. Reads fingerprints only, except for a slot holding this fingerprint.
   *
   * @return its slot, or {@code -(slot + 1)} where slot is the empty slot that ends its probe chain: the place to
   *     insert it
   */
  int probe(long fingerprint, int threshold) {
    final byte[] t = slots;
    final int mask = this.mask;
    final int stride = this.stride;
    int i = home(fingerprint);
    while (true) {
      final int at = i * stride;
      long key = keyAt(t, at);
      if (key == fingerprint) {
        if (isLive(metaAt(t, at), threshold)) {
          return i;
        }
      } else if (key == 0) {
        return -(i + 1);
      }
      i = (i + 1) & mask;
    }
  }

  /**
   * Reads the home slot of {@code fingerprint}, its fingerprint and its expiry word, and returns a value derived from
   * both, so that the loads are not optimised away. Issued for a whole batch before probing it, these loads are
   * independent of each other and overlap in the memory system (memory-level parallelism), where a probe's
   * data-dependent branches would otherwise wait for each cache miss in turn. The expiry word is read as well because
   * the decision writes it (an accepted id) or reads it (a matching fingerprint): mostly in the fingerprint's cache
   * line, but in the next one for a slot that straddles a line boundary, whose miss would otherwise come after the
   * probe's instead of beside it.
   */
  long touch(long fingerprint) {
    final byte[] t = slots;
    final int at = home(fingerprint) * stride;
    return keyAt(t, at) + metaAt(t, at);
  }

  /** Writes an entry into an empty slot returned (encoded) by {@link #probe}. */
  void put(int slot, long fingerprint, int meta, long payloadHash) {
    final byte[] t = slots;
    final int at = slot * stride;
    if (keyAt(t, at) == 0) {
      occupied++;
    }
    LONG.set(t, at, fingerprint);
    INT.set(t, at + META, meta);
    if (payloadHashes) {
      LONG.set(t, at + PAYLOAD, payloadHash);
    }
  }

  long fingerprintAt(int slot) {
    return keyAt(slots, slot * stride);
  }

  int metaAt(int slot) {
    return metaAt(slots, slot * stride);
  }

  long payloadHashAt(int slot) {
    return payloadHashes ? (long) LONG.get(slots, slot * stride + PAYLOAD) : 0L;
  }

  /** True when the next insert into an empty slot would pass the load limit. */
  boolean needsRoom() {
    return occupied >= resizeAt;
  }

  boolean canGrow() {
    return capacity < maxCapacity;
  }

  /**
   * Makes room for one more entry: sweeps the whole table when dead entries fill an eighth of it or more (or the
   * table cannot grow), and doubles it when live entries alone are above the load limit.
   *
   * @param live the number of live entries, as the window counts them
   * @return false if no room could be made (largest table, full of live entries)
   */
  boolean makeRoom(long live, int threshold) {
    if (occupied - live >= (capacity >>> 3) || !canGrow()) {
      sweep(capacity, threshold);
    }
    if (occupied < resizeAt) {
      return true;
    }
    if (!canGrow()) {
      return false;
    }
    rehash(capacity << 1, threshold);
    return true;
  }

  private void rehash(int newCapacity, int threshold) {
    final byte[] old = slots;
    final int oldCapacity = capacity;
    allocate(newCapacity);
    final byte[] t = slots;
    for (int i = 0; i < oldCapacity; i++) {
      final int from = i * stride;
      long key = keyAt(old, from);
      if (key != 0 && isLive(metaAt(old, from), threshold)) {
        int j = home(key);
        while (keyAt(t, j * stride) != 0) {
          j = (j + 1) & mask;
        }
        final int to = j * stride;
        LONG.set(t, to, key);
        INT.set(t, to + META, metaAt(old, from));
        if (payloadHashes) {
          LONG.set(t, to + PAYLOAD, (long) LONG.get(old, from + PAYLOAD));
        }
        occupied++;
      }
    }
  }

  /**
   * Visits {@code count} slots from the sweep cursor on and deletes the dead entries among them. A call with
   * {@code count >= capacity()} deletes every dead entry: a backward shift moves an entry only into the hole at
   * or after the slot being visited, so no dead entry slips from the slots still to visit into those visited.
   *
   * @return the number of entries deleted
   */
  int sweep(long count, int threshold) {
    final byte[] t = slots;
    final int stride = this.stride;
    int removed = 0;
    int i = sweepCursor;
    long visited = 0;
    while (visited < count) {
      // One contiguous run up to the end of the array.
      final int runEnd = (int) Math.min(capacity, i + (count - visited));
      int j = i;
      while (j < runEnd) {
        final int blockEnd = Math.min(runEnd, j + SWEEP_BLOCK);
        if (blockEnd - j == SWEEP_BLOCK && !anyDead(t, j * stride, stride, threshold)) {
          j = blockEnd;
          continue;
        }
        while (j < blockEnd) {
          if (isDead(metaAt(t, j * stride), threshold)) {
            deleteAt(j);
            removed++;
            // Backward shift may have moved another entry into this slot: look at it again. A re-visit is not a new
            // slot, so it does not count (else a sweep of the whole table would stop short by one slot per
            // deletion).
            continue;
          }
          j++;
        }
      }
      visited += runEnd - i;
      i = runEnd == capacity ? 0 : runEnd;
    }
    sweepCursor = i;
    occupied -= removed;
    deletedEntries += removed;
    return removed;
  }

  /**
   * True if any of the {@link #SWEEP_BLOCK} slots from byte offset {@code at} on holds a dead entry. Branch-free over
   * the block, so that the sweep passes over blocks of live and empty slots (most of them) at a few instructions per
   * slot instead of one test and branch each: dead is "occupied (sign bit of meta) and expiry epoch minus threshold minus
   * one, modulo the epoch period, at least {@code HALF_EPOCH - 1}", the negation of {@link #isLive} for an occupied
   * slot, and the sign bit of the block's OR says whether any slot is so.
   */
  private static boolean anyDead(byte[] t, int at, int stride, int threshold) {
    int any = 0;
    for (int x = 0; x < SWEEP_BLOCK; x++) {
      final int meta = metaAt(t, at + x * stride);
      final int d = (((meta >>> LIFETIME_BITS) & EPOCH_MASK) - threshold - 1) & EPOCH_MASK;
      any |= meta & ((HALF_EPOCH - 2) - d);
    }
    return any < 0;
  }

  /** Backward-shift deletion (Knuth, Algorithm R): no tombstones, probe chains stay intact. */
  private void deleteAt(int hole) {
    final byte[] t = slots;
    final int stride = this.stride;
    int j = hole;
    while (true) {
      j = (j + 1) & mask;
      final int from = j * stride;
      long key = keyAt(t, from);
      if (key == 0) {
        break;
      }
      int h = home(key);
      boolean stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (!stays) {
        final int to = hole * stride;
        LONG.set(t, to, key);
        INT.set(t, to + META, metaAt(t, from));
        if (payloadHashes) {
          LONG.set(t, to + PAYLOAD, (long) LONG.get(t, from + PAYLOAD));
        }
        hole = j;
        shiftedEntries++;
      }
    }
    final int at = hole * stride;
    LONG.set(t, at, 0L);
    INT.set(t, at + META, 0);
    if (payloadHashes) {
      LONG.set(t, at + PAYLOAD, 0L);
    }
  }

  /**
   * Forgets every entry without visiting any: replaces the arrays by new ones of {@code capacity} slots (rounded up
   * to a power of two, at least {@link #MIN_CAPACITY}), which the JVM allocates zeroed.
   */
  void clear(int capacity) {
    allocate(Math.max(MIN_CAPACITY, BitUtil.findNextPositivePowerOfTwo(capacity)));
  }

  /** Counts the live entries by visiting every slot: O(capacity), for tests and diagnostics. */
  int countLive(int threshold) {
    int live = 0;
    for (int i = 0; i < capacity; i++) {
      if (keyAt(slots, i * stride) != 0 && isLive(metaAt(slots, i * stride), threshold)) {
        live++;
      }
    }
    return live;
  }

  int capacity() {
    return capacity;
  }

  int occupied() {
    return occupied;
  }

  int stride() {
    return stride;
  }

  long bytes() {
    return (long) capacity * stride();
  }
}
