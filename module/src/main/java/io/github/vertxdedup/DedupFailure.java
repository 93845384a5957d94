package io.github.vertxdedup;

/**
 * Failure codes of the dedup service: the {@link io.vertx.core.eventbus.ReplyException#failureCode()} of a failed
 * request. They follow the HTTP status codes of the same meaning, so a bridge can pass them through. Every failure
 * message names the field or the condition and, for a bad value, the limit. A duplicate is not a failure: it is a
 * normal reply with a {@link DedupVerdict}.
 */
public final class DedupFailure {

  /** The request is malformed: a field is missing, of the wrong type, out of range, unknown, or not allowed here. */
  public static final int BAD_REQUEST = 400;

  /**
   * The request conflicts with the partition's state: {@code commit} or {@code release} of an id that is not
   * claimed, with the wrong {@code claimToken}, or whose lease ran out.
   */
  public static final int STATE_CONFLICT = 409;

  /** A bug in the service; the message carries the exception. The request may be retried. */
  public static final int INTERNAL_ERROR = 500;

  /**
   * Not available now; retry later: the partition is recovering, stopping or failed, its window is full under
   * {@code REJECT}, its journal is unavailable, or its pending queue is full; or no member of the Vert.x cluster
   * registered the partition's address within the client's request timeout (its owner is starting or failing over;
   * the client retried meanwhile, see {@link DedupClient}). The message says which. Nothing was
   * recorded for the request. Inside a {@code checkBatch} or {@code claimBatch}, a full window refuses only the new
   * events, each with this code as its own element ({@link DedupBatchResult}); the other events are answered.
   */
  public static final int UNAVAILABLE = 503;

  /**
   * The outcome is unknown: the request was sent towards the partition's owner and no answer came back, so it may
   * or may not have been decided there. The partition's owner (on another member of a Vert.x cluster, say) did not
   * answer within the client's request timeout ({@link DedupOptions#getRequestTimeoutMs()}), its member died or
   * left with the request in flight, or the connection to it failed after the request was handed to the event bus.
   * The client does not retry such a request, and neither should the caller blindly: if the first attempt of a
   * {@code check} or {@code claim} was decided, its {@link DedupVerdict#ACCEPTED} was lost on the way back, and a
   * retry would be answered {@link DedupVerdict#DUPLICATE} (or {@link DedupVerdict#IN_FLIGHT}), so the event's
   * effect would never happen. A {@code lookup} of the id tells its state ({@link EntryState}) once the partition
   * answers again ({@link EntryState#ABSENT}: the first attempt was not recorded, send it again),
   * {@link EntryState#IN_FLIGHT} or {@link EntryState#REMEMBERED} (it was; the effect is the caller's to settle).
   * After a failover without the journal the new owner cannot know what the old one decided (its window starts
   * empty; see {@code docs/partitioning.md}). Compare {@link #UNAVAILABLE}, which says that nothing was recorded.
   */
  public static final int OUTCOME_UNKNOWN = 504;

  private DedupFailure() {}
}
