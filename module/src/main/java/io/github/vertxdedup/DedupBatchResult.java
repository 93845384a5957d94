package io.github.vertxdedup;

import io.vertx.core.AsyncResult;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.util.Objects;

/**
 * One element of a {@code checkBatch} or {@code claimBatch} reply: either the {@link DedupResult} a single
 * {@code check} or {@code claim} of the event would have answered, or the failure it would have failed with (its
 * {@link DedupFailure} code and message): {@link DedupFailure#UNAVAILABLE} for a new id that a full window refuses
 * under {@code REJECT} (or, under any policy, when the window's table is at its largest size and cannot grow: see
 * {@code docs/service.md}, "Known limits"), while the other events of the batch are decided. Nothing was recorded for a failed element.
 * An {@link AsyncResult}, so a failed element reads as a failed single request does: {@link #cause()} is the
 * {@link ReplyException} that request would have failed with. Immutable and thread-safe.
 *
 * <p>Wire form, the same as a {@code commitBatch} element's ({@link DedupCommitResult}): the result's JSON
 * ({@code verdict}, {@code partition}, ...) when decided, else {@code {"failureCode": 503, "message": "..."}}.
 *
 * @param result the result, or null if the element failed
 * @param failureCode the failure code if the element failed, else 0
 * @param message the failure message if the element failed, else null
 */
public record DedupBatchResult(DedupResult result, int failureCode, String message)
    implements AsyncResult<DedupResult> {

  /**
   * Makes an element; {@link #decided} and {@link #failed} are the usual way.
   *
   * @param result the result, or null if the element failed
   * @param failureCode the failure code if the element failed, else 0
   * @param message the failure message if the element failed, else null
   * @throws IllegalArgumentException if neither or both of {@code result} and a failure ({@code failureCode > 0}
   *     and a message) are given
   */
  public DedupBatchResult {
    if ((result == null) == (failureCode <= 0 || message == null)) {
      throw new IllegalArgumentException("a batch result has either a result or a failureCode > 0 and a message"
          + " but had result=" + result + ", failureCode=" + failureCode + ", message=" + message);
    }
  }

  /**
   * @param result the decision
   * @return a decided element
   * @throws NullPointerException if {@code result} is null
   */
  public static DedupBatchResult decided(DedupResult result) {
    return new DedupBatchResult(Objects.requireNonNull(result, "result"), 0, null);
  }

  /**
   * @param code the {@link DedupFailure} code, {@code > 0}
   * @param message the failure message, not null
   * @return a failed element
   * @throws IllegalArgumentException if {@code code <= 0} or {@code message} is null
   */
  public static DedupBatchResult failed(int code, String message) {
    return new DedupBatchResult(null, code, message);
  }

  /** @return true if the event was decided: {@link #result()} holds its verdict */
  @Override
  public boolean succeeded() {
    return result != null;
  }

  /** @return true if the event was refused: {@link #failureCode()} and {@link #message()} say why */
  @Override
  public boolean failed() {
    return result == null;
  }

  /**
   * @return for a failed element, a new {@link ReplyException} ({@link ReplyFailure#RECIPIENT_FAILURE}, the
   *     {@link #failureCode()} and {@link #message()}), as a single request of the event would have failed with;
   *     null for a decided one
   */
  @Override
  public ReplyException cause() {
    return result != null ? null : new ReplyException(ReplyFailure.RECIPIENT_FAILURE, failureCode, message);
  }

  /** @return the wire form */
  public JsonObject toJson() {
    return result != null ? result.toJson() : new JsonObject().put("failureCode", failureCode).put("message", message);
  }

  /**
   * Reads the wire form.
   *
   * @param json an element of a {@code checkBatch} or {@code claimBatch} reply's {@code verdicts}
   * @return the element
   * @throws IllegalArgumentException if it is neither form
   */
  public static DedupBatchResult fromJson(JsonObject json) {
    if (json.containsKey("failureCode")) {
      return failed(json.getInteger("failureCode", 0), json.getString("message"));
    }
    return decided(DedupResult.fromJson(json));
  }
}
