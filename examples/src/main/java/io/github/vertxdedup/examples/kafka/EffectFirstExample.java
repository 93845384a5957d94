package io.github.vertxdedup.examples.kafka;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.examples.Ledger;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DeadLetter;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.testkit.LocalKafka;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A Kafka consumer in effect-first mode: each payment credits the ledger, and no credit is lost. The id (from the
 * {@code message-id} header) is claimed, the ledger credited, then the claim committed; a failed credit releases the
 * claim and is retried; a crash between the credit and the commit repeats that credit after the restart instead of
 * losing it (see {@code docs/atomicity.md}). A payload hash turns a reused id with another payload into a
 * {@code CONFLICT} for the dead-letter handler instead of a silent duplicate.
 *
 * <p>Run like {@link RecordFirstExample} (same arguments). It publishes 1,000 payments with 20 % producer-side
 * copies and one conflicting record, makes the first credit of {@code pay-1} fail, consumes, prints the counts and
 * exits with 1 if a payment was credited twice or not at all.
 */
public final class EffectFirstExample {

  private EffectFirstExample() {}

  /**
   * Builds the consumer (not yet subscribed).
   *
   * @param vertx the Vert.x instance
   * @param kafkaConfig {@code bootstrap.servers}, {@code group.id}, the deserializers
   * @param journalDir where the windows are journaled
   * @param ledger the ledger to credit
   * @param deadLetters where dead letters go (a real application produces them to a dead-letter topic)
   * @return the consumer
   */
  public static DedupKafkaConsumer<String, String> create(Vertx vertx, Map<String, String> kafkaConfig,
      Path journalDir, Ledger ledger, List<DeadLetter<String, String>> deadLetters) {
    // tag::effect-first[]
    DedupKafkaOptions options = new DedupKafkaOptions()
        .setDedup(new DedupOptions()
            .setWindow(Duration.ofMinutes(10))
            .setLease(Duration.ofSeconds(30))             // over twice the slowest handler call
            .setJournalDir(journalDir.toString()))
        .setMode(AtomicityMode.EFFECT_FIRST)              // claim, handler, commit: at least once
        .setMaxAttempts(5);                               // then the dead-letter handler
    return DedupKafkaConsumer.<String, String>create(vertx, kafkaConfig, options)
        .identity(IdentityExtractor.<String, String>header("message-id")
            .withPayloadHash(record -> Payments.sha256(record.value())))  // same id, other payload: CONFLICT
        .handler(record -> {
          JsonObject payment = new JsonObject(record.value());
          return ledger.credit(payment.getString("paymentId"), payment.getLong("amountCents"));
        })
        .deadLetterHandler(dead -> {                      // CONFLICT, NO_IDENTITY, HANDLER_FAILED, ...
          deadLetters.add(dead);
          return Future.succeededFuture();
        });
    // end::effect-first[]
  }

  /**
   * Publishes payments with producer-side copies and one conflicting record, fails the first credit of
   * {@code pay-1}, consumes with {@link #create} and counts the credits.
   *
   * @param bootstrapServers the cluster
   * @param topic the topic (created with 3 partitions if missing)
   * @param group the consumer group
   * @param journalDir where the windows are journaled
   * @param ledger the ledger
   * @param deadLetters receives the dead letters
   * @param payments payments to publish, at least 2
   * @param duplicateRate share of payments the producer sends twice
   * @return the counts
   * @throws Exception if the broker fails or the group has not consumed the topic within 2 minutes
   */
  public static RunSummary run(String bootstrapServers, String topic, String group, Path journalDir, Ledger ledger,
      List<DeadLetter<String, String>> deadLetters, int payments, double duplicateRate) throws Exception {
    LocalKafka.createTopic(bootstrapServers, topic, 3);
    Payments.Published published = Payments.publish(bootstrapServers, topic, payments, duplicateRate, 11);
    Payments.publishConflict(bootstrapServers, topic, "pay-0", 999_999);
    ledger.failNextCredit("pay-1");
    return ConsumerRun.consume(bootstrapServers, topic, group, published.records() + 1, published.distinctIds(),
        ledger::distinctIds, ledger::repeated, deadLetters::size,
        (vertx, config) -> create(vertx, config, journalDir, ledger, deadLetters));
  }

  /**
   * Runs the example once on a topic and group of its own (see {@link KafkaExampleCommand}); exits with 0 if every
   * payment was applied exactly once, 1 if not, 2 on bad arguments, 3 if the run failed.
   *
   * @param args {@code [bootstrap-servers|- [journal-dir]]}; {@code -} or nothing starts an in-process broker
   */
  public static void main(String[] args) {
    List<DeadLetter<String, String>> deadLetters = new CopyOnWriteArrayList<>();
    @picocli.CommandLine.Command(name = "effect-first", mixinStandardHelpOptions = true,
        description = "A Kafka consumer in effect-first mode: publishes 1,000 payments with 20 %% producer copies and"
            + " counts the effects.")
    class Command extends KafkaExampleCommand {
      @Override
      String name() {
        return "effect-first";
      }

      @Override
      String groupPrefix() {
        return "ledger";
      }

      @Override
      RunSummary run(String servers, String topic, String group, Path dir) throws Exception {
        return EffectFirstExample.run(servers, topic, group, dir, new Ledger(), deadLetters, 1000, 0.2);
      }

      @Override
      void after() {
        deadLetters.forEach(d -> System.out.println("dead letter: " + d.reason() + " " + d.detail()));
      }
    }
    KafkaExampleCommand.main(new Command(), args);
  }
}
