package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupLookup;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.impl.protocol.ActionClient;
import io.github.vertxdedup.impl.protocol.BatchReply;
import io.github.vertxdedup.impl.protocol.CommitBatchReply;
import io.github.vertxdedup.impl.protocol.LocalRequest;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Objects;

/**
 * A {@link io.github.vertxdedup.DedupClient} of one partition verticle in this JVM that calls it in-process
 * ({@link PartitionVerticle#serveLocal}) instead of sending event-bus requests: the documented in-process shortcut
 * of the Kafka integration. The requests are the local codec's ({@link LocalRequest}), decoded, decided, journaled
 * and answered by the same code as event-bus requests, so verdicts, failures (a
 * {@link io.vertx.core.eventbus.ReplyException} with a {@link io.github.vertxdedup.DedupFailure} code) and the
 * ordering of replies after journal writes are the same. What it saves per request: the reply handler's
 * registration, the timeout timer, the codec lookup, and the two thread hops when the caller runs on the
 * partition's context.
 *
 * <p>Differences a caller may notice: there is no request timeout (the partition always answers: at once, after its
 * journal write, or with a 503 when it stops), and a caller on the partition's context may see its future already
 * complete when the call returns. Every event belongs to this one partition ({@link #partitionOf} is 0).
 *
 * <p>Thread-safe; from another thread a request is handed to the partition's context, and the future completes
 * there. Unlike the event-bus client's, its futures are not tied to the caller's context: a handler set on one runs
 * on the partition's event loop, or on the caller's thread if the future was already complete.
 */
final class InProcessClient extends ActionClient {

  private final PartitionVerticle partition;

  InProcessClient(PartitionVerticle partition) {
    this.partition = Objects.requireNonNull(partition, "partition");
  }

  @Override
  public int partitionOf(DedupEvent event) {
    return 0;
  }

  @Override
  protected Future<DedupResult> single(DedupAction action, DedupEvent event) {
    return partition.serveLocal(LocalRequest.single(action, event));
  }

  @Override
  public Future<DedupLookup> lookup(DedupEvent event) {
    return partition.serveLocal(LocalRequest.single(DedupAction.LOOKUP, event));
  }

  /**
   * @param p must be 0, the only partition this client reaches
   * @return the partition's counters
   */
  @Override
  public Future<JsonObject> stats(int p) {
    if (p != 0) {
      return Future.failedFuture(new IllegalArgumentException("partition must be 0 (an in-process client reaches"
          + " one partition) but was " + p));
    }
    return partition.serveLocal(LocalRequest.stats());
  }

  @Override
  protected Future<List<DedupBatchResult>> batch(DedupAction action, List<DedupEvent> events) {
    return partition.<BatchReply>serveLocal(LocalRequest.batch(action, events)).map(BatchReply::results);
  }

  @Override
  public Future<List<DedupCommitResult>> commitBatch(List<DedupEvent> events) {
    return partition.<CommitBatchReply>serveLocal(LocalRequest.batch(DedupAction.COMMIT_BATCH, events))
        .map(CommitBatchReply::results);
  }
}
