package io.github.vertxdedup.examples.service;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.examples.Ledger;
import io.github.vertxdedup.examples.Receipts;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The event-bus dedup service on its own: deploys {@code DedupVerticle} and a {@link BillingVerticle}, then delivers
 * payments the way an at-least-once source does (some twice, one whose first credit fails and is delivered again)
 * and prints what the billing verticle did with each delivery.
 *
 * <p>Run it with {@code scripts/run-example service} (memory only: no journal, no broker; the script builds the
 * module if needed). Everything happens in this JVM; nothing blocks an event loop.
 */
public final class ServiceExample {

  private ServiceExample() {}

  /**
   * The dedup service's options: four partitions, a ten-minute window.
   *
   * @return new options
   */
  public static DedupOptions dedupOptions() {
    // tag::options[]
    return new DedupOptions()
        .setAddress("billing.dedup")         // partitions listen on billing.dedup.0 .. billing.dedup.3
        .setPartitions(4)
        .setWindow(Duration.ofMinutes(10))   // W: longer than the longest way a payment can come back
        .setBucket(Duration.ofSeconds(10))   // b: ids are remembered between W - b and W
        .setLease(Duration.ofSeconds(30));   // a claim not committed or released within 30 s is forgotten
    // end::options[]
  }

  /**
   * Deploys the dedup service, then the billing verticle that uses it.
   *
   * @param vertx the Vert.x instance
   * @param ledger the ledger the billing verticle credits
   * @param receipts the receipts it sends
   * @return completes when both are deployed (every partition ready); fails if a deployment fails
   */
  public static Future<Void> deploy(Vertx vertx, Ledger ledger, Receipts receipts) {
    DedupOptions options = dedupOptions();
    // tag::deploy[]
    return vertx.deployVerticle("io.github.vertxdedup.DedupVerticle",
            new DeploymentOptions().setConfig(options.toJson()))
        .compose(id -> vertx.deployVerticle(new BillingVerticle(options, ledger, receipts)))
        .mapEmpty();
    // end::deploy[]
  }

  /**
   * Delivers a payment to the billing verticle and, while the reply is a failure, delivers it again (at most
   * {@code attempts} times), as a broker redelivers what was not acknowledged.
   *
   * @param vertx the Vert.x instance
   * @param paymentId the payment id
   * @param amountCents the amount, in cents
   * @param attempts deliveries at most, at least 1
   * @return the billing verticle's reply to the last delivery
   */
  public static Future<JsonObject> deliver(Vertx vertx, String paymentId, long amountCents, int attempts) {
    JsonObject payment = new JsonObject().put("paymentId", paymentId).put("amountCents", amountCents);
    return vertx.eventBus().<JsonObject>request(BillingVerticle.DELIVERIES, payment)
        .map(Message::body)
        .recover(e -> attempts > 1 ? deliver(vertx, paymentId, amountCents, attempts - 1) : Future.failedFuture(e));
  }

  /**
   * Asks the service what it knows of an id with a plain event-bus request in the wire form (JSON body, action in
   * the {@code action} header), as a caller in another language or another JVM of a cluster would.
   *
   * @param vertx the Vert.x instance
   * @param id the id
   * @return the reply: {@code state} ({@code ABSENT}, {@code IN_FLIGHT} or {@code REMEMBERED}), {@code partition},
   *     and {@code firstSeenMs} / {@code expiresAtMs} when remembered
   */
  public static Future<JsonObject> lookupOverTheWire(Vertx vertx, String id) {
    // tag::wire[]
    return vertx.eventBus().<JsonObject>request("billing.dedup",          // the router forwards to the owner
            new JsonObject().put("id", id),
            new DeliveryOptions().addHeader("action", "lookup"))         // check, claim, commit, release, lookup
        .map(Message::body);
    // end::wire[]
  }

  /**
   * Deploys, delivers {@code pay-1}, {@code pay-2}, {@code pay-1} again, {@code pay-3} (whose first credit fails,
   * so it is delivered again) and {@code pay-2} again, one after the other.
   *
   * @param vertx the Vert.x instance
   * @param ledger the ledger
   * @param receipts the receipts
   * @return the replies in delivery order, each with the payment id added
   */
  public static Future<List<JsonObject>> run(Vertx vertx, Ledger ledger, Receipts receipts) {
    ledger.failNextCredit("pay-3");
    List<String> deliveries = List.of("pay-1", "pay-2", "pay-1", "pay-3", "pay-2");
    List<JsonObject> replies = new ArrayList<>();
    Future<Void> chain = deploy(vertx, ledger, receipts);
    for (String id : deliveries) {
      chain = chain.compose(v -> deliver(vertx, id, 1250, 3))
          .map(reply -> {
            replies.add(reply.put("paymentId", id));
            return null;
          });
    }
    return chain.map(v -> replies);
  }

  /**
   * Runs the example and prints each reply, the ledger and what the service knows of {@code pay-1}.
   *
   * @param args none; {@code --help} shows the usage, anything else is refused with exit code 2
   */
  public static void main(String[] args) {
    @picocli.CommandLine.Command(name = "service", mixinStandardHelpOptions = true,
        description = "The event-bus dedup service alone (memory only): a few payment deliveries, the ledger and a"
            + " lookup. Takes no arguments.")
    class Command implements java.util.concurrent.Callable<Integer> {
      @Override
      public Integer call() {
        runAndPrint();
        return 0;
      }
    }
    System.exit(new picocli.CommandLine(new Command()).execute(args));
  }

  private static void runAndPrint() {
    Vertx vertx = Vertx.vertx();
    Ledger ledger = new Ledger();
    Receipts receipts = new Receipts();
    try {
      List<JsonObject> replies = run(vertx, ledger, receipts).await();
      replies.forEach(r -> System.out.println("delivery " + r.encode()));
      System.out.printf("ledger: %d payments credited, %d credits, %d receipts sent%n",
          ledger.distinctIds(), ledger.applications(), receipts.sent());
      System.out.println("lookup pay-1: " + lookupOverTheWire(vertx, "pay-1").await().encode());
    } finally {
      vertx.close().await();
    }
  }
}
