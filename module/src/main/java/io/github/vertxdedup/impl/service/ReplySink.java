package io.github.vertxdedup.impl.service;

import io.vertx.core.Promise;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

/**
 * Where the answer to one request of a partition goes: its event-bus message ({@link #of(Message)}), or the future of
 * an in-process call ({@link #of(Promise)}), which fails with the {@link ReplyException} the event bus would carry.
 * Called on the partition's event loop, once per request.
 */
interface ReplySink {

  /** @param body the reply body */
  void reply(Object body);

  /**
   * @param code a {@link io.github.vertxdedup.DedupFailure} code
   * @param message what failed, naming the field or the state
   */
  void fail(int code, String message);

  /** @return a sink that answers an event-bus request */
  static ReplySink of(Message<Object> message) {
    return new ReplySink() {
      @Override
      public void reply(Object body) {
        message.reply(body);
      }

      @Override
      public void fail(int code, String text) {
        message.fail(code, text);
      }
    };
  }

  /** @return a sink that completes an in-process call's promise, or fails it with a recipient-failure reply */
  static <T> ReplySink of(Promise<T> promise) {
    return new ReplySink() {
      @Override
      @SuppressWarnings("unchecked")
      public void reply(Object body) {
        promise.complete((T) body);
      }

      @Override
      public void fail(int code, String text) {
        promise.fail(new ReplyException(ReplyFailure.RECIPIENT_FAILURE, code, text));
      }
    };
  }
}
