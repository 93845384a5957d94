package io.github.vertxdedup.benchmarks.window;

/**
 * One deduplication structure in the side-by-side comparison, reduced to the question every one of them answers:
 * is this the first sighting of the id within the window? Time comes from the {@link SimulatedClock} the structure
 * was created with.
 *
 * <p>Implementations are single-threaded, like the window itself.
 */
public interface DedupContender {

  /**
   * Checks an arrival at the clock's current time and remembers the id if it is new.
   *
   * @param fingerprint the id's 64-bit fingerprint, non-zero
   * @return true if accepted (first sighting within the window), false if a duplicate
   */
  boolean firstSeen(long fingerprint);

  /**
   * Counts the ids remembered now. May do pending housekeeping first (Caffeine's {@code cleanUp}); not for the hot
   * path.
   *
   * @return live ids held
   */
  long held();

  /**
   * Returns the object whose reachable graph is the structure's whole heap footprint (for JOL), excluding the
   * shared clock.
   *
   * @return the root object
   */
  Object footprintRoot();
}
