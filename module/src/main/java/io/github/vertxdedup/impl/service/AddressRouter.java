package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.impl.protocol.LocalRequest;
import io.github.vertxdedup.impl.protocol.PartitionRouting;
import io.github.vertxdedup.impl.protocol.RequestDecoder;
import io.github.vertxdedup.impl.protocol.RequestFailure;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
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
  }

  /**
   * Stops routing: fails every request still waiting for its partition with 503, and every later one at once. Call
   * it on the deploying verticle's context when the service stops, before the router's consumer is unregistered.
   * A partition's answer that arrives afterwards is dropped (its request was answered already).
   */
  public void stop() {
    stopped = true;
    List<Message<Object>> refused = new ArrayList<>(waiting);
    waiting.clear();
    for (Message<Object> msg : refused) {
      msg.fail(DedupFailure.UNAVAILABLE, stoppingMessage());
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
    DeliveryOptions options = body instanceof LocalRequest ? new DeliveryOptions()
        : new DeliveryOptions().setHeaders(msg.headers());
    waiting.add(msg);
    vertx.eventBus().request(address + "." + p, body, options).onComplete(ar -> {
      if (!waiting.remove(msg)) {
        return; // answered by stop()
      }
      if (ar.succeeded()) {
        msg.reply(ar.result().body());
      } else {
        relayFailure(msg, p, ar.cause());
      }
    });
  }

  private void allStats(Message<Object> msg) {
    List<Future<Message<Object>>> replies = new ArrayList<>();
    for (int p = 0; p < routing.partitions(); p++) {
      replies.add(vertx.eventBus().request(address + "." + p, null,
          new DeliveryOptions().addHeader(DedupAction.HEADER, DedupAction.STATS.wireName())));
    }
    waiting.add(msg);
    Future.all(replies).onComplete(ar -> {
      if (!waiting.remove(msg)) {
        return; // answered by stop()
      }
      if (ar.failed()) {
        relayFailure(msg, -1, ar.cause());
        return;
      }
      JsonArray all = new JsonArray();
      for (Future<Message<Object>> f : replies) {
        all.add(f.result().body());
      }
      msg.reply(new JsonObject().put("partitions", all));
    });
  }

  private static void relayFailure(Message<Object> msg, int partition, Throwable cause) {
    if (cause instanceof ReplyException re && re.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
      msg.fail(re.failureCode(), re.getMessage());
    } else {
      msg.fail(DedupFailure.UNAVAILABLE, (partition < 0 ? "a partition" : "partition " + partition)
          + " did not answer: " + cause.getMessage());
    }
  }
}
