package io.github.vertxdedup.impl.service;

/**
 * The lifecycle of one partition ({@link PartitionVerticle}), as its callers see it: only a {@link #READY}
 * partition decides; in every other state a request is answered 503 and nothing is recorded.
 */
public enum PartitionState {
  /**
   * Opening and replaying its journal (at start, after a failed write, or while another owner holds the journal):
   * answers 503, never ACCEPTED.
   */
  RECOVERING,
  /** Answering. */
  READY,
  /** The first recovery failed (the deployment failed): answers 503. */
  FAILED,
  /** Undeploying: answers 503, drains its waiting replies. */
  STOPPING
}
