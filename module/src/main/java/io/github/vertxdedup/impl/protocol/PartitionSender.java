package io.github.vertxdedup.impl.protocol;

import io.github.vertxdedup.DedupFailure;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.concurrent.TimeUnit;

/**
 * Sends one request to a partition's address within a deadline and reports every way it can fail in the service's
 * terms: the failure path of {@link io.github.vertxdedup.DedupClient} and of the service's router.
 *
 * <p>What a failure says about the request decides whether it may be sent again. The Vert.x event bus (5.0, read
 * from {@code EventBusImpl}, {@code ClusteredEventBus}, {@code OutboundConnection} and {@code ReplyHandler} of
 * vertx-core 5.0.7) fails a request in these ways:
 * <ul>
 *   <li>{@link ReplyFailure#NO_HANDLERS}: the sender found no registration of the address, in this JVM or (clustered)
 *       in the cluster manager's registry as this member sees it. The message was handed to nobody, so it was
 *       decided by nobody: during a failover, the old owner's registrations are gone and the new owner has not
 *       registered yet. If the sender retries, sent again after a bounded backoff ({@value #FIRST_BACKOFF_MS} ms doubling up to
 *       {@value #MAX_BACKOFF_MS} ms) while the deadline allows; if it passes first, the request fails with
 *       {@link DedupFailure#UNAVAILABLE} (nothing recorded) and failure type {@code NO_HANDLERS}.
 *   <li>{@link ReplyFailure#RECIPIENT_FAILURE}: a partition (or the router) answered with a failure code; passed on
 *       unchanged, code and message. A 503 of a partition keeps saying that nothing was recorded.
 *   <li>{@link ReplyFailure#TIMEOUT}: no answer within the deadline. The request may have been decided (the owner
 *       is slow, or its member died or left with the request in flight), so it is not sent again: it fails with
 *       {@link DedupFailure#OUTCOME_UNKNOWN}. The event bus does not fail the pending replies of a member that leaves
 *       the cluster, nor a request whose write to a member's connection failed (that write failure does not reach
 *       the reply handler): such requests end here, at the deadline, and never later.
 *   <li>anything else ({@link ReplyFailure#ERROR}, or an exception that is not a {@link ReplyException}): reported as
 *       {@link DedupFailure#OUTCOME_UNKNOWN} too, since the request was handed to the event bus and may have left.
 * </ul>
 * A message that reaches a member whose consumer of the address has just gone (its registration not yet removed from
 * the registry the sender saw) is dropped there without an answer, so it also ends as a timeout: not provably
 * undecided, hence not sent again.
 *
 * <p>The deadline is measured with {@link System#nanoTime()} and the waits are Vert.x timers: real time, like the
 * event bus's own send timeout. Immutable and thread-safe; a request's callbacks run on the caller's context (a
 * retry's timer is set from within the failed attempt's callback, on that context).
 */
public final class PartitionSender {

  /** The first wait before a request that found no handlers is sent again, in milliseconds: {@value}. */
  public static final long FIRST_BACKOFF_MS = 10;
  /** The longest wait between two attempts, in milliseconds: {@value}. */
  public static final long MAX_BACKOFF_MS = 500;

  private final Vertx vertx;
  private final EventBus bus;
  private final long timeoutMs;
  private final boolean retry;

  /**
   * @param vertx the Vert.x instance whose event bus sends and whose timers wait
   * @param requestTimeoutMs the deadline of one request, attempts and waits included, in milliseconds, {@code >= 1}
   * @param retry whether a request that found no handlers is sent again within the deadline; if false it fails at
   *     once with {@link DedupFailure#UNAVAILABLE} (failure type {@code NO_HANDLERS})
   * @throws IllegalArgumentException if {@code requestTimeoutMs < 1}
   */
  public PartitionSender(Vertx vertx, long requestTimeoutMs, boolean retry) {
    if (requestTimeoutMs < 1) {
      throw new IllegalArgumentException("requestTimeoutMs must be >= 1 but was " + requestTimeoutMs);
    }
    this.vertx = vertx;
    this.bus = vertx.eventBus();
    this.timeoutMs = requestTimeoutMs;
    this.retry = retry;
  }

  /** @return the deadline of one request, in milliseconds */
  public long timeoutMs() {
    return timeoutMs;
  }

  /**
   * Returns delivery options whose send timeout is this sender's deadline; add the headers to them.
   *
   * @return new options
   */
  public DeliveryOptions deliveryOptions() {
    return new DeliveryOptions().setSendTimeout(timeoutMs);
  }

  /**
   * Sends a request and waits for its reply, sending it again while no handler is registered at {@code address}
   * and the deadline allows. O(1) per attempt.
   *
   * @param address the partition's address
   * @param body the request body (JSON, or a local request within one JVM)
   * @param options headers and codec; their send timeout must be this sender's ({@link #deliveryOptions()}), the
   *     first attempt's deadline
   * @param <T> the reply body's type
   * @return the reply; or a failed future with a {@link ReplyException} whose {@link ReplyException#failureCode()}
   *     is the partition's own (failure type {@code RECIPIENT_FAILURE}), {@link DedupFailure#UNAVAILABLE} (type
   *     {@code NO_HANDLERS}: no handler registered before the deadline, nothing recorded) or
   *     {@link DedupFailure#OUTCOME_UNKNOWN} (type {@code TIMEOUT} or {@code ERROR}: sent, not answered, not retried)
   */
  public <T> Future<Message<T>> request(String address, Object body, DeliveryOptions options) {
    long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    return bus.<T>request(address, body, options)
        .recover(e -> retryOrFail(address, body, options, deadlineNs, FIRST_BACKOFF_MS, 1, e));
  }

  private <T> Future<Message<T>> retryOrFail(String address, Object body, DeliveryOptions options, long deadlineNs,
      long backoffMs, int attempts, Throwable failure) {
    if (!(failure instanceof ReplyException re) || re.failureType() != ReplyFailure.NO_HANDLERS) {
      return Future.failedFuture(failure(address, failure, attempts));
    }
    long remaining = remainingMs(deadlineNs);
    if (!retry || remaining <= 0) {
      return Future.failedFuture(noOwner(address, attempts));
    }
    Promise<Message<T>> promise = Promise.promise();
    // The last wait ends at the deadline, where the request fails if it found no owner yet.
    vertx.setTimer(Math.max(1, Math.min(backoffMs, remaining)), id -> {
      long left = remainingMs(deadlineNs);
      if (left <= 0) {
        promise.fail(noOwner(address, attempts));
        return;
      }
      bus.<T>request(address, body, new DeliveryOptions(options).setSendTimeout(left))
          .recover(e -> retryOrFail(address, body, options, deadlineNs, Math.min(backoffMs * 2, MAX_BACKOFF_MS),
              attempts + 1, e))
          .onComplete(promise);
    });
    return promise.future();
  }

  private static long remainingMs(long deadlineNs) {
    return TimeUnit.NANOSECONDS.toMillis(deadlineNs - System.nanoTime());
  }

  private ReplyException noOwner(String address, int attempts) {
    return new ReplyException(ReplyFailure.NO_HANDLERS, DedupFailure.UNAVAILABLE, "no owner of " + address
        + (retry ? ": no member registered the address within requestTimeoutMs " + timeoutMs + " (" + attempts
        + " attempts)" : ": no member has registered the address") + "; the partition is not deployed, or its"
        + " owner is starting, stopping or failing over; nothing recorded, retry later");
  }

  private ReplyException failure(String address, Throwable failure, int attempts) {
    if (failure instanceof ReplyException re) {
      switch (re.failureType()) {
        case RECIPIENT_FAILURE:
          return re;
        case TIMEOUT:
          return new ReplyException(ReplyFailure.TIMEOUT, DedupFailure.OUTCOME_UNKNOWN, "outcome unknown: " + address
              + " did not answer within requestTimeoutMs " + timeoutMs + (attempts > 1 ? " (attempt " + attempts
              + ", the earlier ones found no owner)" : "") + "; the request may have been decided (its owner is slow"
              + " or left with it in flight), so it was not sent again: a repeated check could answer DUPLICATE"
              + " for an id whose ACCEPTED was lost; lookup tells the id's state");
        default:
          break;
      }
    }
    return new ReplyException(ReplyFailure.ERROR, DedupFailure.OUTCOME_UNKNOWN, "outcome unknown: the request to "
        + address + " failed after it was handed to the event bus (" + failure + "); it may have been decided, so"
        + " it was not sent again; lookup tells the id's state");
  }
}
