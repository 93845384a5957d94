package io.github.vertxdedup.examples.kafka;

import io.github.vertxdedup.examples.Ledger;
import io.vertx.config.ConfigRetriever;
import io.vertx.config.ConfigRetrieverOptions;
import io.vertx.config.ConfigStoreOptions;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

/**
 * The dedup Kafka consumer without Java handler code of its own: {@code DedupKafkaVerticle} deployed by name from a
 * JSON file ({@code examples/config/dedup-kafka-verticle.json}), read with {@code vertx-config} and merged with
 * overrides, and the ledger credited by an ordinary event-bus consumer at the verticle's address. Its test,
 * {@code VerticleExampleTest}, runs both against an in-process broker.
 */
public final class VerticleExample {

  private VerticleExample() {}

  /**
   * Registers the handler of the records the verticle sends to {@code address}: each request's body is a record, and
   * the reply tells the verticle whether its effect was applied.
   *
   * @param vertx the Vert.x instance
   * @param address the verticle's {@code address}
   * @param ledger the ledger to credit
   * @return completes once the handler is registered
   */
  public static Future<Void> handleRecords(Vertx vertx, String address, Ledger ledger) {
    // tag::handler[]
    return vertx.eventBus().<JsonObject>consumer(address, request -> {
      JsonObject record = request.body();                        // topic, partition, offset, key, value, headers...
      JsonObject payment = new JsonObject(record.getString("value"));   // the value, as its deserializer gave it
      ledger.credit(payment.getString("paymentId"), payment.getLong("amountCents"))
          .onSuccess(v -> request.reply(null))                   // done: the next record of the partition follows
          .onFailure(e -> request.fail(500, e.getMessage()));     // retried with backoff, then a dead letter
    }).completion();
    // end::handler[]
  }

  /**
   * Reads the configuration file, merges {@code overrides} over it (the settings of one environment, say) and deploys
   * the consumer verticle with the result.
   *
   * @param vertx the Vert.x instance
   * @param configFile the JSON file, e.g. {@code examples/config/dedup-kafka-verticle.json}
   * @param overrides keys merged over the file's (objects merge key by key)
   * @return the deployment id; fails if the file cannot be read or the verticle refuses the configuration (the message
   *     names the key)
   */
  public static Future<String> deploy(Vertx vertx, String configFile, JsonObject overrides) {
    // tag::deploy[]
    ConfigRetriever retriever = ConfigRetriever.create(vertx, new ConfigRetrieverOptions()
        .addStore(new ConfigStoreOptions().setType("file").setConfig(new JsonObject().put("path", configFile)))
        .addStore(new ConfigStoreOptions().setType("json").setConfig(overrides)));
    return retriever.getConfig()
        .compose(config -> vertx.deployVerticle("io.github.vertxdedup.kafka.DedupKafkaVerticle",
            new DeploymentOptions().setConfig(config)))  // reads "dedupKafka", leaves "http" and the rest alone
        .onComplete(ar -> retriever.close());
    // end::deploy[]
  }
}
