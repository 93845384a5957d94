package io.github.vertxdedup.examples;

import io.vertx.core.Future;
import java.util.Map;

/**
 * An in-memory stand-in for a receipt sender (an e-mail or SMS gateway): it counts the receipts sent per payment, so
 * a run can show that no receipt went out twice.
 *
 * <p>Thread-safe; {@link #send} never blocks.
 */
public final class Receipts {

  private final Ledger sent = new Ledger();

  /**
   * Sends the receipt of a payment.
   *
   * @param paymentId the payment id
   * @return a succeeded future
   */
  public Future<Void> send(String paymentId) {
    return sent.credit(paymentId, 0);
  }

  /**
   * @param paymentId the payment id
   * @return how many receipts were sent for it
   */
  public int timesSent(String paymentId) {
    return sent.timesApplied(paymentId);
  }

  /** @return the number of payments that got at least one receipt */
  public int distinctIds() {
    return sent.distinctIds();
  }

  /** @return the number of receipts sent, repeats included */
  public int sent() {
    return sent.applications();
  }

  /** @return the payments that got more than one receipt, with their counts (empty when all went well) */
  public Map<String, Integer> repeated() {
    return sent.repeated();
  }
}
