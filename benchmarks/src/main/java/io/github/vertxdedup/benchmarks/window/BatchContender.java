package io.github.vertxdedup.benchmarks.window;

/** A contender that can also judge a whole poll of events in one call. Single-threaded. */
interface BatchContender {

  /** @return whether the harness should feed this instance through {@link #firstSeenBatch} */
  boolean batches();

  /**
   * Judges {@code length} events at once, in order, as single calls at one instant would.
   *
   * @param fingerprints the events' ids
   * @param offset index of the first event
   * @param length number of events, at most {@link Contender#POLL_BATCH}
   * @return how many were first sightings
   */
  int firstSeenBatch(long[] fingerprints, int offset, int length);
}
