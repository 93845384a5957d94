package io.github.vertxdedup.window;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.agrona.BitUtil;

/*
 * The union set of a dedup window: an open-addressing hash table of 64-bit fingerprints with linear probing,
 * in one flat byte array so that a lookup costs one random memory access (the slot and its neighbours share a
 * cache line), and expiry is a sequential walk.
 *
 * Slot layout (little-endian, no padding), stride 12 bytes, or 20 with payload hashes:
 *   [0..8)   fingerprint, 0 = empty slot
 *   [8..12)  meta: expiry epoch (EPOCH_BITS, wrapping) << LIFETIME_BITS | (lifetime in buckets - 1)
 *   [12..20) payload hash (only when payload hashes are tracked), 0 = none
 *
 * Why not Agrona's LongHashSet plus one id list per bucket (the seed's shape)? Measured on the seed workload that
 * shape costs two random accesses per event: one to look up / insert, and one more when the id's bucket expires
 * and the id is deleted from the set. Here every slot carries its own expiry epoch, so an expired entry is simply
 * "dead": lookups treat it as absent and inserts reuse its slot, and a sweep that walks the table sequentially
 * (hardware-prefetch friendly) removes dead entries with backward-shift deletion (Knuth, TAOCP vol. 3, 6.4,
 * Algorithm R), which keeps every probe chain intact without tombstones. Lookups stop only at a truly empty slot,
 * so a dead entry never hides a live one behind it.
 *
 * Expiry epochs wrap every 2^EPOCH_BITS buckets. Comparisons are done modulo that period, which is correct while
 * every entry in the table lies within half a period of the current bucket; the window guarantees that by
 * capping the bucket count (MAX_LIFETIME), sweeping the whole table at least once per window, and emptying the
 * table after an idle gap of a whole window.
 *
 * Home slot: Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): the high bits of fingerprint * 2^64/phi. Fingerprints
 * are already uniform; the multiply protects callers who pass raw sequential numbers.
 *
 * Memory access: plain byte-array views (VarHandle), which the JIT compiles to single loads and stores. Agrona's
 * UnsafeBuffer would do the same but needs --add-exports java.base/jdk.internal.misc on Java 17+, one more JVM flag
 * for every embedding application; a window that works without flags is worth more than that.
 *
 * Not thread-safe: the window (and so a single event loop) owns it.
 */
final class FingerprintTable {

  static final int LIFETIME_BITS = 14;
  /** Largest lifetime (and so bucket count) an entry can have, in buckets. */
  static final int MAX_LIFETIME = 1 << LIFETIME_BITS;
  static final int EPOCH_BITS = Integer.SIZE - LIFETIME_BITS;
  static final int EPOCH_MASK = (1 << EPOCH_BITS) - 1;
  static final int HALF_EPOCH = 1 << (EPOCH_BITS - 1);
  private static final int LIFETIME_MASK = MAX_LIFETIME - 1;

  static final int META_OFFSET = 8;
  static final int PAYLOAD_OFFSET = 12;
  static final int PLAIN_STRIDE = 12;
  static final int PAYLOAD_STRIDE = 20;

  static final int MIN_CAPACITY = 64;
  static final long FIBONACCI = 0x9E3779B97F4A7C15L;

  private final int stride;
  private final int maxCapacity;

  private static final VarHandle LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle INT =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  private byte[] slots;
  private int capacity;
  private int mask;
  private int shift;
  private int occupied;
  private int resizeAt;
  private int sweepCursor;

  /** Tallies for tests and diagnostics, never reset: dead entries deleted, entries moved back, dead slots reused. */
  long deletedEntries;
  long shiftedEntries;
  long reusedSlots;

  FingerprintTable(boolean payloadHashes, int initialCapacity) {
    this.stride = payloadHashes ? PAYLOAD_STRIDE : PLAIN_STRIDE;
    this.maxCapacity = maxCapacity(payloadHashes);
    allocate(Math.max(MIN_CAPACITY, BitUtil.findNextPositivePowerOfTwo(initialCapacity)));
  }

  /** Largest slot count: the byte array must stay below 2^31 bytes. */
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

  private static long getLong(byte[] a, int offset) {
    return (long) LONG.get(a, offset);
  }

  private static void putLong(byte[] a, int offset, long value) {
    LONG.set(a, offset, value);
  }

  private static int getInt(byte[] a, int offset) {
    return (int) INT.get(a, offset);
  }

  private static void putInt(byte[] a, int offset, int value) {
    INT.set(a, offset, value);
  }

  static int meta(long expiryBucket, int lifetime) {
    return ((int) (expiryBucket & EPOCH_MASK) << LIFETIME_BITS) | (lifetime - 1);
  }

  static int threshold(long bucket) {
    return (int) (bucket & EPOCH_MASK);
  }

  /** True if an entry with this meta is still remembered, i.e. its expiry epoch is after {@code threshold}. */
  static boolean isLive(int meta, int threshold) {
    int d = ((meta >>> LIFETIME_BITS) - threshold) & EPOCH_MASK;
    // Non-short-circuit '&': no branch here, the caller's one branch decides.
    return (d != 0) & (d < HALF_EPOCH);
  }

  /** The absolute expiry bucket of an entry, given any bucket within half an epoch period of it. */
  static long expiryBucket(int meta, long nearBucket) {
    int d = ((meta >>> LIFETIME_BITS) - threshold(nearBucket)) << LIFETIME_BITS >> LIFETIME_BITS;
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
   * Finds the live entry of {@code fingerprint}.
   *
   * @return its slot, or {@code -(slot + 1)} where slot is the first dead or empty slot of its probe chain: the
   *     place to insert it
   */
  int probe(long fingerprint, int threshold) {
    final byte[] s = slots;
    final int stride = this.stride;
    final int mask = this.mask;
    int free = -1;
    int i = home(fingerprint);
    while (true) {
      int off = i * stride;
      long k = getLong(s, off);
      if (k == 0) {
        return -((free >= 0 ? free : i) + 1);
      }
      boolean live = isLive(getInt(s, off + META_OFFSET), threshold);
      if (live) {
        if (k == fingerprint) {
          return i;
        }
      } else if (free < 0) {
        free = i;
      }
      i = (i + 1) & mask;
    }
  }

  /**
   * Reads the home slot of {@code fingerprint} and returns a value derived from it, so that the load is not
   * optimised away. Issued for a whole batch before probing it, these loads are independent of each other and
   * overlap in the memory system (memory-level parallelism), where a probe's data-dependent branches would
   * otherwise wait for each cache miss in turn.
   */
  long touch(long fingerprint) {
    int off = home(fingerprint) * stride;
    // The probe usually ends within a few slots, often in the next 64-byte cache line: read that one too.
    int next = Math.min(off + 64, slots.length - Long.BYTES);
    return getLong(slots, off) + getLong(slots, next);
  }

  /** Writes an entry into a slot returned (encoded) by {@link #probe}. */
  void put(int slot, long fingerprint, int meta, long payloadHash) {
    int off = slot * stride;
    if (getLong(slots, off) == 0) {
      occupied++;
    } else {
      reusedSlots++;
    }
    putLong(slots, off, fingerprint);
    putInt(slots, off + META_OFFSET, meta);
    if (stride == PAYLOAD_STRIDE) {
      putLong(slots, off + PAYLOAD_OFFSET, payloadHash);
    }
  }

  long fingerprintAt(int slot) {
    return getLong(slots, slot * stride);
  }

  int metaAt(int slot) {
    return getInt(slots, slot * stride + META_OFFSET);
  }

  long payloadHashAt(int slot) {
    return stride == PAYLOAD_STRIDE ? getLong(slots, slot * stride + PAYLOAD_OFFSET) : 0L;
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
    for (int i = 0; i < oldCapacity; i++) {
      int off = i * stride;
      long k = getLong(old, off);
      if (k != 0 && isLive(getInt(old, off + META_OFFSET), threshold)) {
        int j = home(k);
        while (getLong(slots, j * stride) != 0) {
          j = (j + 1) & mask;
        }
        System.arraycopy(old, off, slots, j * stride, stride);
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
    final byte[] s = slots;
    final int stride = this.stride;
    int removed = 0;
    int i = sweepCursor;
    long visited = 0;
    while (visited < count) {
      // One contiguous run up to the end of the array: offsets step by the stride, no index arithmetic per slot.
      final int runEnd = (int) Math.min(capacity, i + (count - visited));
      final int endOff = runEnd * stride;
      int off = i * stride;
      while (off < endOff) {
        // Both tests evaluated without a branch: slots are empty or live in random order, dead ones are few.
        boolean dead = (getLong(s, off) != 0) & !isLive(getInt(s, off + META_OFFSET), threshold);
        if (dead) {
          deleteAt(off / stride);
          removed++;
          // Backward shift may have moved another entry into this slot: look at it again. A re-visit is not a new
          // slot, so it does not count (else a sweep of the whole table would stop short by one slot per deletion).
          continue;
        }
        off += stride;
      }
      visited += runEnd - i;
      i = runEnd == capacity ? 0 : runEnd;
    }
    sweepCursor = i;
    occupied -= removed;
    deletedEntries += removed;
    return removed;
  }

  /** Backward-shift deletion (Knuth, Algorithm R): no tombstones, probe chains stay intact. */
  private void deleteAt(int hole) {
    final byte[] s = slots;
    int j = hole;
    while (true) {
      j = (j + 1) & mask;
      int off = j * stride;
      long k = getLong(s, off);
      if (k == 0) {
        break;
      }
      int h = home(k);
      boolean stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (!stays) {
        System.arraycopy(s, off, s, hole * stride, stride);
        hole = j;
        shiftedEntries++;
      }
    }
    Arrays.fill(s, hole * stride, hole * stride + stride, (byte) 0);
  }

  /** Forgets every entry in O(1): replaces the table by a new one of the smallest size. */
  void clear() {
    allocate(MIN_CAPACITY);
  }

  /** Counts the live entries by visiting every slot: O(capacity), for tests and diagnostics. */
  int countLive(int threshold) {
    int live = 0;
    for (int i = 0; i < capacity; i++) {
      int off = i * stride;
      if (getLong(slots, off) != 0 && isLive(getInt(slots, off + META_OFFSET), threshold)) {
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
    return (long) capacity * stride;
  }
}
