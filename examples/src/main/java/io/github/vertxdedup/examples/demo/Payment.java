package io.github.vertxdedup.examples.demo;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.util.Objects;

/**
 * A {@code payment.succeeded} event of the billing story ({@code docs/demo.md}): the payment's unique id, the account
 * to credit and the amount. Its JSON form is the Kafka record value:
 * {@code {"paymentId":"pay-k3x9-17","account":"acct-042","amountCents":12550}}.
 *
 * @param paymentId the payment's id, stable across producer retries and redeliveries; not blank, no whitespace
 * @param account the account to credit; not blank, no whitespace
 * @param amountCents the amount in cents, at least 1
 */
public record Payment(String paymentId, String account, long amountCents) {

  /**
   * @throws IllegalArgumentException if a field is blank, holds whitespace (the demo's files are space-separated)
   *     or the amount is below 1
   */
  public Payment {
    requireWord("paymentId", paymentId);
    requireWord("account", account);
    if (amountCents < 1) {
      throw new IllegalArgumentException("amountCents must be >= 1 but was " + amountCents);
    }
  }

  /**
   * Reads the JSON form.
   *
   * @param json the record value
   * @return the payment
   * @throws IllegalArgumentException if the text is not JSON or a field is missing or invalid (the message names it)
   */
  public static Payment fromJson(String json) {
    JsonObject o;
    try {
      o = new JsonObject(json);
    } catch (DecodeException e) {
      throw new IllegalArgumentException("payment value is not JSON: " + e.getMessage(), e);
    }
    Object amount = o.getValue("amountCents");
    if (!(amount instanceof Number n)) {
      throw new IllegalArgumentException("amountCents must be a number but was " + amount);
    }
    return new Payment(o.getString("paymentId"), o.getString("account"), n.longValue());
  }

  /** @return the JSON form, the Kafka record value */
  public String toJson() {
    return new JsonObject().put("paymentId", paymentId).put("account", account).put("amountCents", amountCents)
        .encode();
  }

  private static void requireWord(String field, String value) {
    Objects.requireNonNull(value, field);
    if (value.isBlank() || value.chars().anyMatch(Character::isWhitespace)) {
      throw new IllegalArgumentException(field + " must be non-blank without whitespace but was '" + value + "'");
    }
  }
}
