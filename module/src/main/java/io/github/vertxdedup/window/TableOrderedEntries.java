package io.github.vertxdedup.window;

/**
 * Entries recorded earlier (a window snapshot), read in place, in table order: ascending by
 * {@code fingerprint * 0x9E3779B97F4A7C15} compared unsigned, the order of the home slots of the window's
 * Fibonacci-hashed table at any size. Entries of one fingerprint are adjacent; the first of them that is still live
 * at the restore is the one the window keeps, as {@link DedupWindow#restoreBatch} keeps the first one it is given.
 * A window restores them with {@link DedupWindow#prepareRestore} and {@link DedupWindow#restoreInPlace}, answering
 * from them before its table holds them.
 *
 * <p>Implementations must be safe for concurrent reads from several threads (the window's owner answers from them
 * while a worker builds the table from them) and must not change while a window uses them. Each accessor is O(1).
 */
public interface TableOrderedEntries {

  /** @return the number of entries, {@code >= 0} */
  long size();

  /**
   * @param i an index in {@code [0, size())}
   * @return the entry's fingerprint, never 0
   */
  long fingerprint(long i);

  /**
   * @param i an index in {@code [0, size())}
   * @return the entry's payload hash, or {@link DedupWindow#NO_PAYLOAD_HASH}
   */
  long payloadHash(long i);

  /**
   * @param i an index in {@code [0, size())}
   * @return when the entry's id was first accepted, clock milliseconds
   */
  long firstSeenMs(long i);

  /**
   * @param i an index in {@code [0, size())}
   * @return the entry's remember-until instant, clock milliseconds, {@code >= firstSeenMs(i)}
   */
  long expiresAtMs(long i);

  /**
   * Copies entries {@code [from, from + count)} into {@code dst}, four {@code long}s per entry: fingerprint, payload
   * hash, first seen, remember-until. The window's sequential passes read the entries this way; an implementation
   * that can copy in bulk (a memory-mapped file) overrides it. The default calls the accessors.
   *
   * @param from the first entry's index
   * @param count the entries to copy, {@code >= 0}
   * @param dst receives them from index 0; at least {@code 4 * count} long
   * @throws IndexOutOfBoundsException if the range lies outside the entries or {@code dst} is too short
   */
  default void copyTo(long from, int count, long[] dst) {
    java.util.Objects.checkFromIndexSize(from, count, size());
    java.util.Objects.checkFromIndexSize(0, 4L * count, dst.length);
    for (int k = 0; k < count; k++) {
      dst[4 * k] = fingerprint(from + k);
      dst[4 * k + 1] = payloadHash(from + k);
      dst[4 * k + 2] = firstSeenMs(from + k);
      dst[4 * k + 3] = expiresAtMs(from + k);
    }
  }
}
