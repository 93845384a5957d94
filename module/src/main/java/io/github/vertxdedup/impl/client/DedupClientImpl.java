package io.github.vertxdedup.impl.client;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupLookup;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.impl.protocol.BatchReply;
import io.github.vertxdedup.impl.protocol.Codecs;
import io.github.vertxdedup.impl.protocol.CommitBatchReply;
import io.github.vertxdedup.impl.protocol.LocalRequest;
import io.github.vertxdedup.impl.protocol.PartitionRouting;
import io.github.vertxdedup.impl.protocol.PartitionSender;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The {@link DedupClient}. Every request goes through a {@link PartitionSender}: sent again while its partition has
 * no registered owner and the request timeout allows, never after it may have been decided. Immutable and
 * thread-safe.
 */
public final class DedupClientImpl implements DedupClient {

  private final PartitionSender sender;
  private final PartitionRouting routing;
  private final String[] addresses;
  private final boolean local;
  /** Per action: its header and the request timeout, for JSON requests. */
  private final Map<DedupAction, DeliveryOptions> headers = new EnumMap<>(DedupAction.class);
  /** The request timeout alone, for local requests (their action travels in the body). */
  private final DeliveryOptions plain;

  /**
   * @param vertx the Vert.x instance
   * @param options the service's options (address, partitions, routeByKey) and the client's requestTimeoutMs
   * @param transport how requests travel
   * @throws IllegalArgumentException if {@code transport} is {@link Transport#LOCAL} and {@code vertx} is clustered
   */
  public DedupClientImpl(Vertx vertx, DedupOptions options, Transport transport) {
    if (transport == Transport.LOCAL && vertx.isClustered()) {
      throw new IllegalArgumentException("transport LOCAL passes requests by reference within one JVM, but this Vert.x"
          + " is clustered and a partition of " + options.getAddress() + " may be owned by another member: use"
          + " transport JSON (DedupClient.create(vertx, options) picks it for a clustered Vert.x)");
    }
    this.sender = new PartitionSender(vertx, options.getRequestTimeoutMs(), true);
    this.routing = new PartitionRouting(options);
    this.addresses = new String[options.getPartitions()];
    for (int p = 0; p < addresses.length; p++) {
      addresses[p] = options.getAddress() + "." + p;
    }
    this.local = transport == Transport.LOCAL;
    this.plain = sender.deliveryOptions();
    for (DedupAction a : DedupAction.values()) {
      headers.put(a, sender.deliveryOptions().addHeader(DedupAction.HEADER, a.wireName()));
    }
    if (local) {
      Codecs.register(vertx);
    }
  }

  @Override
  public Future<DedupResult> check(DedupEvent event) {
    return single(DedupAction.CHECK, event);
  }

  @Override
  public Future<DedupResult> claim(DedupEvent event) {
    return single(DedupAction.CLAIM, event);
  }

  @Override
  public Future<DedupResult> commit(DedupEvent event) {
    return single(DedupAction.COMMIT, event);
  }

  @Override
  public Future<DedupResult> release(DedupEvent event) {
    return single(DedupAction.RELEASE, event);
  }

  @Override
  public Future<List<DedupBatchResult>> checkBatch(List<DedupEvent> events) {
    return batch(DedupAction.CHECK_BATCH, events);
  }

  @Override
  public Future<List<DedupBatchResult>> claimBatch(List<DedupEvent> events) {
    return batch(DedupAction.CLAIM_BATCH, events);
  }

  @Override
  public int partitionOf(DedupEvent event) {
    int p = routing.partitionOf(event.getId(), event.getKey());
    return p == PartitionRouting.NOT_ADMITTED ? 0 : p;
  }

  /**
   * The partition of every event of a batch, in one pass. An event the service refuses before routing it
   * ({@link PartitionRouting#NOT_ADMITTED}) goes along with the others, whose partition answers it with a 400 naming
   * {@code events[i].key} (or {@code .id}) and refuses the batch; a batch of only such events goes to 0. So does a
   * null list or a null event, which the partition refuses with its 400.
   *
   * @throws IllegalArgumentException naming the first event whose partition differs from the first routable one's
   */
  private int batchPartition(List<DedupEvent> events) {
    if (events == null) {
      return 0;
    }
    int first = -1;
    int p = PartitionRouting.NOT_ADMITTED;
    for (int i = 0; i < events.size(); i++) {
      DedupEvent e = events.get(i);
      int q = e == null ? PartitionRouting.NOT_ADMITTED : routing.partitionOf(e.getId(), e.getKey());
      if (q == PartitionRouting.NOT_ADMITTED) {
        continue;
      }
      if (p == PartitionRouting.NOT_ADMITTED) {
        first = i;
        p = q;
      } else if (q != p) {
        throw new IllegalArgumentException("events[" + i + "] belongs to partition " + q + " but events[" + first
            + "] to partition " + p + ": a batch goes to one partition (group by partitionOf)");
      }
    }
    return p == PartitionRouting.NOT_ADMITTED ? 0 : p;
  }

  @Override
  public Future<DedupLookup> lookup(DedupEvent event) {
    String to = addresses[event == null ? 0 : partitionOf(event)];
    if (local) {
      return sender.<DedupLookup>request(to, LocalRequest.single(DedupAction.LOOKUP, event), plain)
          .map(Message::body);
    }
    return sender.<JsonObject>request(to, event == null ? null : event.toJson(), headers.get(DedupAction.LOOKUP))
        .map(m -> DedupLookup.fromJson(m.body()));
  }

  @Override
  public Future<JsonObject> stats(int partition) {
    if (partition < 0 || partition >= addresses.length) {
      return Future.failedFuture(new IllegalArgumentException(
          "partition must be in 0.." + (addresses.length - 1) + " but was " + partition));
    }
    return sender.<JsonObject>request(addresses[partition], local ? LocalRequest.stats() : null,
        headers.get(DedupAction.STATS)).map(Message::body);
  }

  @Override
  public Future<List<DedupCommitResult>> commitBatch(List<DedupEvent> events) {
    int p;
    try {
      p = batchPartition(events);
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(e);
    }
    if (local) {
      return sender.<CommitBatchReply>request(addresses[p], LocalRequest.batch(DedupAction.COMMIT_BATCH, events),
          plain).map(m -> m.body().results());
    }
    return sender.<JsonObject>request(addresses[p], batchBody(events), headers.get(DedupAction.COMMIT_BATCH))
        .map(m -> {
          JsonArray results = m.body().getJsonArray("results");
          List<DedupCommitResult> out = new ArrayList<>(results.size());
          for (int i = 0; i < results.size(); i++) {
            out.add(DedupCommitResult.fromJson(results.getJsonObject(i)));
          }
          return out;
        });
  }

  /** Sends one event of a {@code check}, {@code claim}, {@code commit} or {@code release} to its partition. */
  private Future<DedupResult> single(DedupAction action, DedupEvent event) {
    String to = addresses[event == null ? 0 : partitionOf(event)];
    if (local) {
      return sender.<DedupResult>request(to, LocalRequest.single(action, event), plain).map(Message::body);
    }
    return sender.<JsonObject>request(to, event == null ? null : event.toJson(), headers.get(action))
        .map(m -> DedupResult.fromJson(m.body()));
  }

  /** Sends a {@code checkBatch} or {@code claimBatch} to the partition of its events. */
  private Future<List<DedupBatchResult>> batch(DedupAction action, List<DedupEvent> events) {
    int p;
    try {
      p = batchPartition(events);
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(e);
    }
    if (local) {
      return sender.<BatchReply>request(addresses[p], LocalRequest.batch(action, events), plain)
          .map(m -> m.body().results());
    }
    return sender.<JsonObject>request(addresses[p], batchBody(events), headers.get(action))
        .map(m -> {
          JsonArray verdicts = m.body().getJsonArray("verdicts");
          List<DedupBatchResult> out = new ArrayList<>(verdicts.size());
          for (int i = 0; i < verdicts.size(); i++) {
            out.add(DedupBatchResult.fromJson(verdicts.getJsonObject(i)));
          }
          return out;
        });
  }

  /**
   * The JSON body of a batch request: {@code {"events": [...]}}. A null list or a null event is sent as JSON null,
   * which the partition refuses with a 400 naming {@code events} or {@code events[i]}, as it does a local request.
   */
  private static JsonObject batchBody(List<DedupEvent> events) {
    if (events == null) {
      return new JsonObject().putNull("events");
    }
    JsonArray array = new JsonArray(new ArrayList<>(events.size()));
    for (DedupEvent e : events) {
      array.add(e == null ? null : e.toJson());
    }
    return new JsonObject().put("events", array);
  }
}
