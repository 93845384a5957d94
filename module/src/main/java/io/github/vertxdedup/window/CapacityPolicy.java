package io.github.vertxdedup.window;

/**
 * What a {@link DedupWindow} does with a new id when it already holds {@code maxIds} live ids.
 */
public enum CapacityPolicy {
  /**
   * Fail closed (the default): the new id is refused with a {@link WindowFullException} and nothing is recorded;
   * no remembered id is forgotten early. The caller should not apply the effect and should retry later.
   */
  REJECT,
  /**
   * Forget the bucket that expires soonest, ahead of its time, and accept the new id. Each id forgotten this way
   * is counted in {@link WindowStats#earlyEvictions()}: a redelivery of such an id is no longer caught.
   */
  EVICT_OLDEST
}
