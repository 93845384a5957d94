package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.impl.protocol.RequestFailure;
import io.github.vertxdedup.window.CapacityPolicy;
import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.window.WindowFullException;

/**
 * The room a partition has for new events, and the words of a refusal for want of it. Under
 * {@link CapacityPolicy#REJECT} the entries the window holds and those live claims reserve (1 per claim, 2 with a key)
 * may not exceed {@code maxIdsPerPartition}; under any other policy the window makes room itself and there is always
 * room here. Only a new event needs room: the decisions ask for it once the lookup has found the event new.
 *
 * <p>Confined to the partition's event loop (not thread-safe): one per {@link PartitionCore}.
 */
final class WindowRoom {

  private final int partition;
  private final long maxIds;
  private final boolean reject;
  private final DedupWindow window;
  private final Claims claims;
  private final PartitionCounters counters;

  /**
   * @param partition the partition's number, for messages
   * @param maxIds its {@code maxIdsPerPartition}
   * @param policy its capacity policy: only {@link CapacityPolicy#REJECT} limits room here
   * @param window its window
   * @param claims its claims, whose reserved entries take room
   * @param counters where refusals are counted ({@code capacityRejects})
   */
  WindowRoom(int partition, long maxIds, CapacityPolicy policy, DedupWindow window, Claims claims,
      PartitionCounters counters) {
    this.partition = partition;
    this.maxIds = maxIds;
    this.reject = policy == CapacityPolicy.REJECT;
    this.window = window;
    this.claims = claims;
    this.counters = counters;
  }

  /**
   * @param entries window entries a new event needs (1 for its id, 2 with a key)
   * @return true if they fit beside the entries held and reserved (always, unless REJECT). O(1).
   */
  boolean has(long entries) {
    return !reject || window.held() + claims.reserved() + entries <= maxIds;
  }

  /**
   * Refuses a new event for which there is no room; call it only once the event is known to be new. Counts the
   * refusal in {@code capacityRejects}.
   *
   * @param entries window entries the event needs (1 for its id, 2 with a key)
   * @throws RequestFailure 503 naming what the partition holds, what claims reserve and {@code maxIdsPerPartition},
   *     if they do not fit ({@link #has})
   */
  void require(long entries) {
    if (!has(entries)) {
      long held = window.held();
      counters.capacityRejects++;
      throw RequestFailure.unavailable("window full: partition " + partition + " holds " + held + " entries and "
          + claims.reserved() + " reserved by claims, maxIdsPerPartition=" + maxIds + " (capacityPolicy=REJECT); "
          + "this event needs " + entries + " more (its id, and its key if it has one), nothing recorded; retry later");
    }
  }

  /**
   * The message of a refusal by this partition's window itself ({@link #windowFullMessage}).
   *
   * @param full the window's refusal
   * @return the message
   */
  String windowFull(WindowFullException full) {
    return windowFullMessage(partition, maxIds, full);
  }

  /**
   * The message of a refusal by the window itself (its cap under REJECT, or a table that cannot grow), for a single
   * request's 503 and a batch element's alike.
   *
   * @param partition the partition
   * @param maxIds its {@code maxIdsPerPartition}
   * @param full the window's refusal
   * @return the message
   */
  static String windowFullMessage(int partition, long maxIds, WindowFullException full) {
    return "partition " + partition + " window full (maxIdsPerPartition=" + maxIds + "): " + full.getMessage()
        + "; nothing recorded, retry later";
  }
}
