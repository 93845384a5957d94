package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupLookup;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.impl.protocol.LocalRequest;
import io.github.vertxdedup.impl.protocol.PartitionRouting;
import io.github.vertxdedup.impl.protocol.PartitionSender;
import io.github.vertxdedup.impl.protocol.RequestDecoder;
import io.github.vertxdedup.impl.protocol.RequestFailure;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * The consumer of {@code <address>}: forwards a single request to the partition that owns it (by the fingerprint of its
 * {@code key} if the service routes by key, else of its {@code id}; see {@link PartitionRouting}) and relays the reply
 * or failure unchanged. It validates nothing but what it needs to route: the partition validates the whole request, so
 * a bad request gets the same 400 either way; an event the routing mode refuses goes to partition 0 for that 400.
 * {@code stats} here answers {@code {"partitions":[...]}}, one entry per partition. Batches are refused: they go to a
 * partition address. Confined to the deploying verticle's event loop.
 *
 * <p>The partition may be owned by any member of a clustered Vert.x. There the router forwards the wire form: a
 * request of the local codec (a {@link LocalRequest} of this JVM) is sent as JSON (the action in its header, the
 * event's {@link DedupEvent#toJson()} as the body) and the JSON reply decoded back into the {@link DedupResult} or
 * {@link DedupLookup} the local requester expects. In a Vert.x that is not clustered it is passed on by reference.
 *
 * <p>Failures of a forwarded request ({@link PartitionSender}, with the service's {@code requestTimeoutMs} as the
 * deadline) keep their meaning: a partition's own failure (400, 409, 503...) is relayed with its code and message; no
 * registered owner ({@code NO_HANDLERS}) becomes a 503 at once (nothing was recorded: the caller may send it again;
 * the router does not wait for an owner, so a stopping service refuses promptly); no answer in time becomes a
 * {@link DedupFailure#OUTCOME_UNKNOWN}, never a 503, because the owner may have decided it.
 *
 * <p>Every forwarded request's reply handler belongs to the deploying verticle's context, and Vert.x removes it
 * (with its timeout) when that context closes: a partition's answer that arrives afterwards reaches nobody, and the
 * caller would wait out its own timeout. So {@link #stop()} answers every request still waiting for its partition
 * with a 503 before the verticle's stop completes; the partitions have stopped by then (they are child deployments,
 * undeployed first), so none of them would have been answered otherwise.
 */
public final class AddressRouter implements Handler<Message<Object>> {

  private final Vertx vertx;
  private final String address;
  private final PartitionRouting routing;
  private final PartitionSender sender;
  /** Whether partitions may be owned by another member: local requests are then forwarded as JSON. */
  private final boolean clustered;
  /** Requests forwarded to a partition and not answered yet. */
  private final Set<Message<Object>> waiting = Collections.newSetFromMap(new IdentityHashMap<>());
  private boolean stopped;

  /**
   * @param vertx the Vert.x instance
   * @param options the service's options
   */
  public AddressRouter(Vertx vertx, DedupOptions options) {
    this.vertx = vertx;
    this.address = options.getAddress();
    this.routing = new PartitionRouting(options);
    this.sender = new PartitionSender(vertx, options.getRequestTimeoutMs(), false);
    this.clustered = vertx.isClustered();
  }

  /**
   * Stops routing: fails every request still waiting for its partition, and every later one at once with 503. Call
   * it on the deploying verticle's context when the service stops, before the router's consumer is unregistered.
   * A partition's answer that arrives afterwards is dropped (its request was answered already). A waiting request
   * fails with 503 in a Vert.x that is not clustered (its partition, a child of this service, has stopped without
   * answering it) and with {@link DedupFailure#OUTCOME_UNKNOWN} in a clustered one (its partition may be owned by
   * another member, which may decide it yet).
   */
  public void stop() {
    stopped = true;
    List<Message<Object>> refused = new ArrayList<>(waiting);
    waiting.clear();
    for (Message<Object> msg : refused) {
      if (clustered) {
        msg.fail(DedupFailure.OUTCOME_UNKNOWN, "outcome unknown: service " + address + " on this member is stopping"
            + " and the request's partition, which may be owned by another member, had not answered; lookup tells"
            + " the id's state");
      } else {
        msg.fail(DedupFailure.UNAVAILABLE, stoppingMessage());
      }
    }
  }

  private String stoppingMessage() {
    return "service " + address + " is stopping and this request's partition did not answer before it stopped;"
        + " nothing recorded, retry after it restarts";
  }

  @Override
  public void handle(Message<Object> msg) {
    if (stopped) {
      msg.fail(DedupFailure.UNAVAILABLE, stoppingMessage());
      return;
    }
    Object body = msg.body();
    DedupAction action;
    String id = null;
    String key = null;
    if (body instanceof LocalRequest r) {
      action = r.action;
      DedupEvent e = r.event;
      if (e != null) {
        id = e.getId();
        key = e.getKey();
      }
    } else {
      try {
        action = RequestDecoder.action(msg.headers().get(DedupAction.HEADER));
      } catch (RequestFailure f) {
        msg.fail(f.code(), f.getMessage());
        return;
      }
      if (body instanceof JsonObject json) {
        id = json.getValue("id") instanceof String s ? s : null;
        key = json.getValue("key") instanceof String s ? s : null;
      }
    }
    if (action.isBatch()) {
      msg.fail(DedupFailure.BAD_REQUEST, action.wireName() + " must be sent to a partition address (" + address
          + ".<p>, see DedupClient.partitionOf): a batch is not split across partitions");
      return;
    }
    if (action == DedupAction.STATS) {
      if (!(body instanceof LocalRequest)) {
        try {
          RequestDecoder.requireStatsBody(body);
        } catch (RequestFailure f) {
          msg.fail(f.code(), f.getMessage());
          return;
        }
      }
      allStats(msg);
      return;
    }
    // An event that cannot be routed (no usable routing field, or a key the mode refuses) goes to partition 0, which
    // answers the precise 400.
    int routed = routing.partitionOf(id, key);
    int p = routed == PartitionRouting.NOT_ADMITTED ? 0 : routed;
    DeliveryOptions options = sender.deliveryOptions();
    Object forwarded = body;
    boolean decodeReply = false;
    if (!(body instanceof LocalRequest)) {
      options.setHeaders(msg.headers());
    } else if (clustered) {
      // The owner may be another member: the wire form there, decoded back for the requester of this JVM.
      DedupEvent e = ((LocalRequest) body).event;
      forwarded = e == null ? null : e.toJson();
      options.addHeader(DedupAction.HEADER, action.wireName());
      decodeReply = true;
    }
    boolean decode = decodeReply;
    waiting.add(msg);
    sender.request(address + "." + p, forwarded, options).onComplete(ar -> {
      if (!waiting.remove(msg)) {
        return; // answered by stop()
      }
      if (ar.failed()) {
        relayFailure(msg, ar.cause());
      } else if (decode) {
        JsonObject json = (JsonObject) ar.result().body();
        msg.reply(action == DedupAction.LOOKUP ? DedupLookup.fromJson(json) : DedupResult.fromJson(json));
      } else {
        msg.reply(ar.result().body());
      }
    });
  }

  private void allStats(Message<Object> msg) {
    List<Future<Message<Object>>> replies = new ArrayList<>();
    for (int p = 0; p < routing.partitions(); p++) {
      replies.add(sender.request(address + "." + p, null,
          sender.deliveryOptions().addHeader(DedupAction.HEADER, DedupAction.STATS.wireName())));
    }
    waiting.add(msg);
    Future.all(replies).onComplete(ar -> {
      if (!waiting.remove(msg)) {
        return; // answered by stop()
      }
      if (ar.failed()) {
        relayFailure(msg, ar.cause());
        return;
      }
      JsonArray all = new JsonArray();
      for (Future<Message<Object>> f : replies) {
        all.add(f.result().body());
      }
      msg.reply(new JsonObject().put("partitions", all));
    });
  }

  /**
   * Relays a failure of {@link PartitionSender}: every one is a {@link ReplyException} with the service's code (the
   * partition's own, 503 for no registered owner, 504 for no answer), passed on with its message.
   */
  private static void relayFailure(Message<Object> msg, Throwable cause) {
    if (cause instanceof ReplyException re) {
      msg.fail(re.failureCode(), re.getMessage());
    } else {
      msg.fail(DedupFailure.OUTCOME_UNKNOWN, "outcome unknown: the forwarded request failed: " + cause);
    }
  }
}
