package io.github.vertxdedup.window;

import java.util.Arrays;

/**
 * A doubling of a {@link FingerprintTable} built beside its owner ({@link FingerprintTable#startDoubling}): {@link
 * #run()} runs once, on any thread, and copies the entries live at the start into arrays of twice the slots; the rest
 * is the owner's: it records the slots it fills meanwhile ({@link #filled}), and installs the result with them
 * ({@link FingerprintTable#finishDoubling}, {@link #mergeFilled}) or drops it ({@link #cancel}).
 *
 * <p>Threads: {@link #run()} on the builder's thread; every other method on the owner's. The result is published by
 * {@link #isFinished()} (a volatile written last); the table to read is handed over under this object's lock, so that
 * a cancel lets go of it whether or not the run has started.
 */
final class TableDoubling implements Runnable {

  /** Slots the run copies between two looks at {@link #cancelled}. */
  private static final int CANCEL_CHECK_SLOTS = 4_096;
  /** Entries whose slots {@link #mergeFilled} reads ahead at once, as {@code DedupWindow.PREFETCH_GROUP} does. */
  private static final int MERGE_GROUP = 16;

  /** The table being doubled; null once cancelled or taken by the run (guarded by this). */
  private long[] fromKeys;
  private int[] fromMetas;
  private long[] fromPayloads;
  private final int fromCapacity;
  private final int threshold;
  private final int capacity;
  private long[] keys;
  private int[] metas;
  private long[] payloads;
  private int occupied;
  /** Written last by {@link #run()}: the fields above are complete, for the thread that reads it true. */
  private volatile boolean finished;
  /** Set by the owner when it drops this doubling: the run stops (see {@link #CANCEL_CHECK_SLOTS}). */
  private volatile boolean cancelled;
  private boolean started;
  /** Owner only: the slots of the table being doubled that were filled since the start, in order. */
  private int[] filled = new int[64];
  private int filledCount;
  /** Keeps {@link #mergeFilled}'s read-ahead loads from being optimised away. */
  private long mergeSink;

  /**
   * @param keys the table's fingerprints, its expiry words and payload hashes (null when not tracked)
   * @param capacity its slot count
   * @param threshold the expiry threshold at the start: the run copies the entries live at it
   */
  TableDoubling(long[] keys, int[] metas, long[] payloads, int capacity, int threshold) {
    this.fromKeys = keys;
    this.fromMetas = metas;
    this.fromPayloads = payloads;
    this.fromCapacity = capacity;
    this.threshold = threshold;
    this.capacity = capacity << 1;
  }

  /**
   * Allocates the doubled arrays (the JVM zeroes them here, not on the owner's thread) and copies into them every
   * entry of the table being doubled that is live at the start's threshold ({@link FingerprintTable#copyLive}):
   * O(table slots). Reads that table while its owner puts into it (see {@link FingerprintTable#startDoubling}): a
   * fingerprint is read whole, as a 64-bit JVM reads a {@code long} array element (JLS 17.7 lets a 32-bit one split
   * it). A doubling the owner has dropped does not start, or stops within {@link #CANCEL_CHECK_SLOTS} slots. A run
   * that fails builds nothing, and the owner drops the doubling: out of memory ends the run quietly, anything else
   * reaches the thread's handler.
   *
   * @throws IllegalStateException if called a second time
   */
  @Override
  public void run() {
    final long[] fromKeys;
    final int[] fromMetas;
    final long[] fromPayloads;
    synchronized (this) {
      if (started) {
        throw new IllegalStateException("a doubling runs once");
      }
      started = true;
      fromKeys = this.fromKeys;
      fromMetas = this.fromMetas;
      fromPayloads = this.fromPayloads;
      this.fromKeys = null;
      this.fromMetas = null;
      this.fromPayloads = null;
    }
    try {
      if (cancelled) {
        return;
      }
      final long[] nk = new long[capacity];
      final int[] nm = new int[capacity];
      final long[] np = fromPayloads != null ? new long[capacity] : null;
      int n = 0;
      for (int from = 0; from < fromCapacity; from += CANCEL_CHECK_SLOTS) {
        if (cancelled) {
          return; // nothing will install it: stop reading the dropped table
        }
        n += FingerprintTable.copyLive(fromKeys, fromMetas, fromPayloads, from,
            Math.min(fromCapacity, from + CANCEL_CHECK_SLOTS), threshold, nk, nm, np);
      }
      keys = nk;
      metas = nm;
      payloads = np;
      occupied = n;
    } catch (OutOfMemoryError e) {
      // Not built: the owner drops it, and the checks double the table when they need room.
    } finally {
      finished = true;
    }
  }

  /** Owner: stops the run (or keeps it from starting) and lets go of the table it would read. */
  synchronized void cancel() {
    cancelled = true;
    fromKeys = null;
    fromMetas = null;
    fromPayloads = null;
  }

  /** Owner: records a slot of the table being doubled that it filled since the start. */
  void filled(int slot) {
    if (filledCount == filled.length) {
      filled = Arrays.copyOf(filled, filledCount << 1);
    }
    filled[filledCount++] = slot;
  }

  /** @return true once {@link #run()} has returned, whatever it built */
  boolean isFinished() {
    return finished;
  }

  /** @return true if the run, finished, built the doubled table (not cancelled, not failed) */
  boolean isBuilt() {
    return finished && keys != null;
  }

  /** For tests: the slots of the table the run built, 0 if it built none (cancelled, failed, not run yet). */
  int builtSlots() {
    return isBuilt() ? keys.length : 0;
  }

  int capacity() {
    return capacity;
  }

  long[] keys() {
    return keys;
  }

  int[] metas() {
    return metas;
  }

  long[] payloads() {
    return payloads;
  }

  /**
   * Owner, once built: copies into the doubled arrays the entries of the filled slots still live at {@code threshold},
   * read from the table being doubled as the owner wrote them. The run may have copied such an entry (possibly half
   * written): the live copy of its fingerprint is that entry, since the window never holds two live entries of one
   * fingerprint, and gets its words again. O(filled slots), reading ahead the slots of a group of them at once: both
   * sides are random accesses, and read one after the other each would wait for its own cache miss.
   *
   * @param oldKeys the table being doubled, as it is now (its expiry words, its payload hashes or null)
   * @param threshold the current expiry threshold
   * @return the occupied slots of the doubled table
   */
  int mergeFilled(long[] oldKeys, int[] oldMetas, long[] oldPayloads, int threshold) {
    final long[] nk = keys;
    final int[] nm = metas;
    final int newMask = capacity - 1;
    final int newShift = FingerprintTable.shiftFor(capacity);
    int newOccupied = occupied;
    long sink = 0;
    for (int f = 0; f < filledCount; f++) {
      if (f % MERGE_GROUP == 0) {
        // The old slots of the next group, and the new home slots of this one (read ahead by the previous group).
        for (int g = f + MERGE_GROUP; g < Math.min(filledCount, f + 2 * MERGE_GROUP); g++) {
          sink += oldKeys[filled[g]] + oldMetas[filled[g]];
        }
        for (int g = f; g < Math.min(filledCount, f + MERGE_GROUP); g++) {
          final int home = FingerprintTable.home(oldKeys[filled[g]], newShift);
          sink += nk[home] + nm[home];
        }
      }
      final int slot = filled[f];
      final long key = oldKeys[slot];
      final int meta = oldMetas[slot];
      if (key == 0 || !FingerprintTable.isLive(meta, threshold)) {
        continue;
      }
      int j = FingerprintTable.home(key, newShift);
      while (nk[j] != 0 && !(nk[j] == key && FingerprintTable.isLive(nm[j], threshold))) {
        j = (j + 1) & newMask;
      }
      if (nk[j] == 0) {
        newOccupied++;
      }
      nk[j] = key;
      nm[j] = meta;
      if (payloads != null) {
        payloads[j] = oldPayloads[slot];
      }
    }
    mergeSink += sink;
    return newOccupied;
  }
}
