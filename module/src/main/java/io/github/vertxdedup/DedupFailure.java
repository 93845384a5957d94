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
   * {@code REJECT}, its journal is unavailable, or its pending queue is full. The message says which. Nothing was
   * recorded for the request. Inside a {@code checkBatch} or {@code claimBatch}, a full window refuses only the new
   * events, each with this code as its own element ({@link DedupBatchResult}); the other events are answered.
   */
  public static final int UNAVAILABLE = 503;

  private DedupFailure() {}
}
