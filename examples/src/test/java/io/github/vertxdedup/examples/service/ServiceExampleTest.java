package io.github.vertxdedup.examples.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.examples.Ledger;
import io.github.vertxdedup.examples.Receipts;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ServiceExampleTest {

  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void closeVertx() {
    vertx.close().await();
  }

  @Test
  void shouldCreditAndSendAReceiptOncePerPaymentDespiteRedeliveriesAndAFailedCredit() {
    Ledger ledger = new Ledger();
    Receipts receipts = new Receipts();

    List<JsonObject> replies = ServiceExample.run(vertx, ledger, receipts).await();

    assertThat(replies).extracting(r -> r.getString("paymentId") + " " + r.getString("credit") + " "
            + r.getString("receipt"))
        .containsExactly(
            "pay-1 credited sent",
            "pay-2 credited sent",
            "pay-1 duplicate duplicate",
            "pay-3 credited sent",      // its first delivery failed; the release let the second one through
            "pay-2 duplicate duplicate");
    for (String id : List.of("pay-1", "pay-2", "pay-3")) {
      assertThat(ledger.timesApplied(id)).as("credits of %s", id).isEqualTo(1);
      assertThat(receipts.timesSent(id)).as("receipts of %s", id).isEqualTo(1);
    }
    assertThat(ledger.applications()).isEqualTo(3);
    assertThat(ledger.totalCents()).isEqualTo(3 * 1250);
  }

  @Test
  void shouldAnswerALookupInTheWireForm() {
    ServiceExample.run(vertx, new Ledger(), new Receipts()).await();

    JsonObject known = ServiceExample.lookupOverTheWire(vertx, "pay-3").await();
    JsonObject unknown = ServiceExample.lookupOverTheWire(vertx, "pay-9").await();

    assertThat(known.getString("state")).isEqualTo("REMEMBERED");
    assertThat(known.getLong("expiresAtMs")).isGreaterThan(System.currentTimeMillis());
    assertThat(unknown.getString("state")).isEqualTo("ABSENT");
  }
}
