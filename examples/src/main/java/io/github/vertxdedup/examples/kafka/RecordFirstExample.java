package io.github.vertxdedup.examples.kafka;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.examples.Receipts;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.testkit.LocalKafka;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * A Kafka consumer in record-first mode: each payment's receipt is sent at most once. The id (the record key) is
 * recorded in the partition's window, and journaled, before the handler runs, so a redelivered payment never sends a
 * second receipt; a crash between the record and the send loses that receipt instead (see {@code docs/atomicity.md}).
 *
 * <p>Run: {@code scripts/run-example record-first [bootstrap-servers|- [journal-dir]]} (it builds the module if
 * needed and passes the JVM flags Chronicle Queue needs). Without {@code bootstrap-servers} (or with {@code -}) it
 * starts an in-process broker ({@link LocalKafka}); without {@code journal-dir} it journals to a new temporary
 * directory. Each run uses a topic and group of its own ({@link KafkaExampleCommand}), so a rerun on the same journal
 * directory or cluster works. It publishes 1,000 payments with 20 % producer-side copies, consumes them, prints the
 * counts and exits with 1 if any receipt was sent twice or not at all.
 */
public final class RecordFirstExample {

  private RecordFirstExample() {}

  /**
   * Builds the consumer (not yet subscribed).
   *
   * @param vertx the Vert.x instance whose event loops run the windows and the handler
   * @param kafkaConfig {@code bootstrap.servers}, {@code group.id}, the deserializers
   * @param journalDir where the windows are journaled
   * @param receipts the receipt sender
   * @return the consumer
   */
  public static DedupKafkaConsumer<String, String> create(Vertx vertx, Map<String, String> kafkaConfig,
      Path journalDir, Receipts receipts) {
    // tag::record-first[]
    DedupKafkaOptions options = new DedupKafkaOptions()
        .setDedup(new DedupOptions()
            .setWindow(Duration.ofMinutes(10))            // W, per topic-partition
            .setJournalDir(journalDir.toString()))        // windows survive restarts
        .setMode(AtomicityMode.RECORD_FIRST);             // check, then the handler: at most once
    return DedupKafkaConsumer.<String, String>create(vertx, kafkaConfig, options)
        .identity(IdentityExtractor.recordKey())          // the producer keys each payment by its id
        .handler(record -> receipts.send(record.key()));  // Future<Void>; must not block
    // end::record-first[]
  }

  /**
   * Publishes payments with producer-side copies, consumes them with {@link #create} and counts the receipts.
   *
   * @param bootstrapServers the cluster
   * @param topic the topic (created with 3 partitions if missing)
   * @param group the consumer group
   * @param journalDir where the windows are journaled
   * @param receipts the receipt sender
   * @param payments payments to publish
   * @param duplicateRate share of payments the producer sends twice
   * @return the counts
   * @throws Exception if the broker fails or the group has not consumed the topic within 2 minutes
   */
  public static RunSummary run(String bootstrapServers, String topic, String group, Path journalDir,
      Receipts receipts, int payments, double duplicateRate) throws Exception {
    LocalKafka.createTopic(bootstrapServers, topic, 3);
    Payments.Published published = Payments.publish(bootstrapServers, topic, payments, duplicateRate, 7);
    return ConsumerRun.consume(bootstrapServers, topic, group, published.records(), published.distinctIds(),
        receipts::distinctIds, receipts::repeated, () -> 0,
        (vertx, config) -> create(vertx, config, journalDir, receipts));
  }

  /**
   * Runs the example once on a topic and group of its own (see {@link KafkaExampleCommand}); exits with 0 if every
   * payment was applied exactly once, 1 if not, 2 on bad arguments, 3 if the run failed.
   *
   * @param args {@code [bootstrap-servers|- [journal-dir]]}; {@code -} or nothing starts an in-process broker
   */
  public static void main(String[] args) {
    @picocli.CommandLine.Command(name = "record-first", mixinStandardHelpOptions = true,
        description = "A Kafka consumer in record-first mode: publishes 1,000 payments with 20 %% producer copies and"
            + " counts the effects.")
    class Command extends KafkaExampleCommand {
      @Override
      String name() {
        return "record-first";
      }

      @Override
      String groupPrefix() {
        return "receipts";
      }

      @Override
      RunSummary run(String servers, String topic, String group, Path dir) throws Exception {
        return RecordFirstExample.run(servers, topic, group, dir, new Receipts(), 1000, 0.2);
      }
    }
    KafkaExampleCommand.main(new Command(), args);
  }
}
