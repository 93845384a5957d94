package io.github.vertxdedup.impl.protocol;

import io.github.vertxdedup.DedupFailure;

/**
 * A request the partition refuses, with the {@link DedupFailure} code it is answered with. Thrown while decoding or
 * deciding and turned into a {@code ReplyException} by the verticle; nothing was recorded for the request. Carries
 * no stack trace: it is a normal answer, not a bug.
 */
public final class RequestFailure extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final int code;

  private RequestFailure(int code, String message) {
    super(message, null, false, false);
    this.code = code;
  }

  static RequestFailure badRequest(String message) {
    return new RequestFailure(DedupFailure.BAD_REQUEST, message);
  }

  public static RequestFailure stateConflict(String message) {
    return new RequestFailure(DedupFailure.STATE_CONFLICT, message);
  }

  public static RequestFailure unavailable(String message) {
    return new RequestFailure(DedupFailure.UNAVAILABLE, message);
  }

  public int code() {
    return code;
  }
}
