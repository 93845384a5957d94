package io.github.vertxdedup.window;

/**
 * Entries a window will answer from in place ({@link DedupWindow#restoreInPlace}), with what the window needs of them
 * counted ahead: made by {@link DedupWindow#prepareRestore} on any thread, in one sequential pass over the entries.
 * Opaque to callers: hand it to the window that made it.
 *
 * <p>It holds, besides the entries: which entry of each fingerprint the window keeps (the first one live at the
 * instant of the preparation, as {@link DedupWindow#restoreBatch} keeps the first it is given), how many kept entries
 * expire at each bucket of the window ahead, an index of the entries by the high bits of their table order (one
 * {@code int} per 16 to 32 entries, so a lookup is a short binary search), and the table built from them beside the
 * owner ({@link #run()}).
 *
 * <p>Threads: {@link #run()} on the builder's thread, once; the rest on the window's owner, after the hand-over of
 * this object from the preparing thread (a happens-before edge the caller provides, as a Vert.x context hand-off does).
 */
public final class PreparedRestore implements Runnable {

  /**
   * Entries the sequential passes copy at once ({@link TableOrderedEntries#copyTo}): a snapshot's block. The build
   * looks at {@link #cancelled} before each run.
   */
  private static final int RUN = 4_096;
  /** Index cells: at most 2^MAX_INDEX_BITS (64 MiB of index at 2^24), about 16 to 32 entries per cell. */
  private static final int MAX_INDEX_BITS = 24;

  final DedupWindow window;
  final TableOrderedEntries entries;
  /** The bucket of the preparation's clock reading: entries expired by then are not kept. */
  final long loadBucket;
  private final long bucketMs;
  private final int bucketCount;
  private final boolean payloadHashes;
  private final int size;
  /** True if the entries are in table order: a window refuses them otherwise. */
  final boolean ordered;
  /** Kept entries. */
  final long kept;
  /**
   * The earliest expiry bucket of a kept entry followed by an entry of its fingerprint that expires later, or
   * {@code Long.MAX_VALUE}: once that bucket has passed, a restore by batch would keep the later entry instead.
   */
  final long shadowedExpiry;
  /** {@code expiringIn[k]}: kept entries expiring at bucket {@code loadBucket + k}, {@code 1 <= k <= N}. */
  final int[] expiringIn;
  /** {@code newestFirstSeenIn[k]}: the newest first-seen bucket among them, or {@code Long.MIN_VALUE}. */
  final long[] newestFirstSeenIn;
  private final int indexBits;
  /** {@code index[c]}: the first entry whose table order's high {@code indexBits} bits are {@code >= c}. */
  private final int[] index;
  private final int tableSlots;

  private FingerprintTable built;
  private boolean started;
  /** Written last by {@link #run()}: {@link #built} is complete (or null: the build failed) for a reader of true. */
  private volatile boolean finished;
  private volatile boolean cancelled;

  PreparedRestore(DedupWindow window, TableOrderedEntries entries, long nowMs, long bucketMs, int bucketCount,
      boolean payloadHashes, java.util.function.LongToIntFunction slotsFor) {
    this.window = window;
    this.entries = entries;
    this.bucketMs = bucketMs;
    this.bucketCount = bucketCount;
    this.payloadHashes = payloadHashes;
    this.loadBucket = Math.floorDiv(nowMs, bucketMs);
    long n = entries.size();
    if (n < 0 || n > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("entries.size() must be in [0, " + Integer.MAX_VALUE + "] but was " + n);
    }
    this.size = (int) n;
    this.expiringIn = new int[bucketCount + 1];
    this.newestFirstSeenIn = new long[bucketCount + 1];
    java.util.Arrays.fill(newestFirstSeenIn, Long.MIN_VALUE);
    this.indexBits = Math.max(0, Math.min(MAX_INDEX_BITS, 63 - Long.numberOfLeadingZeros(Math.max(1, n)) - 4));
    this.index = new int[(1 << indexBits) + 1];
    boolean inOrder = true;
    long keptCount = 0;
    long previousKey = 0;
    long previousFp = 0;
    boolean keptForFp = false;
    long keptExpiry = 0;
    long shadowed = Long.MAX_VALUE;
    int cell = 0;
    final long[] run = new long[4 * RUN];
    for (int i = 0; i < size; i++) {
      final int k4 = 4 * (i & (RUN - 1));
      if (k4 == 0) {
        entries.copyTo(i, Math.min(RUN, size - i), run);
      }
      final long fp = run[k4];
      final long firstSeen = run[k4 + 2];
      final long expiresAt = run[k4 + 3];
      if (fp == 0) {
        throw new IllegalArgumentException("entry " + i + ": fingerprint must be non-zero but was 0");
      }
      if (expiresAt < firstSeen) {
        throw new IllegalArgumentException("entry " + i + ": expiresAtMs must be >= firstSeenMs (" + firstSeen
            + ") but was " + expiresAt);
      }
      final long key = fp * FingerprintTable.FIBONACCI;
      if (i > 0 && Long.compareUnsigned(key, previousKey) < 0) {
        inOrder = false;
      }
      previousKey = key;
      final int c = cellOf(key);
      while (cell < c) {
        index[++cell] = i;
      }
      if (fp != previousFp) {
        previousFp = fp;
        keptForFp = false;
      }
      final long expiry = expiryBucket(expiresAt);
      if (keptForFp) {
        if (expiry > keptExpiry && keptExpiry < shadowed) {
          shadowed = keptExpiry;
        }
        continue;
      }
      if (expiry > loadBucket) {
        keptForFp = true;
        keptExpiry = expiry;
        keptCount++;
        final int k = (int) (expiry - loadBucket);
        expiringIn[k]++;
        newestFirstSeenIn[k] = Math.max(newestFirstSeenIn[k], expiry - lifetime(expiry, firstSeen));
      }
    }
    while (cell < index.length - 1) {
      index[++cell] = size;
    }
    this.ordered = inOrder;
    this.kept = keptCount;
    this.shadowedExpiry = shadowed;
    this.tableSlots = slotsFor.applyAsInt(keptCount);
  }

  /**
   * @return the entries the window keeps: per fingerprint, the first that was live at the preparation
   */
  public long keptEntries() {
    return kept;
  }

  private int cellOf(long key) {
    return indexBits == 0 ? 0 : (int) (key >>> (Long.SIZE - indexBits));
  }

  /** The bucket from which entry {@code i}'s id is forgotten: its remember-until, at most {@code N} past the load. */
  long expiryBucket(int i) {
    return expiryBucket(entries.expiresAtMs(i));
  }

  private long expiryBucket(long expiresAtMs) {
    return Math.min(Math.floorDiv(expiresAtMs, bucketMs), loadBucket + bucketCount);
  }

  /** The lifetime in buckets the window gives an entry, as {@code DedupWindow.restore} does. */
  private int lifetime(long expiryBucket, long firstSeenMs) {
    return (int) Math.min(bucketCount, Math.max(1, expiryBucket - Math.floorDiv(firstSeenMs, bucketMs)));
  }

  /** The first-seen bucket the window gives entry {@code i}. */
  long firstSeenBucket(int i) {
    final long expiry = expiryBucket(i);
    return expiry - lifetime(expiry, entries.firstSeenMs(i));
  }

  long payloadHash(int i) {
    return payloadHashes ? entries.payloadHash(i) : DedupWindow.NO_PAYLOAD_HASH;
  }

  /**
   * Finds the kept entry of a fingerprint: a binary search within its index cell, then a walk over the entries of
   * that fingerprint. O(log(entries per cell)) reads of the entries.
   *
   * @return its index, or -1 if no entry of it was kept
   */
  int find(long fingerprint) {
    final long key = fingerprint * FingerprintTable.FIBONACCI;
    final int c = cellOf(key);
    int lo = index[c];
    int hi = index[c + 1];
    while (lo < hi) {
      final int mid = (lo + hi) >>> 1;
      if (Long.compareUnsigned(entries.fingerprint(mid) * FingerprintTable.FIBONACCI, key) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    for (int i = lo; i < size && entries.fingerprint(i) == fingerprint; i++) {
      if (expiryBucket(i) > loadBucket) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Builds the window's table from the kept entries: allocates it (the JVM zeroes it here, not on the owner's thread)
   * and places each entry in table order ({@link FingerprintTable#putAscending}): O(entries), a sequential walk of
   * both. A build the owner has cancelled does not start, or stops within {@value #RUN} entries. A
   * build that runs out of memory builds nothing: the window goes on answering from the entries in place.
   *
   * @throws IllegalStateException if called a second time
   */
  @Override
  public void run() {
    synchronized (this) {
      if (started) {
        throw new IllegalStateException("a restore's table is built once");
      }
      started = true;
    }
    FingerprintTable table = null;
    try {
      if (!cancelled) {
        table = build(true);
      }
    } catch (OutOfMemoryError e) {
      table = null;
    } finally {
      built = table;
      finished = true;
    }
  }

  private FingerprintTable build(boolean stoppable) {
    final FingerprintTable t = new FingerprintTable(payloadHashes, tableSlots);
    long previousFp = 0;
    boolean keptForFp = false;
    final long[] run = new long[4 * RUN];
    for (int i = 0; i < size; i++) {
      final int k4 = 4 * (i & (RUN - 1));
      if (k4 == 0) {
        if (stoppable && cancelled) {
          return null;
        }
        entries.copyTo(i, Math.min(RUN, size - i), run);
      }
      final long fp = run[k4];
      if (fp != previousFp) {
        previousFp = fp;
        keptForFp = false;
      }
      if (keptForFp) {
        continue;
      }
      final long expiry = expiryBucket(run[k4 + 3]);
      if (expiry > loadBucket) {
        keptForFp = true;
        t.putAscending(fp, FingerprintTable.meta(expiry, lifetime(expiry, run[k4 + 2])),
            payloadHashes ? run[k4 + 1] : DedupWindow.NO_PAYLOAD_HASH);
      }
    }
    return t;
  }

  /** Owner: true once {@link #run()} has ended (built or not). */
  boolean isFinished() {
    return finished;
  }

  /** Owner, after {@link #isFinished()}: the built table, or null if the build failed or was cancelled. */
  FingerprintTable built() {
    return built;
  }

  /** Owner: the build does not start, or stops soon; lets go of its table. */
  void cancel() {
    cancelled = true;
    if (finished) {
      built = null;
    }
  }

  /**
   * Owner: builds the table on this thread, now, O(entries), and cancels the build beside it, whether it has not
   * started, is running (it stops soon) or has finished (its table is let go).
   */
  FingerprintTable buildOnOwner() {
    cancel();
    return build(false);
  }
}
