package io.github.vertxdedup;

import io.vertx.core.json.JsonObject;
import java.util.Objects;

/**
 * One element of a {@code commitBatch} reply: either the {@link DedupVerdict#COMMITTED} result a single
 * {@code commit} of the event would have answered, or the failure it would have failed with (its
 * {@link DedupFailure} code, e.g. {@link DedupFailure#STATE_CONFLICT} for a claim whose lease ran out or that is not
 * held, and its message). Immutable and thread-safe.
 *
 * <p>Wire form: the result's JSON ({@code verdict}, {@code partition}) when committed, else
 * {@code {"failureCode": 409, "message": "..."}}: the element form of every batch reply ({@link DedupBatchResult}).
 *
 * @param result the COMMITTED result, or null if the commit failed
 * @param failureCode the failure code if the commit failed, else 0
 * @param message the failure message if the commit failed, else null
 */
public record DedupCommitResult(DedupResult result, int failureCode, String message) {

  /**
   * Validates the components.
   *
   * @param result the COMMITTED result, or null if the commit failed
   * @param failureCode the failure code if the commit failed, else 0
   * @param message the failure message if the commit failed, else null
   * @throws IllegalArgumentException if neither or both of {@code result} and a failure ({@code failureCode > 0}
   *     and a message) are given
   */
  public DedupCommitResult {
    if ((result == null) == (failureCode <= 0 || message == null)) {
      throw new IllegalArgumentException("a commit result has either a result or a failureCode > 0 and a message"
          + " but had result=" + result + ", failureCode=" + failureCode + ", message=" + message);
    }
  }

  /**
   * @param result the COMMITTED result
   * @return a committed element
   * @throws NullPointerException if {@code result} is null
   */
  public static DedupCommitResult committed(DedupResult result) {
    return new DedupCommitResult(Objects.requireNonNull(result, "result"), 0, null);
  }

  /**
   * @param code the {@link DedupFailure} code, {@code > 0}
   * @param message the failure message, not null
   * @return a failed element
   */
  public static DedupCommitResult failed(int code, String message) {
    return new DedupCommitResult(null, code, message);
  }

  /** @return true if the id was committed (now, or by an earlier commit with the same token) */
  public boolean committed() {
    return result != null;
  }

  /** @return the wire form */
  public JsonObject toJson() {
    return result != null ? result.toJson() : new JsonObject().put("failureCode", failureCode).put("message", message);
  }

  /**
   * Reads the wire form.
   *
   * @param json an element of a {@code commitBatch} reply's {@code results}
   * @return the element
   * @throws IllegalArgumentException if it is neither form
   */
  public static DedupCommitResult fromJson(JsonObject json) {
    if (json.containsKey("failureCode")) {
      return failed(json.getInteger("failureCode"), json.getString("message"));
    }
    return committed(DedupResult.fromJson(json));
  }
}
