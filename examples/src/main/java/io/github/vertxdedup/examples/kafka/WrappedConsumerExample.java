package io.github.vertxdedup.examples.kafka;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.examples.Ledger;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.testkit.LocalKafka;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * Deduplication added to a Vert.x {@link KafkaConsumer} the application already has: the consumer is created as
 * before, with {@code enable.auto.commit} off, and {@link DedupKafkaConsumer#wrap} takes over its handlers. Each
 * payment credits the ledger once per id (effect-first, the default mode), across producer copies.
 *
 * <p>Run: {@code scripts/run-example wrapped [bootstrap-servers|- [journal-dir]]}, like {@link RecordFirstExample}.
 * It publishes 1,000 payments with 20 % producer-side copies, consumes them, prints the counts and exits with 1 if a
 * payment was credited twice or not at all.
 */
public final class WrappedConsumerExample {

  private WrappedConsumerExample() {}

  /**
   * Creates the application's Vert.x consumer and wraps it (not yet subscribed).
   *
   * @param vertx the Vert.x instance
   * @param kafkaConfig {@code bootstrap.servers}, {@code group.id}, the deserializers
   * @param journalDir where the windows are journaled
   * @param ledger the ledger to credit
   * @return the consumer
   */
  public static DedupKafkaConsumer<String, String> create(Vertx vertx, Map<String, String> kafkaConfig,
      Path journalDir, Ledger ledger) {
    // tag::wrap[]
    Map<String, String> config = new HashMap<>(kafkaConfig);
    config.put("enable.auto.commit", "false");             // the wrapper commits what is done with
    KafkaConsumer<String, String> consumer = KafkaConsumer.create(vertx, config);  // the consumer you have
    DedupKafkaOptions options = new DedupKafkaOptions()
        .setDedup(new DedupOptions()
            .setWindow(Duration.ofMinutes(10))
            .setJournalDir(journalDir.toString()));     // windows rebuilt on assignment
    return DedupKafkaConsumer.<String, String>wrap(vertx, consumer, config, options)
        .identity(IdentityExtractor.header("message-id"))
        .handler(record -> {                             // instead of consumer.handler(...)
          JsonObject payment = new JsonObject(record.value());
          return ledger.credit(payment.getString("paymentId"), payment.getLong("amountCents"));
        });
    // end::wrap[]
  }

  /**
   * Publishes payments with producer-side copies, consumes them with {@link #create} and counts the credits.
   *
   * @param bootstrapServers the cluster
   * @param topic the topic (created with 3 partitions if missing)
   * @param group the consumer group
   * @param journalDir where the windows are journaled
   * @param ledger the ledger
   * @param payments payments to publish
   * @param duplicateRate share of payments the producer sends twice
   * @return the counts
   * @throws Exception if the broker fails or the group has not consumed the topic within 2 minutes
   */
  public static RunSummary run(String bootstrapServers, String topic, String group, Path journalDir, Ledger ledger,
      int payments, double duplicateRate) throws Exception {
    LocalKafka.createTopic(bootstrapServers, topic, 3);
    Payments.Published published = Payments.publish(bootstrapServers, topic, payments, duplicateRate, 13);
    return ConsumerRun.consume(bootstrapServers, topic, group, published.records(), published.distinctIds(),
        ledger::distinctIds, ledger::repeated, () -> 0,
        (vertx, config) -> create(vertx, config, journalDir, ledger));
  }

  /**
   * Runs the example once on a topic and group of its own (see {@link KafkaExampleCommand}); exits with 0 if every
   * payment was applied exactly once, 1 if not, 2 on bad arguments, 3 if the run failed.
   *
   * @param args {@code [bootstrap-servers|- [journal-dir]]}; {@code -} or nothing starts an in-process broker
   */
  public static void main(String[] args) {
    @picocli.CommandLine.Command(name = "wrapped", mixinStandardHelpOptions = true,
        description = "A Vert.x Kafka consumer with deduplication added: publishes 1,000 payments with 20 %% producer"
            + " copies and counts the effects.")
    class Command extends KafkaExampleCommand {
      @Override
      String name() {
        return "wrapped";
      }

      @Override
      String groupPrefix() {
        return "wrapped-ledger";
      }

      @Override
      RunSummary run(String servers, String topic, String group, Path dir) throws Exception {
        return WrappedConsumerExample.run(servers, topic, group, dir, new Ledger(), 1000, 0.2);
      }
    }
    KafkaExampleCommand.main(new Command(), args);
  }
}
