package io.github.vertxdedup.impl.protocol;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.window.Fingerprinter;

/**
 * Which partition owns an event, and which events a service admits at all: the one contract between the router at
 * {@code <address>}, the partitions (which refuse an event sent to the wrong one, or one the mode does not admit) and
 * {@link io.github.vertxdedup.DedupClient}, which computes the partition itself. All three ask this class, so they
 * cannot disagree.
 *
 * <p>Every copy of an event must reach the partition that saw the first one, and an event is a duplicate if its id
 * or its business key was seen. With more than one partition both can hold only if every copy is routed by the same
 * value, whatever else it carries. So the service routes by one field, chosen by {@link DedupOptions#isRouteByKey()}:
 * <ul>
 *   <li>{@code routeByKey = true}: every event carries a non-empty {@code key} and is routed by it. Copies share the
 *       key, so they meet, and the id is deduplicated too inside that partition. An event without a key is refused.
 *   <li>{@code routeByKey = false} (the default): every event is routed by its {@code id}. A key cannot be checked
 *       across partitions routed by id (two events with the same key and different ids land apart), so with more
 *       than one partition an event that carries a key is refused; with one partition routing plays no part and a
 *       key is deduplicated as well.
 * </ul>
 *
 * <p>The routing fingerprint is the fingerprint of the routing field, the key in the scope {@code "<address>/key"}
 * or the id in the scope {@code "<address>/id"} ({@link Fingerprinter}, XXH3-64). The partition is the high 32 bits
 * of that fingerprint scaled to {@code [0, partitions)} by one multiplication (Lemire, "Fast random integer generation
 * in an interval", ACM TOMACS 2019): unbiased to within {@code 2^-32} and independent of the low bits from which a
 * partition's table picks slots. Fixed: changing it, the partition count or the mode moves events between partitions
 * (and their journals).
 *
 * <p>Immutable and thread-safe.
 */
public final class PartitionRouting {

  /** What {@link #partitionOf(String, String)} answers for an event the service refuses before routing it. */
  public static final int NOT_ADMITTED = -1;

  private final int partitions;
  private final boolean byKey;
  private final Fingerprinter ids;
  private final Fingerprinter keys;

  /**
   * @param options the service's options: {@code address}, {@code partitions} and {@code routeByKey}
   */
  public PartitionRouting(DedupOptions options) {
    this.partitions = options.getPartitions();
    this.byKey = options.isRouteByKey();
    this.ids = Fingerprinter.forScope(idScope(options.getAddress()));
    this.keys = Fingerprinter.forScope(keyScope(options.getAddress()));
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
  static String keyScope(String address) {
    return address + "/key";
  }

  /**
   * Maps a routing fingerprint to its partition.
   *
   * @param fingerprint a routing fingerprint
   * @param partitions the number of partitions, {@code >= 1}
   * @return {@code 0 .. partitions - 1}
   */
  static int partitionOf(long fingerprint, int partitions) {
    return (int) (((fingerprint >>> 32) * partitions) >>> 32);
  }

  /**
   * Finds the partition of an event from its strings, as the router and the client see it. O(length of the id or
   * key); with one partition it hashes nothing.
   *
   * @param id the event id, or null
   * @param key the business key, or null; an empty key is no key to route by, and a key all the same to refuse
   * @return {@code 0 .. partitions - 1}, or {@link #NOT_ADMITTED} when the event lacks its routing field or carries
   *     a key the mode refuses: a partition answers such an event with the 400 of {@link #refusal}, so a caller
   *     sends it to partition 0 for that answer
   */
  public int partitionOf(String id, String key) {
    if (byKey) {
      if (key == null || key.isEmpty()) {
        return NOT_ADMITTED;
      }
      return partitions == 1 ? 0 : partitionOf(keys.fingerprint(key), partitions);
    }
    if (id == null || (key != null && partitions > 1)) {
      return NOT_ADMITTED;
    }
    return partitions == 1 ? 0 : partitionOf(ids.fingerprint(id), partitions);
  }

  /**
   * Finds the partition of a decoded event from its fingerprints. O(1).
   *
   * @param idFp the id's fingerprint (scope {@link #idScope})
   * @param keyFp the key's fingerprint (scope {@link #keyScope}), or 0 if the event has no key
   * @return {@code 0 .. partitions - 1}; meaningful only for an event {@link #refusal} admits
   */
  int partitionOf(long idFp, long keyFp) {
    return partitions == 1 ? 0 : partitionOf(byKey ? keyFp : idFp, partitions);
  }

  /**
   * Says why the mode refuses an event, if it does. O(1).
   *
   * @param hasKey whether the event carries a key
   * @param field the name of the key field in the reply ({@code key}, or {@code events[i].key} in a batch)
   * @return the message of the 400, naming the field and why, or null if the event is admitted
   */
  String refusal(boolean hasKey, String field) {
    if (byKey && !hasKey) {
      return field + " is required: this service routes every event by its business key (routeByKey=true), so "
          + "that every copy of an event reaches the partition that saw the first one";
    }
    if (!byKey && hasKey && partitions > 1) {
      return field + " is not accepted by this service: it routes every event by its id over " + partitions
          + " partitions (routeByKey=false), so two events with the same key and different ids would reach different"
          + " partitions and the key could not be checked; deploy with routeByKey=true to deduplicate on keys";
    }
    return null;
  }

  /** @return whether events are routed by their key ({@link DedupOptions#isRouteByKey()}) */
  boolean byKey() {
    return byKey;
  }

  /** @return the number of partitions */
  public int partitions() {
    return partitions;
  }
}
