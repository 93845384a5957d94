package io.github.vertxdedup.examples.kafka;

import java.util.Map;

/**
 * What a Kafka example run did, counted from the broker's side and the effect's side.
 *
 * @param records records published, copies included
 * @param distinctIds distinct payment ids published
 * @param applied distinct ids whose effect was applied
 * @param repeated ids whose effect was applied more than once, with their counts (empty when all went well)
 * @param duplicatesDropped records the consumer dropped as duplicates ({@code dedup.kafka.duplicates})
 * @param deadLetters records sent to the dead-letter handler
 */
public record RunSummary(int records, int distinctIds, int applied, Map<String, Integer> repeated,
    long duplicatesDropped, int deadLetters) {

  /** @return true if every id was applied once and every other record was dropped as a duplicate or dead-lettered */
  public boolean exactlyOnce() {
    return applied == distinctIds && repeated.isEmpty() && duplicatesDropped + deadLetters == records - distinctIds;
  }

  @Override
  public String toString() {
    return String.format("records published: %d, distinct ids: %d, effects applied: %d, applied twice: %d,"
        + " duplicates dropped: %d, dead letters: %d -> %s", records, distinctIds, applied, repeated.size(),
        duplicatesDropped, deadLetters, exactlyOnce() ? "each id applied once" : "MISMATCH");
  }
}
