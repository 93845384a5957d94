package io.github.vertxdedup.impl;

import io.github.vertxdedup.window.Fingerprinter;

/**
 * Which partition owns an event: the contract between the router at {@code <address>}, the partitions (which refuse
 * an event sent to the wrong one) and {@link io.github.vertxdedup.DedupClient}, which computes it itself.
 *
 * <p>The routing fingerprint is the fingerprint of the event's {@code key} in the scope {@code "<address>/key"} when
 * it has one, else of its {@code id} in the scope {@code "<address>/id"} ({@link Fingerprinter}, XXH3-64). The
 * partition is the high 32 bits of that fingerprint scaled to {@code [0, partitions)} by one multiplication
 * (Lemire, "Fast random integer generation in an interval", ACM TOMACS 2019): unbiased to within {@code 2^-32} and
 * independent of the low bits from which a partition's table picks slots. Fixed: changing it moves ids between
 * partitions (and their journals).
 *
 * <p>Immutable and thread-safe.
 */
final class Routing {

  private final int partitions;
  private final Fingerprinter ids;
  private final Fingerprinter keys;

  /**
   * @param address the service's base address
   * @param partitions the number of partitions, {@code >= 1}
   */
  public Routing(String address, int partitions) {
    this.partitions = partitions;
    this.ids = Fingerprinter.forScope(idScope(address));
    this.keys = Fingerprinter.forScope(keyScope(address));
  }

  /**
   * @param address the base address
   * @return the fingerprint scope of event ids
   */
  public static String idScope(String address) {
    return address + "/id";
  }

  /**
   * @param address the base address
   * @return the fingerprint scope of business keys
   */
  public static String keyScope(String address) {
    return address + "/key";
  }

  /**
   * Maps a routing fingerprint to its partition.
   *
   * @param fingerprint a routing fingerprint
   * @param partitions the number of partitions, {@code >= 1}
   * @return {@code 0 .. partitions - 1}
   */
  public static int partitionOf(long fingerprint, int partitions) {
    return (int) (((fingerprint >>> 32) * partitions) >>> 32);
  }

  /**
   * Finds the partition of an event. O(length of the id or key); with one partition it hashes nothing.
   *
   * @param id the event id, not null
   * @param key the business key, or null
   * @return {@code 0 .. partitions - 1}
   */
  public int partitionOf(String id, String key) {
    if (partitions == 1) {
      return 0;
    }
    long fp = key != null ? keys.fingerprint(key) : ids.fingerprint(id);
    return partitionOf(fp, partitions);
  }

  /** @return the number of partitions */
  public int partitions() {
    return partitions;
  }
}
