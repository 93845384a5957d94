package io.github.vertxdedup.examples.kafka;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.examples.Receipts;
import io.github.vertxdedup.examples.LocalKafka;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.vertx.core.Vertx;
import java.nio.file.Files;
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
 * directory. It publishes 1,000 payments with 20 % producer-side copies, consumes them, prints the counts and exits
 * with 1 if any receipt was sent twice or not at all.
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
   * @param args {@code [bootstrap-servers|- [journal-dir]]}; {@code -} or nothing starts an in-process broker
   * @throws Exception if the broker cannot be started or reached
   */
  public static void main(String[] args) throws Exception {
    String bootstrap = args.length > 0 && !args[0].equals("-") ? args[0] : null;
    Path journalDir = args.length > 1 ? Path.of(args[1]) : Files.createTempDirectory("receipts-journal");
    try (LocalKafka local = bootstrap == null ? LocalKafka.start(3) : null) {
      String servers = bootstrap != null ? bootstrap : local.bootstrapServers();
      RunSummary summary = run(servers, "payment.succeeded", "receipts", journalDir, new Receipts(), 1000, 0.2);
      System.out.println("record-first: " + summary + " (journal: " + journalDir + ")");
      if (!summary.exactlyOnce()) {
        System.exit(1);
      }
    }
  }
}
