package io.github.vertxdedup.window;

/**
 * Counters of one {@link DedupWindow}, as read by a metrics layer. All counts are since the window was created.
 *
 * @param accepted arrivals answered {@link WindowVerdict#ACCEPTED}
 * @param duplicates arrivals answered {@link WindowVerdict#DUPLICATE}
 * @param conflicts arrivals answered {@link WindowVerdict#CONFLICT}
 * @param held ids remembered now
 * @param expired ids forgotten because their remember-until passed
 * @param earlyEvictions ids forgotten before their time under {@link CapacityPolicy#EVICT_OLDEST}
 * @param rejected new ids refused with {@link WindowFullException}
 * @param tableSlots slots in the hash table now
 * @param tableBytes bytes of the hash table now (12 or 20 per slot); not counting a doubled table being built beside
 *     it ({@link DedupWindow.Builder#growthExecutor}), which holds twice as many until it replaces it
 */
public record WindowStats(long accepted, long duplicates, long conflicts, long held, long expired,
    long earlyEvictions, long rejected, long tableSlots, long tableBytes) {

  /**
   * Estimates memory per held id: table bytes over held ids.
   *
   * @return bytes per held id, or 0 when nothing is held
   */
  public double bytesPerHeldId() {
    return held == 0 ? 0.0 : (double) tableBytes / held;
  }
}
