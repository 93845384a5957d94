package io.github.vertxdedup;

import io.github.vertxdedup.impl.client.DedupClientImpl;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * A {@link Future}-based client of the dedup service. It computes the owning partition of each event itself (the
 * same function as the router at {@code <address>}) and sends the request straight to {@code <address>.<p>}, so a
 * request costs one event-bus round trip. In the same JVM as the service it passes {@link DedupEvent}s and results by
 * reference through a local codec (no JSON); in a clustered Vert.x it sends JSON, the wire form, and reaches every
 * partition whichever member owns it.
 *
 * <p>Futures fail with the service's {@link io.vertx.core.eventbus.ReplyException}, whose
 * {@link io.vertx.core.eventbus.ReplyException#failureCode() failureCode} is one of {@link DedupFailure}; a
 * duplicate is not a failure but a {@link DedupResult} with {@link DedupVerdict#DUPLICATE}.
 *
 * <p>Every request has a deadline, {@link DedupOptions#getRequestTimeoutMs()} of the options the client was created
 * with. A request that found no owner (the event bus's {@code NO_HANDLERS}: no member has registered the partition's
 * address, as while its owner starts or fails over) reached nobody and is sent again with a backoff of 10 ms doubling
 * to 500 ms until an owner registers; past the deadline it fails with {@link DedupFailure#UNAVAILABLE} (failure type
 * {@code NO_HANDLERS}; nothing recorded). A request handed to an owner that did not answer by the deadline (its
 * member may have died with it in flight: the event bus does not fail such a reply earlier) fails with
 * {@link DedupFailure#OUTCOME_UNKNOWN} and is never sent again, because it may have been decided: see that code for
 * what to do. A failure the partition answered (400, 409, 503, 500) is passed on unchanged.
 * A null event or list fails its future with a 400 ({@link DedupFailure#BAD_REQUEST}) like any other invalid
 * input; no method throws for it.
 *
 * <p>Thread-safe; completes on the caller's context like any event-bus request. Do not change a {@link DedupEvent}
 * until the future of the request carrying it has completed.
 */
public interface DedupClient {

  /** How requests travel. */
  enum Transport {
    /**
     * By reference through a local codec: the service must run in the same JVM, and the Vert.x must not be
     * clustered (a partition may be owned by another member there, which a local codec cannot reach).
     */
    LOCAL,
    /** As JSON bodies with the action in a header: the wire form, for any caller. */
    JSON
  }

  /**
   * Creates a client of the service configured by {@code options}: it uses {@code address}, {@code partitions} and
   * {@code routeByKey}, which must match the deployed service (a partition refuses with a 400 an event sent to it by
   * a client that computes partitions otherwise), and {@code requestTimeoutMs}. Uses {@link Transport#LOCAL} unless
   * the Vert.x instance is clustered, {@link Transport#JSON} if it is.
   *
   * @param vertx the Vert.x instance
   * @param options the service's options
   * @return a client
   */
  static DedupClient create(Vertx vertx, DedupOptions options) {
    return create(vertx, options, vertx.isClustered() ? Transport.JSON : Transport.LOCAL);
  }

  /**
   * Creates a client with an explicit transport.
   *
   * @param vertx the Vert.x instance
   * @param options the service's options
   * @param transport how requests travel
   * @return a client
   * @throws IllegalArgumentException if {@code transport} is {@link Transport#LOCAL} and {@code vertx} is clustered
   */
  static DedupClient create(Vertx vertx, DedupOptions options, Transport transport) {
    return new DedupClientImpl(vertx, options, transport);
  }

  /**
   * Finds the partition that owns an event: by the fingerprint of its key if the service routes by key
   * ({@link DedupOptions#isRouteByKey()}), else of its id. O(length of the id or key).
   *
   * @param event the event (id, and key if any)
   * @return {@code 0 .. partitions - 1}; 0 for an event the service refuses whatever its partition (no key when it
   *     routes by key, no id when it routes by id, or a key when it routes by id over more than one partition):
   *     partition 0 answers it with a 400 naming the field
   */
  int partitionOf(DedupEvent event);

  /**
   * {@code check}: a first sighting is recorded and answered {@link DedupVerdict#ACCEPTED}.
   *
   * @param event id (required), key, payloadHash, eventTimeMs, rememberUntilMs
   * @return ACCEPTED, DUPLICATE, CONFLICT, IN_FLIGHT or UNKNOWN
   */
  Future<DedupResult> check(DedupEvent event);

  /**
   * {@code check} of a bare id.
   *
   * @param id the event id
   * @return see {@link #check(DedupEvent)}
   */
  default Future<DedupResult> check(String id) {
    return check(new DedupEvent(id));
  }

  /**
   * {@code claim}: a first sighting is held for a lease and answered ACCEPTED with a {@code claimToken}.
   *
   * @param event as for check, plus leaseMs and claimer (who claims; see {@link DedupEvent#setClaimer})
   * @return ACCEPTED (with a token), DUPLICATE, CONFLICT, IN_FLIGHT or UNKNOWN
   */
  Future<DedupResult> claim(DedupEvent event);

  /**
   * {@code commit}: the claimed id becomes remembered until its expiry. Repeating it is harmless.
   *
   * @param event id, key (if the claim had one), claimToken
   * @return COMMITTED; fails with 409 if the id is not claimed, the token differs or the lease ran out
   */
  Future<DedupResult> commit(DedupEvent event);

  /**
   * {@code release}: the claimed id is forgotten, so a redelivery is accepted.
   *
   * @param event id, key (if the claim had one), claimToken
   * @return RELEASED; fails with 409 if the id is not claimed, the token differs or the lease ran out
   */
  Future<DedupResult> release(DedupEvent event);

  /**
   * {@code lookup}: what the owning partition knows of the id (or its key); records nothing.
   *
   * @param event id, and key if any
   * @return the state and times
   */
  Future<DedupLookup> lookup(DedupEvent event);

  /**
   * {@code stats} of one partition.
   *
   * @param partition {@code 0 .. partitions - 1}
   * @return the counters
   */
  Future<JsonObject> stats(int partition);

  /**
   * {@code checkBatch}: the events, in order, in one request. All must belong to one partition (group them with
   * {@link #partitionOf}); at most {@code maxBatch}. One invalid event fails the whole batch with a 400 naming
   * {@code events[i].field} and nothing is recorded. Otherwise each event is answered on its own, as a single
   * {@link #check} of it in order would be: its {@link DedupResult}, or its own failure. Under {@code REJECT} a full
   * window refuses a new event with a 503 element (nothing recorded for it) while the ids it remembers are answered
   * {@link DedupVerdict#DUPLICATE} and the other events decided: settle those, retry only the refused ones.
   *
   * @param events the events
   * @return one element per event, in order ({@link DedupBatchResult#succeeded()} and
   *     {@link DedupBatchResult#result()}, or {@link DedupBatchResult#failureCode()} and
   *     {@link DedupBatchResult#message()}); a failed future with the
   *     service's {@link io.vertx.core.eventbus.ReplyException} if the request as a whole fails (400, or a 503 of a
   *     partition that is recovering, stopping or whose pending queue is full: nothing recorded), or with
   *     {@link IllegalArgumentException} if the events span partitions
   */
  Future<List<DedupBatchResult>> checkBatch(List<DedupEvent> events);

  /**
   * {@code claimBatch}: as {@link #checkBatch}, with claims: each event answered as a single {@link #claim} of it in
   * order would be, or with its own failure (a 503 for a new event a full window cannot reserve room for).
   *
   * @param events the events
   * @return one element per event, in order; failures as for {@link #checkBatch}
   */
  Future<List<DedupBatchResult>> claimBatch(List<DedupEvent> events);

  /**
   * {@code commitBatch}: commits of the events (id and claimToken each, as {@link #commit} takes), in order, in one
   * request to one partition (group them with {@link #partitionOf}); 1..{@code maxBatch} events. Each is answered on
   * its own: COMMITTED, or the failure a single commit of it would have failed with (409 if its claim's lease ran
   * out, it is not claimed, or the token differs), while the others are committed. An invalid event fails the whole
   * batch with a 400 naming {@code events[i].field} (or {@code events} if empty or over {@code maxBatch}) and nothing
   * is recorded. The reply, like a single commit's, comes after the journal write of every commit of the batch.
   *
   * @param events the events to commit
   * @return one result per event, in order; a failed future with {@link IllegalArgumentException} if the events
   *     span partitions
   */
  Future<List<DedupCommitResult>> commitBatch(List<DedupEvent> events);
}
