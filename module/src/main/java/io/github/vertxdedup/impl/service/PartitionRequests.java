package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.impl.protocol.BatchReply;
import io.github.vertxdedup.impl.protocol.CommitBatchReply;
import io.github.vertxdedup.impl.protocol.LocalRequest;
import io.github.vertxdedup.impl.protocol.RequestDecoder;
import io.github.vertxdedup.impl.protocol.RequestFailure;
import io.github.vertxdedup.window.WindowFullException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.function.Supplier;

/**
 * Turns one request of a partition into its reply body: decodes it (a {@link LocalRequest} of the local codec, or a
 * JSON body with its action in the {@link DedupAction#HEADER} header), has the core decide it with the clock pinned
 * to one reading, and encodes the outcome as the transport expects (the local codec's objects, or JSON). A refused
 * request is answered here with its failure code and counted; so are the failed elements of a batch, as single failed
 * requests would be.
 *
 * <p>Confined to the partition's event loop (not thread-safe).
 */
final class PartitionRequests {

  /** What {@link #decide} returns for a request it refused (its sink has the failure). */
  static final Object REFUSED = new Object();

  private static final System.Logger LOG = System.getLogger(PartitionVerticle.class.getName());

  private final int partition;
  private final long maxIds;
  private final RequestClock clock;
  private final RequestDecoder decoder;
  private final PartitionCounters counters;
  private final Supplier<JsonObject> stats;

  /**
   * @param options validated options
   * @param partition the partition's number
   * @param clock the partition's clock, pinned for each request
   * @param counters where batch elements' failures are counted
   * @param stats answers {@code stats}
   */
  PartitionRequests(DedupOptions options, int partition, RequestClock clock, PartitionCounters counters,
      Supplier<JsonObject> stats) {
    this.partition = partition;
    this.maxIds = options.getMaxIdsPerPartition();
    this.clock = clock;
    this.decoder = new RequestDecoder(options, partition);
    this.counters = counters;
    this.stats = stats;
  }

  /**
   * Decides one request, or refuses it: a bad request (400), a state conflict (409), a refusal such as a full window
   * (503), or an internal error (500, logged) fails {@code sink} and is counted.
   *
   * @param core the partition's core
   * @param body the request's body
   * @param actionHeader the action header of an event-bus request; ignored for a {@link LocalRequest}
   * @param sink where a refusal goes
   * @return the reply body, or {@link #REFUSED} once {@code sink} has the refusal
   */
  Object decide(PartitionCore core, Object body, String actionHeader, ReplySink sink) {
    try {
      return decide(core, body, actionHeader);
    } catch (RequestFailure f) {
      counters.failure(f.code());
      sink.fail(f.code(), f.getMessage());
    } catch (WindowFullException e) {
      counters.unavailable++;
      sink.fail(DedupFailure.UNAVAILABLE, PartitionCore.windowFullMessage(partition, maxIds, e));
    } catch (IllegalArgumentException e) {
      // The window's own checks; with the clock pinned per request they repeat the decoder's, so this is a backstop.
      counters.badRequests++;
      sink.fail(DedupFailure.BAD_REQUEST, e.getMessage());
    } catch (RuntimeException e) {
      counters.internalErrors++;
      LOG.log(System.Logger.Level.ERROR, "partition " + partition + ": internal error", e);
      sink.fail(DedupFailure.INTERNAL_ERROR, "partition " + partition + " internal error: " + e);
    }
    return REFUSED;
  }

  private Object decide(PartitionCore core, Object body, String actionHeader) {
    // One clock reading for the whole request: validation and every decision of a batch see the same instant.
    clock.pin();
    try {
      return decidePinned(core, body, actionHeader);
    } finally {
      clock.unpin();
    }
  }

  private Object decidePinned(PartitionCore core, Object body, String actionHeader) {
    if (body instanceof LocalRequest r) {
      long now = clock.nowMs();
      return switch (r.action) {
        case CHECK -> core.check(decoder.decode(r.event, DedupAction.CHECK, now, -1));
        case CLAIM -> core.claim(decoder.decode(r.event, DedupAction.CLAIM, now, -1));
        case COMMIT -> core.commit(decoder.decode(r.event, DedupAction.COMMIT, now, -1));
        case RELEASE -> core.release(decoder.decode(r.event, DedupAction.RELEASE, now, -1));
        case LOOKUP -> core.lookup(decoder.decode(r.event, DedupAction.LOOKUP, now, -1));
        case STATS -> stats.get();
        case CHECK_BATCH -> new BatchReply(countRefusals(
            core.batch(decoder.decodeBatch(r.events, DedupAction.CHECK, now), false)));
        case CLAIM_BATCH -> new BatchReply(countRefusals(
            core.batch(decoder.decodeBatch(r.events, DedupAction.CLAIM, now), true)));
        case COMMIT_BATCH -> new CommitBatchReply(countConflicts(
            core.commitBatch(decoder.decodeBatch(r.events, DedupAction.COMMIT, now))));
      };
    }
    DedupAction action = RequestDecoder.action(actionHeader);
    if (action == DedupAction.STATS) {
      RequestDecoder.requireStatsBody(body);
      return stats.get();
    }
    JsonObject json = RequestDecoder.requireObject(body);
    long now = clock.nowMs();
    return switch (action) {
      case CHECK -> core.check(decoder.decode(json, action, now, -1)).toJson();
      case CLAIM -> core.claim(decoder.decode(json, action, now, -1)).toJson();
      case COMMIT -> core.commit(decoder.decode(json, action, now, -1)).toJson();
      case RELEASE -> core.release(decoder.decode(json, action, now, -1)).toJson();
      case LOOKUP -> core.lookup(decoder.decode(json, action, now, -1)).toJson();
      case CHECK_BATCH -> batchJson(countRefusals(
          core.batch(decoder.decodeBatch(json, DedupAction.CHECK, now), false)));
      case CLAIM_BATCH -> batchJson(countRefusals(
          core.batch(decoder.decodeBatch(json, DedupAction.CLAIM, now), true)));
      case COMMIT_BATCH -> commitBatchJson(countConflicts(
          core.commitBatch(decoder.decodeBatch(json, DedupAction.COMMIT, now))));
      case STATS -> throw new IllegalStateException("unreachable");
    };
  }

  private static JsonObject batchJson(DedupBatchResult[] results) {
    JsonArray verdicts = new JsonArray(new ArrayList<>(results.length));
    for (DedupBatchResult r : results) {
      verdicts.add(r.toJson());
    }
    return new JsonObject().put("verdicts", verdicts);
  }

  private static JsonObject commitBatchJson(DedupCommitResult[] results) {
    JsonArray array = new JsonArray(new ArrayList<>(results.length));
    for (DedupCommitResult r : results) {
      array.add(r.toJson());
    }
    return new JsonObject().put("results", array);
  }

  /** Counts each failed element of a checkBatch or claimBatch as a single failed request would be counted. */
  private DedupBatchResult[] countRefusals(DedupBatchResult[] results) {
    for (DedupBatchResult r : results) {
      counters.failure(r.failureCode());
    }
    return results;
  }

  /** Counts each failed element of a commitBatch as a single failed commit would be counted. */
  private DedupCommitResult[] countConflicts(DedupCommitResult[] results) {
    for (DedupCommitResult r : results) {
      counters.failure(r.failureCode());
    }
    return results;
  }
}
