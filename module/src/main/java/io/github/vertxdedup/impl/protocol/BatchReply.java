package io.github.vertxdedup.impl.protocol;

import io.github.vertxdedup.DedupBatchResult;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The reply to a {@code checkBatch} or {@code claimBatch} request through the local codec: one element per event, in
 * order (its result, or its own failure). Immutable.
 */
public final class BatchReply {

  private final List<DedupBatchResult> results;

  public BatchReply(DedupBatchResult[] results) {
    this.results = Collections.unmodifiableList(Arrays.asList(results));
  }

  /** @return the elements, one per event in order; unmodifiable */
  public List<DedupBatchResult> results() {
    return results;
  }
}
