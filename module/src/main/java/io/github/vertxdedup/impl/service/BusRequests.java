package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.impl.protocol.BatchReply;
import io.github.vertxdedup.impl.protocol.CommitBatchReply;
import io.github.vertxdedup.impl.protocol.LocalRequest;
import io.github.vertxdedup.impl.protocol.RequestDecoder;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.function.Supplier;

/**
 * The event-bus side of one partition: turns a message sent to {@code <address>.<partition>} into a
 * {@link PartitionRequests.Decision}, served by {@link PartitionRequests#serve} like an in-process call, and encodes
 * the outcome as the sender expects. A message of the local codec (a {@link LocalRequest} from a
 * {@link io.github.vertxdedup.DedupClient} in this JVM) carries its action and events by reference and is answered
 * with the local codec's objects; any other body is JSON with its action in the {@link DedupAction#HEADER} header,
 * answered in JSON. The action and the body are read inside the decision, so a malformed request is refused (400)
 * and counted like any other.
 *
 * <p>Confined to the partition's event loop (not thread-safe).
 */
final class BusRequests {

  private final PartitionRequests requests;
  private final RequestDecoder decoder;
  private final Supplier<JsonObject> stats;

  /**
   * @param requests the partition's one path for requests
   * @param stats answers {@code stats}
   */
  BusRequests(PartitionRequests requests, Supplier<JsonObject> stats) {
    this.requests = requests;
    this.decoder = requests.decoder();
    this.stats = stats;
  }

  /**
   * Serves one message; the partition's event-bus consumer.
   *
   * @param msg the request
   */
  void handle(Message<Object> msg) {
    Object body = msg.body();
    String actionHeader = msg.headers().get(DedupAction.HEADER);
    requests.serve(ReplySink.of(msg), (core, now) -> decide(core, body, actionHeader, now));
  }

  private Object decide(PartitionCore core, Object body, String actionHeader, long now) {
    if (body instanceof LocalRequest r) {
      return switch (r.action) {
        case CHECK -> core.check(decoder.decode(r.event, DedupAction.CHECK, now, -1));
        case CLAIM -> core.claim(decoder.decode(r.event, DedupAction.CLAIM, now, -1));
        case COMMIT -> core.commit(decoder.decode(r.event, DedupAction.COMMIT, now, -1));
        case RELEASE -> core.release(decoder.decode(r.event, DedupAction.RELEASE, now, -1));
        case LOOKUP -> core.lookup(decoder.decode(r.event, DedupAction.LOOKUP, now, -1));
        case STATS -> stats.get();
        case CHECK_BATCH -> new BatchReply(
            requests.batch(core, decoder.decodeBatch(r.events, DedupAction.CHECK, now), false));
        case CLAIM_BATCH -> new BatchReply(
            requests.batch(core, decoder.decodeBatch(r.events, DedupAction.CLAIM, now), true));
        case COMMIT_BATCH -> new CommitBatchReply(
            requests.commitBatch(core, decoder.decodeBatch(r.events, DedupAction.COMMIT, now)));
      };
    }
    DedupAction action = RequestDecoder.action(actionHeader);
    if (action == DedupAction.STATS) {
      RequestDecoder.requireStatsBody(body);
      return stats.get();
    }
    JsonObject json = RequestDecoder.requireObject(body);
    return switch (action) {
      case CHECK -> core.check(decoder.decode(json, action, now, -1)).toJson();
      case CLAIM -> core.claim(decoder.decode(json, action, now, -1)).toJson();
      case COMMIT -> core.commit(decoder.decode(json, action, now, -1)).toJson();
      case RELEASE -> core.release(decoder.decode(json, action, now, -1)).toJson();
      case LOOKUP -> core.lookup(decoder.decode(json, action, now, -1)).toJson();
      case CHECK_BATCH -> batchJson(
          requests.batch(core, decoder.decodeBatch(json, DedupAction.CHECK, now), false));
      case CLAIM_BATCH -> batchJson(
          requests.batch(core, decoder.decodeBatch(json, DedupAction.CLAIM, now), true));
      case COMMIT_BATCH -> commitBatchJson(
          requests.commitBatch(core, decoder.decodeBatch(json, DedupAction.COMMIT, now)));
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
}
