package io.github.vertxdedup.examples.service;

import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.examples.Ledger;
import io.github.vertxdedup.examples.Receipts;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.util.Locale;
import java.util.Objects;

/**
 * A billing verticle that consumes {@code payment.succeeded} deliveries from the event bus and guards its two
 * effects with the dedup service (an idempotent receiver: credit the ledger once, send one receipt):
 *
 * <ul>
 *   <li>the ledger credit with {@code claim}, credit, {@code commit} ({@code release} when the credit fails): a
 *       failed credit is retried by the next delivery, a credited payment is never credited again within the
 *       window;</li>
 *   <li>the receipt with {@code check}, then send: the id is remembered before the receipt goes out, so a receipt is
 *       never sent twice (a crash between the two loses it instead).</li>
 * </ul>
 *
 * <p>Each effect has its own dedup id ({@code <paymentId>} and {@code receipt/<paymentId>}), so a delivery that finds
 * the credit already done still sends a receipt that a crash had stopped.
 *
 * <p>A delivery is a request whose body is {@code {"paymentId": "...", "amountCents": 1250}}; the reply is a JSON
 * object with {@code credit} ({@code credited} or {@code duplicate}) and {@code receipt} ({@code sent} or
 * {@code duplicate}). A failed reply (code 503) means "not done, deliver again", as a broker nack would.
 *
 * <p>Runs on one event loop; every call returns a {@link Future} and nothing blocks.
 */
public class BillingVerticle extends VerticleBase {

  /** The event-bus address of the payment deliveries. */
  public static final String DELIVERIES = "payment.succeeded";

  private final DedupOptions dedupOptions;
  private final Ledger ledger;
  private final Receipts receipts;
  private DedupClient dedup;

  /**
   * @param dedupOptions the options the dedup service was deployed with (address and partition count)
   * @param ledger the ledger to credit
   * @param receipts the receipt sender
   */
  public BillingVerticle(DedupOptions dedupOptions, Ledger ledger, Receipts receipts) {
    this.dedupOptions = Objects.requireNonNull(dedupOptions, "dedupOptions");
    this.ledger = Objects.requireNonNull(ledger, "ledger");
    this.receipts = Objects.requireNonNull(receipts, "receipts");
  }

  @Override
  public Future<?> start() {
    // tag::client[]
    dedup = DedupClient.create(vertx, dedupOptions);   // same JVM: events pass by reference, no JSON
    // end::client[]
    MessageConsumer<JsonObject> consumer = vertx.eventBus().consumer(DELIVERIES, this::onDelivery);
    return consumer.completion();
  }

  private void onDelivery(Message<JsonObject> delivery) {
    String paymentId = delivery.body().getString("paymentId");
    long amountCents = delivery.body().getLong("amountCents");
    creditOnce(paymentId, amountCents)
        .compose(credit -> sendReceiptAtMostOnce(paymentId)
            .map(receipt -> new JsonObject().put("credit", credit).put("receipt", receipt)))
        .onSuccess(delivery::reply)
        .onFailure(e -> delivery.fail(503, e.getMessage()));
  }

  /**
   * Credits a payment once: claim its id, credit the ledger, commit the claim; on a failed credit, release the claim
   * so that the next delivery of the payment is accepted again.
   *
   * @param paymentId the payment id (the dedup id)
   * @param amountCents the amount, in cents
   * @return {@code "credited"} or {@code "duplicate"}; fails if the credit failed (the claim was released), if
   *     another delivery holds the claim ({@code IN_FLIGHT}), or with the service's {@code ReplyException}
   */
  // tag::claim-commit[]
  Future<String> creditOnce(String paymentId, long amountCents) {
    DedupEvent event = new DedupEvent(paymentId);
    return dedup.claim(event).compose(claim -> {
      if (claim.verdict() == DedupVerdict.DUPLICATE) {
        return Future.succeededFuture("duplicate");      // credited before: acknowledge, do nothing
      }
      if (claim.verdict() != DedupVerdict.ACCEPTED) {    // IN_FLIGHT, CONFLICT: not ours to apply now
        return Future.failedFuture("payment " + paymentId + " is " + claim.verdict());
      }
      event.setClaimToken(claim.claimToken());
      return ledger.credit(paymentId, amountCents).transform(credit -> credit.succeeded()
          ? dedup.commit(event).map("credited")          // remembered from now on for the window W
          : dedup.release(event)                         // forgotten: the next delivery tries again
              .transform(released -> Future.<String>failedFuture(credit.cause())));
    });
  }
  // end::claim-commit[]

  /**
   * Sends the receipt of a payment at most once: {@code check} records the receipt's id before it is sent.
   *
   * @param paymentId the payment id
   * @return {@code "sent"} or the lower-case verdict ({@code "duplicate"}); fails if sending failed (the receipt is
   *     then lost: its id is recorded) or with the service's {@code ReplyException}
   */
  // tag::check[]
  Future<String> sendReceiptAtMostOnce(String paymentId) {
    return dedup.check(new DedupEvent("receipt/" + paymentId)).compose(result ->
        result.verdict() == DedupVerdict.ACCEPTED
            ? receipts.send(paymentId).map("sent")       // recorded first: never sent twice
            : Future.succeededFuture(result.verdict().name().toLowerCase(Locale.ROOT)));
  }
  // end::check[]
}
