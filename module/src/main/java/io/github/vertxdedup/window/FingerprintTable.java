package io.github.vertxdedup.window;

import org.agrona.BitUtil;

/*
 * The union set of a dedup window: an open-addressing hash table of 64-bit fingerprints with linear probing, where
 * every entry carries its own expiry, so that a lookup costs one random memory access and expiry is a sequential
 * walk.
 *
 * Layout: parallel arrays indexed by slot.
 *   keys[]      fingerprint, 0 = empty slot. 8 per 64-byte cache line, so a probe (a few slots at a load of at most
 *               3/4) nearly always stays within the one line it starts in.
 *   metas[]     OCCUPIED (sign bit) | expiry epoch (EPOCH_BITS, wrapping) << LIFETIME_BITS | (lifetime - 1);
 *               0 = empty slot.
 *   payloads[]  payload hash, 0 = none; only when payload hashes are tracked.
 * A probe reads keys only; metas is read when the fingerprint matches (is that entry still live?) and by the sweep,
 * which scans metas alone (4 bytes per slot, a chunk of 256 slots per pass of a loop the JIT can vectorise) and
 * touches keys only in the clusters where it deletes. An accepted id writes both arrays, so a decision can cost two
 * cache misses: a batch reads both lines of every id ahead of its probes (touch), so that the two misses overlap with
 * each other and with the batch's other ids instead of following one another.
 *
 * Why not Agrona's LongHashSet plus one id list per bucket (the textbook bucket ring)? That shape costs two random
 * accesses per event: one to look up / insert, and one more when the id's bucket expires and the id is deleted from the
 * set. Here an expired entry is simply "dead": lookups skip it, and a sweep that walks metas sequentially
 * (hardware-prefetch friendly) removes dead entries with backward-shift deletion (Knuth, TAOCP vol. 3, 6.4, Algorithm
 * R), which keeps every probe chain intact without tombstones. It deletes all the dead entries of a cluster in one
 * walk to the cluster's end (Algorithm R with several holes at once, see compactCluster) instead of one walk per dead
 * entry: at the window's load a cluster that holds one dead entry often holds more. A dead copy of a fingerprint may
 * sit in a chain before a live one (it is re-accepted after expiry, before the sweep reaches the old copy): lookups
 * look past dead copies.
 *
 * Expiry epochs wrap every 2^EPOCH_BITS buckets. Comparisons are done modulo that period, which is correct while
 * every entry in the table lies within half a period of the current bucket; the window guarantees that by
 * capping the bucket count (MAX_LIFETIME), sweeping the whole table once per N/8 buckets while it holds a dead entry
 * (at most two passes owed at any time, so a dead entry waits at most a few windows, far below half a period), and
 * emptying the table after an idle gap of a whole window.
 *
 * Growth: at the load limit the table doubles, rebuilding itself with its live entries (rehash), on the owner's
 * thread; or a doubling is built beside the owner (startDoubling: another thread copies the live entries into the
 * doubled arrays while the owner only inserts, and the owner installs the result with the inserts made meanwhile).
 *
 * Home slot: Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): the high bits of fingerprint * 2^64/phi. Fingerprints
 * are already uniform; the multiply protects callers who pass raw sequential numbers.
 *
 * Not thread-safe: the window (and so a single event loop) owns it. Only a TableDoubling's run() runs on another
 * thread: it reads the arrays while the owner's only writes to them are inserts into empty slots.
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
  /**
   * Slots whose dead flags the sweep computes in one loop, branch-free and vectorisable, before it looks for the
   * first dead one: most slots hold no dead entry, and a test and branch per slot would cost more than the flags.
   */
  static final int SWEEP_CHUNK = 256;
  /**
   * Emptied slots a cluster walk keeps track of at most: a walk that meets more dead entries leaves the rest in place
   * and the sweep walks again from the first of them, so that the sweep allocates nothing.
   */
  static final int MAX_HOLES = 64;
  static final long FIBONACCI = 0x9E3779B97F4A7C15L;

  private final boolean payloadHashes;
  private final int maxCapacity;

  private long[] keys;
  private int[] metas;
  private long[] payloads;
  private int capacity;
  private int mask;
  private int shift;
  private int occupied;
  private int resizeAt;
  private int sweepCursor;
  /** The sweep's scratch: the dead flags of one chunk (negative = dead), and the slots a cluster walk emptied. */
  private final int[] deadFlags = new int[SWEEP_CHUNK];
  private final int[] holes = new int[MAX_HOLES];

  /** Tallies for tests and diagnostics, never reset: dead entries deleted, entries moved back. */
  long deletedEntries;
  long shiftedEntries;

  /**
   * {@link #putAscending}'s state: every slot in {@code [fillHome, fillCursor)} is occupied and every slot from
   * {@code fillCursor} on is empty, while the entries come in ascending order of their homes.
   */
  private int fillCursor;
  private int fillHome;
  private boolean fillInOrder = true;

  /** The doubling being built on another thread ({@link #startDoubling}), or null. */
  private TableDoubling doubling;

  FingerprintTable(boolean payloadHashes, int initialCapacity) {
    this.payloadHashes = payloadHashes;
    this.maxCapacity = maxCapacity(payloadHashes);
    allocate(Math.max(MIN_CAPACITY, BitUtil.findNextPositivePowerOfTwo(initialCapacity)));
  }

  /** Largest slot count: keeps the table below 2 GiB (1.5 GiB, or 2.5 GiB with payload hashes at 2^26 slots). */
  static int maxCapacity(boolean payloadHashes) {
    return payloadHashes ? 1 << 26 : 1 << 27;
  }

  /** Largest number of live entries the largest table holds at its load limit. */
  static int maxEntries(boolean payloadHashes) {
    int cap = maxCapacity(payloadHashes);
    return cap - (cap >>> 2) - 1;
  }

  private void allocate(int newCapacity) {
    keys = new long[newCapacity];
    metas = new int[newCapacity];
    payloads = payloadHashes ? new long[newCapacity] : null;
    capacity = newCapacity;
    mask = newCapacity - 1;
    shift = shiftFor(newCapacity);
    occupied = 0;
    // Load limit 3/4; the largest table may fill further, short of one empty slot that ends every probe.
    resizeAt = newCapacity == maxCapacity ? newCapacity - 1 : newCapacity - (newCapacity >>> 2);
    sweepCursor = 0;
    fillCursor = 0;
    fillHome = 0;
    fillInOrder = true;
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

  /**
   * Negative if the slot holds an entry whose expiry epoch is not after {@code threshold} (a dead one), else 0 or
   * positive. Branch-free, so that the sweep computes it for a whole chunk of slots in one loop: dead is "occupied
   * (sign bit of meta) and expiry epoch minus threshold minus one, modulo the epoch period, at least
   * {@code HALF_EPOCH - 1}", the negation of {@link #isLive} for an occupied slot, in the sign bit of the result.
   */
  private static int deadFlag(int meta, int threshold) {
    return meta & ((HALF_EPOCH - 2) - ((((meta >>> LIFETIME_BITS) & EPOCH_MASK) - threshold - 1) & EPOCH_MASK));
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
    return home(fingerprint, shift);
  }

  /** The home slot of {@code fingerprint} in a table whose {@code shift} is 64 minus log2 of its slot count. */
  static int home(long fingerprint, int shift) {
    return (int) ((fingerprint * FIBONACCI) >>> shift);
  }

  /** {@code shift} for a table of {@code capacity} slots, a power of two. */
  static int shiftFor(int capacity) {
    return Long.SIZE - Integer.numberOfTrailingZeros(capacity);
  }

  /**
   * Finds the live entry of {@code fingerprint}. Reads keys only, except for a slot holding this fingerprint.
   *
   * @return its slot, or {@code -(slot + 1)} where slot is the empty slot that ends its probe chain: the place to
   *     insert it
   */
  int probe(long fingerprint, int threshold) {
    final long[] k = keys;
    final int mask = this.mask;
    int i = home(fingerprint);
    while (true) {
      long key = k[i];
      if (key == fingerprint) {
        if (isLive(metas[i], threshold)) {
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
   * the decision writes it (an accepted id) or reads it (a matching fingerprint): it lives in another array, so it is
   * another cache line, and left to the decision its miss would come after the probe's instead of beside it.
   */
  long touch(long fingerprint) {
    int slot = home(fingerprint);
    return keys[slot] + metas[slot];
  }

  /** Writes an entry into an empty slot returned (encoded) by {@link #probe}. */
  void put(int slot, long fingerprint, int meta, long payloadHash) {
    if (keys[slot] == 0) {
      occupied++;
      if (doubling != null) {
        doubling.filled(slot);
      }
    }
    keys[slot] = fingerprint;
    metas[slot] = meta;
    if (payloadHashes) {
      payloads[slot] = payloadHash;
    }
  }

  /**
   * Puts an entry into a table being filled, entries in ascending order of their home slots (a window snapshot's
   * order), a fingerprint not already in it: into the first empty slot from its home, as a probe would find it, but
   * without probing. In that order the slots from the previous entry's home to the cursor after it are all occupied
   * and every slot from the cursor on is empty, so the first empty slot from a home is the home or the cursor,
   * whichever is later. An entry out of that order, or one past the table's end (the last cluster wraps to the first
   * slots), is put by a probe, and every later one too. O(1) per entry in order.
   */
  void putAscending(long fingerprint, int meta, long payloadHash) {
    if (occupied >= capacity - 1) {
      throw new IllegalStateException("table of " + capacity + " slots is full");
    }
    final int h = home(fingerprint);
    int slot;
    if (fillInOrder && h >= fillHome && fillCursor < capacity) {
      slot = Math.max(h, fillCursor);
      fillCursor = slot + 1;
      fillHome = h;
    } else {
      if (h < fillHome) {
        fillInOrder = false; // the cursor's invariant no longer holds: probe from now on
      }
      slot = h;
      while (keys[slot] != 0) {
        slot = (slot + 1) & mask;
      }
    }
    keys[slot] = fingerprint;
    metas[slot] = meta;
    if (payloadHashes) {
      payloads[slot] = payloadHash;
    }
    occupied++;
  }

  /**
   * Copies into this table the entries of {@code from} live at {@code threshold} ({@link #copyLive}), none of which
   * is live here. Grows this table first if they would take it past its load limit. O(slots of both).
   */
  void absorbLive(FingerprintTable from, int threshold) {
    dropDoubling();
    final long after = (long) occupied + from.occupied;
    if (after >= resizeAt && canGrow()) {
      growTo((int) Math.min(Integer.MAX_VALUE, after * 4 / 3 + 2), threshold);
    }
    if (occupied + (long) from.occupied >= capacity - 1) {
      sweep(capacity, threshold); // the largest table: make room by deleting its dead entries
    }
    occupied += copyLive(from.keys, from.metas, from.payloads, 0, from.capacity, threshold, keys, metas, payloads);
  }

  long fingerprintAt(int slot) {
    return keys[slot];
  }

  int metaAt(int slot) {
    return metas[slot];
  }

  long payloadHashAt(int slot) {
    return payloadHashes ? payloads[slot] : 0L;
  }

  /** True when the next insert into an empty slot would pass the load limit. */
  boolean needsRoom() {
    return occupied >= resizeAt;
  }

  /** @return the number of occupied slots (live or dead) at which the next insert makes room first */
  int resizeAt() {
    return resizeAt;
  }

  boolean canGrow() {
    return capacity < maxCapacity;
  }

  /**
   * Makes room for the next entry and {@code headroom} more: sweeps the whole table when dead entries fill an eighth
   * of it or more (or the table cannot grow), and doubles it when the entries left and the headroom are at or above
   * the load limit.
   *
   * @param live the number of live entries, as the window counts them
   * @param headroom entries beyond the next one that should fit under the load limit, {@code >= 0}: 0 for a check
   *     that found the table full, more for the window's upkeep ahead of the checks
   * @return false if no room could be made (largest table, full of live entries)
   */
  boolean makeRoom(long live, int headroom, int threshold) {
    dropDoubling();
    if (occupied - live >= (capacity >>> 3) || !canGrow()) {
      sweep(capacity, threshold);
    }
    if ((long) occupied + headroom < resizeAt) {
      return true;
    }
    if (!canGrow()) {
      return false;
    }
    rehash(capacity << 1, threshold);
    return true;
  }

  /**
   * Rebuilds the table with at least {@code slots} slots (rounded up to a power of two, at most the largest size),
   * keeping its live entries; nothing if it is that large already.
   */
  void growTo(int slots, int threshold) {
    int target = Math.min(maxCapacity, BitUtil.findNextPositivePowerOfTwo(Math.max(MIN_CAPACITY, slots)));
    if (target > capacity) {
      rehash(target, threshold);
    }
  }

  private void rehash(int newCapacity, int threshold) {
    dropDoubling(); // what it built would hold this table's entries, not the rebuilt one's
    final long[] oldKeys = keys;
    final int[] oldMetas = metas;
    final long[] oldPayloads = payloads;
    final int oldCapacity = capacity;
    allocate(newCapacity);
    occupied = copyLive(oldKeys, oldMetas, oldPayloads, 0, oldCapacity, threshold, keys, metas, payloads);
  }

  /**
   * Copies the entries of slots {@code [from, to)} of one table that are live at {@code threshold} into another, empty
   * where they land (a larger table being built): each into the first empty slot from its home. The rehash and a
   * {@link TableDoubling} build both use it. A slot whose expiry word reads 0 is skipped: the builder of a doubling
   * may read a slot the owner is filling.
   *
   * @param toPayloads the payload hashes' array, or null when they are not tracked (then {@code fromPayloads} too)
   * @return the number of entries copied
   */
  static int copyLive(long[] fromKeys, int[] fromMetas, long[] fromPayloads, int from, int to, int threshold,
      long[] toKeys, int[] toMetas, long[] toPayloads) {
    final int toMask = toKeys.length - 1;
    final int toShift = shiftFor(toKeys.length);
    int copied = 0;
    for (int i = from; i < to; i++) {
      final long key = fromKeys[i];
      if (key == 0) {
        continue;
      }
      final int meta = fromMetas[i];
      if (meta == 0 || !isLive(meta, threshold)) {
        continue;
      }
      int j = home(key, toShift);
      while (toKeys[j] != 0) {
        j = (j + 1) & toMask;
      }
      toKeys[j] = key;
      toMetas[j] = meta;
      if (toPayloads != null) {
        toPayloads[j] = fromPayloads[i];
      }
      copied++;
    }
    return copied;
  }

  /**
   * Visits {@code count} slots from the sweep cursor on, or a few more (a cluster in which it deletes is walked to its
   * end), and deletes the dead entries among them. A call with {@code count >= capacity()} deletes every dead entry:
   * a deletion moves an entry only into a slot emptied at or after the first dead entry of its cluster, and the sweep
   * goes on from the earliest slot where a walk left a dead entry, so no dead entry slips from the slots still to
   * visit into those visited.
   *
   * <p>Cost: about one pass over 4 bytes per slot visited, plus a walk over the rest of each cluster that holds a dead
   * entry; O(count + cluster lengths).
   *
   * @return the number of entries deleted
   */
  int sweep(long count, int threshold) {
    dropDoubling();
    final int[] m = metas;
    final int[] flags = deadFlags;
    int removed = 0;
    int i = sweepCursor;
    long visited = 0;
    while (visited < count) {
      final int n = (int) Math.min(Math.min(SWEEP_CHUNK, capacity - i), count - visited);
      for (int x = 0; x < n; x++) {
        flags[x] = deadFlag(m[i + x], threshold);
      }
      // A cluster walk changes only the slots it passes, so the flags after the slot that ended it still hold.
      int next = i + n == capacity ? 0 : i + n;
      long stepped = n;
      int x = 0;
      while (true) {
        while (x < n && flags[x] >= 0) {
          x++;
        }
        if (x == n) {
          break;
        }
        // Slots from i to where the sweep goes on, which may lie past the end of the array. A walk that left dead
        // entries moved entries around them: the flags are recomputed from the earliest one it left.
        final int through = x + compactCluster(i + x, threshold);
        removed += walkRemoved;
        if (through >= n || walkLeftDead) {
          stepped = through;
          next = (i + through) & mask;
          break;
        }
        x = through;
      }
      visited += stepped;
      i = next;
    }
    sweepCursor = i;
    occupied -= removed;
    deletedEntries += removed;
    return removed;
  }

  /** Entries the latest {@link #compactCluster} deleted, and whether it left dead entries in place. */
  private int walkRemoved;
  private boolean walkLeftDead;

  /**
   * Deletes the dead entry at {@code first} and every dead entry after it in its cluster, in one walk to the empty
   * slot that ends the cluster: backward-shift deletion (Knuth, Algorithm R) with several holes at once. The walk
   * keeps the slots it has emptied in walk order; a live entry moves to the earliest of them at or after its home
   * slot (leaving its own slot empty), or stays if there is none, and a dead entry is dropped. Every entry so keeps
   * an unbroken run of occupied slots from its home to its slot: a moved entry has no emptied slot between its home
   * and the one it takes (it took the earliest), an entry that stays had none, and the walk empties only slots after
   * the one it is at. Entries move only backwards, and never before {@code first}. After {@link #MAX_HOLES} emptied
   * slots are held, a dead entry the walk meets is kept as a live one is (moved back or left), to be deleted by the
   * next walk, which starts from the earliest slot where one was left.
   *
   * @return how many slots after {@code first} the sweep goes on (at least 1, or 0 if it left a dead entry in
   *     {@code first}): past the empty slot that ended the walk, or from the earliest slot where it left a dead entry
   *     ({@link #walkLeftDead}); {@link #walkRemoved} holds the number of entries deleted
   */
  private int compactCluster(int first, int threshold) {
    final long[] k = keys;
    final int[] m = metas;
    final int mask = this.mask;
    final int[] hs = holes;
    hs[0] = first;
    int holeCount = 1;
    int removed = 1;
    // Walk-order offset from first of the earliest slot where a dead entry was left, or -1.
    int firstLeft = -1;
    int j = first;
    while (true) {
      j = (j + 1) & mask;
      final long key = k[j];
      if (key == 0) {
        break;
      }
      final int meta = m[j];
      final boolean dead = deadFlag(meta, threshold) < 0;
      if (dead && holeCount < hs.length) {
        hs[holeCount++] = j;
        removed++;
        continue;
      }
      // A live entry, or a dead one the walk has no room for, which is kept like a live one so that every chain stays
      // whole. It may move back as far as its home slot: into an emptied slot at most `reach` slots before it.
      final int reach = (j - home(key)) & mask;
      int at = j;
      for (int h = 0; h < holeCount; h++) {
        final int hole = hs[h];
        if (((j - hole) & mask) <= reach) {
          k[hole] = key;
          m[hole] = meta;
          if (payloadHashes) {
            payloads[hole] = payloads[j];
          }
          // The hole is filled and slot j emptied: it is the latest in walk order, so it goes last.
          for (int g = h + 1; g < holeCount; g++) {
            hs[g - 1] = hs[g];
          }
          hs[holeCount - 1] = j;
          shiftedEntries++;
          at = hole;
          break;
        }
      }
      if (dead) {
        final int offset = (at - first) & mask;
        if (firstLeft < 0 || offset < firstLeft) {
          firstLeft = offset;
        }
      }
    }
    for (int h = 0; h < holeCount; h++) {
      final int hole = hs[h];
      k[hole] = 0;
      m[hole] = 0;
      if (payloadHashes) {
        payloads[hole] = 0;
      }
    }
    walkRemoved = removed;
    walkLeftDead = firstLeft >= 0;
    return walkLeftDead ? firstLeft : ((j - first) & mask) + 1;
  }

  /**
   * Forgets every entry without visiting any: replaces the arrays by new ones of {@code capacity} slots (rounded up
   * to a power of two, at least {@link #MIN_CAPACITY}), which the JVM allocates zeroed.
   */
  void clear(int capacity) {
    dropDoubling();
    allocate(Math.max(MIN_CAPACITY, BitUtil.findNextPositivePowerOfTwo(capacity)));
  }

  // ------------------------------------------------------------------------------------------ doubling beside

  /**
   * Starts a doubling to be built on another thread: {@link TableDoubling#run()} copies the live entries (as of
   * {@code threshold}) into a table of twice the slots while the owner goes on deciding on this one, then the owner
   * installs it ({@link #finishDoubling}). Until then the only change this table may take is {@link #put} into an
   * empty slot, which the doubling records so that the install copies it; any other change ({@link #sweep},
   * {@link #makeRoom}, {@link #growTo}, {@link #clear}) drops it first (the owner installs a finished one before such
   * a change if it wants it), so the builder never reads an entry that moved. The builder's reads race with the
   * owner's puts: a slot it reads half written (fingerprint without expiry word, or the reverse) it skips or copies,
   * and the install copies it again from the owner's side, over the copy if there is one.
   *
   * @param threshold the current expiry threshold
   * @return the doubling to run once, on any thread
   * @throws IllegalStateException if one is in flight or the table is at its largest size
   */
  TableDoubling startDoubling(int threshold) {
    if (doubling != null || !canGrow()) {
      throw new IllegalStateException(doubling != null ? "a doubling is in flight"
          : "the table is at its largest size (" + capacity + " slots)");
    }
    doubling = new TableDoubling(keys, metas, payloads, capacity, threshold);
    return doubling;
  }

  /** @return true while a doubling started by {@link #startDoubling} is neither installed nor dropped */
  boolean doublingInFlight() {
    return doubling != null;
  }

  /**
   * Installs the doubling in flight if its builder has finished: copies into it the entries put since it started
   * (those still live at {@code threshold}; {@link TableDoubling#mergeFilled}), then makes it this table. O(entries put
   * since the start). A builder that failed (out of memory) drops its doubling.
   *
   * @param threshold the current expiry threshold
   * @return true if a doubling was installed; false if none is in flight, it is still being built, or it failed
   */
  boolean finishDoubling(int threshold) {
    final TableDoubling d = doubling;
    if (d == null || !d.isFinished()) {
      return false;
    }
    doubling = null;
    if (!d.isBuilt()) {
      return false;
    }
    final int newOccupied = d.mergeFilled(keys, metas, payloads, threshold);
    keys = d.keys();
    metas = d.metas();
    payloads = d.payloads();
    capacity = d.capacity();
    mask = capacity - 1;
    shift = shiftFor(capacity);
    occupied = newOccupied;
    resizeAt = capacity == maxCapacity ? capacity - 1 : capacity - (capacity >>> 2);
    sweepCursor = 0;
    return true;
  }

  /**
   * Forgets the doubling in flight, if any, and cancels it ({@link TableDoubling#cancel}). Called by every change of
   * the table but a put ({@link #sweep}, {@link #makeRoom}, a rehash, {@link #clear}), so that a doubling is installed
   * only by the owner's {@link #finishDoubling}, before such a change.
   */
  void dropDoubling() {
    TableDoubling d = doubling;
    if (d != null) {
      doubling = null;
      d.cancel();
    }
  }

  /** Counts the live entries by visiting every slot: O(capacity), for tests and diagnostics. */
  int countLive(int threshold) {
    int live = 0;
    for (int i = 0; i < capacity; i++) {
      if (keys[i] != 0 && isLive(metas[i], threshold)) {
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
    return payloadHashes ? PAYLOAD_STRIDE : PLAIN_STRIDE;
  }

  long bytes() {
    return (long) capacity * stride();
  }
}
