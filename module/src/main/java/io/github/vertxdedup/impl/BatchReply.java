package io.github.vertxdedup.impl;

import io.github.vertxdedup.DedupResult;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The reply to a batch request through the local codec: one result per event, in order. Immutable.
 */
final class BatchReply {

  private final List<DedupResult> results;

  BatchReply(DedupResult[] results) {
    this.results = Collections.unmodifiableList(Arrays.asList(results));
  }

  /** @return the results, one per event in order; unmodifiable */
  public List<DedupResult> results() {
    return results;
  }
}
