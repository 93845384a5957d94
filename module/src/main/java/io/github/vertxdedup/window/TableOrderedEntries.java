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
}
