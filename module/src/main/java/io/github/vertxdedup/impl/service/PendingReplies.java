package io.github.vertxdedup.impl.service;

import io.vertx.core.Context;
import io.vertx.core.Future;
import java.util.ArrayDeque;

/**
 * The replies of one partition that wait for their journal write. A request is decided at once, its state change
 * handed to the journal, and its reply held until every journal write issued up to then has completed; replies go out
 * in decision order. With the memory-only journal every write is already complete and the reply goes out at once. At
 * most {@code maxPending} replies wait ({@link #isFull}).
 *
 * <p>What a failed write means for the partition (stop deciding, reopen the journal) is the owner's: {@link #send}
 * and {@link #drain} report the failure and leave the replies from the failed write on queued for the owner to
 * refuse ({@link #failAll}).
 *
 * <p>Confined to the partition's event loop (not thread-safe).
 */
final class PendingReplies {

  private final int maxPending;
  private final Context context;
  private final Runnable onWriteCompleted;
  private final ArrayDeque<Pending> queue = new ArrayDeque<>();
  /** The write whose completion is already watched, so that a run of replies on one write registers one handler. */
  private Future<?> watched;

  /**
   * @param maxPending the most replies that may wait
   * @param context the partition's context
   * @param onWriteCompleted run on {@code context} when a watched write completes; it calls {@link #drain}
   */
  PendingReplies(int maxPending, Context context, Runnable onWriteCompleted) {
    this.maxPending = maxPending;
    this.context = context;
    this.onWriteCompleted = onWriteCompleted;
  }

  /** @return the replies waiting now */
  int size() {
    return queue.size();
  }

  /** @return true if {@code maxPending} replies wait: a new request must be refused before it is decided */
  boolean isFull() {
    return queue.size() >= maxPending;
  }

  /**
   * Sends a decided request's reply once {@code write} (the latest journal write issued, which covers this decision)
   * and every earlier one have completed: at once if nothing waits and the write has succeeded.
   *
   * @param sink where the reply goes
   * @param reply the reply body
   * @param write the latest journal write issued when the request was decided
   * @return the write's failure if it has already failed (the reply waits; the owner stops deciding and refuses it),
   *     else null
   */
  Throwable send(ReplySink sink, Object reply, Future<?> write) {
    if (queue.isEmpty() && write.isComplete() && write.succeeded()) {
      sink.reply(reply);
      return null;
    }
    queue.add(new Pending(sink, reply, write));
    if (write.isComplete()) {
      return write.failed() ? write.cause() : null;
    }
    if (write != watched) {
      watched = write;
      write.onComplete(ar -> context.runOnContext(v -> onWriteCompleted.run()));
    }
    return null;
  }

  /**
   * Sends every waiting reply whose journal write (and every earlier one) has completed, in order, and stops at the
   * first failed write: its reply and every later one (decided after it, so possibly on top of it) stay queued.
   *
   * @return the failure of the write it stopped at, or null if none failed
   */
  Throwable drain() {
    Pending p;
    while ((p = queue.peek()) != null && p.write.isComplete()) {
      if (p.write.failed()) {
        return p.write.cause();
      }
      queue.poll();
      p.sink.reply(p.reply);
    }
    return null;
  }

  /**
   * Refuses every waiting reply.
   *
   * @param code the failure code
   * @param message the failure's message
   */
  void failAll(int code, String message) {
    Pending p;
    while ((p = queue.poll()) != null) {
      p.sink.fail(code, message);
    }
  }

  /** A decided request whose reply waits for a journal write. */
  private record Pending(ReplySink sink, Object reply, Future<?> write) {}
}
