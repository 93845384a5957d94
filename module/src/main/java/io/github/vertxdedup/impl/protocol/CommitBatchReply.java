package io.github.vertxdedup.impl.protocol;

import io.github.vertxdedup.DedupCommitResult;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The reply to a {@code commitBatch} request through the local codec: one result per event, in order. Immutable.
 */
public final class CommitBatchReply {

  private final List<DedupCommitResult> results;

  public CommitBatchReply(DedupCommitResult[] results) {
    this.results = Collections.unmodifiableList(Arrays.asList(results));
  }

  /** @return the results, one per event in order; unmodifiable */
  public List<DedupCommitResult> results() {
    return results;
  }
}
