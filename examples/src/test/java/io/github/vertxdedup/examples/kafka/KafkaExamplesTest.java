package io.github.vertxdedup.examples.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.examples.Ledger;
import io.github.vertxdedup.examples.Receipts;
import io.github.vertxdedup.kafka.DeadLetter;
import io.github.vertxdedup.kafka.testkit.LocalKafkaExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kafka examples on a real in-process broker: each id's effect applied once, and still once after a rewind; the
 * same with deduplication added to a Vert.x consumer.
 */
class KafkaExamplesTest {

  @RegisterExtension
  static final LocalKafkaExtension kafka = new LocalKafkaExtension(3);

  @TempDir
  Path journalDir;

  @Test
  void recordFirstShouldSendOneReceiptPerPaymentAndNoneAgainAfterARewind() throws Exception {
    Receipts receipts = new Receipts();

    RunSummary first = RecordFirstExample.run(kafka.bootstrapServers(), "rf-payments", "rf-receipts", journalDir,
        receipts, 300, 0.3);

    assertThat(first.exactlyOnce()).as(first.toString()).isTrue();
    assertThat(first.distinctIds()).isEqualTo(300);
    assertThat(first.duplicatesDropped()).isEqualTo(first.records() - 300).isPositive();
    assertThat(receipts.sent()).isEqualTo(300);

    // An operator rewinds the group to the start; a new consumer rebuilds the windows from the journal.
    rewind("rf-receipts", "rf-payments");
    RunSummary again = ConsumerRun.consume(kafka.bootstrapServers(), "rf-payments", "rf-receipts",
        first.records(), first.distinctIds(), receipts::distinctIds, receipts::repeated, () -> 0,
        (vertx, config) -> RecordFirstExample.create(vertx, config, journalDir, receipts));

    assertThat(receipts.sent()).as("receipts after the rewind").isEqualTo(300);
    assertThat(again.duplicatesDropped()).isEqualTo(first.records());
  }

  @Test
  void effectFirstShouldCreditEachPaymentOnceRetryAFailedCreditAndDeadLetterAConflict() throws Exception {
    Ledger ledger = new Ledger();
    List<DeadLetter<String, String>> deadLetters = new CopyOnWriteArrayList<>();

    RunSummary summary = EffectFirstExample.run(kafka.bootstrapServers(), "ef-payments", "ef-ledger", journalDir,
        ledger, deadLetters, 300, 0.3);

    assertThat(summary.exactlyOnce()).as(summary.toString()).isTrue();
    assertThat(ledger.timesApplied("pay-1")).as("the credit that failed once").isEqualTo(1);
    assertThat(deadLetters).singleElement().satisfies(d -> {
      assertThat(d.reason()).isEqualTo(DeadLetter.Reason.CONFLICT);
      assertThat(d.record().key()).isEqualTo("pay-0");
    });
    long expectedCents = 0;
    for (int i = 0; i < 300; i++) {
      expectedCents += 100 + i % 9_900;     // the amounts Payments.publish sends; the conflict's is not credited
    }
    assertThat(ledger.totalCents()).isEqualTo(expectedCents);
  }

  @Test
  void wrappedConsumerShouldCreditEachPaymentOnce() throws Exception {
    Ledger ledger = new Ledger();

    RunSummary summary = WrappedConsumerExample.run(kafka.bootstrapServers(), "wr-payments", "wr-ledger", journalDir,
        ledger, 300, 0.3);

    assertThat(summary.exactlyOnce()).as(summary.toString()).isTrue();
    assertThat(summary.distinctIds()).isEqualTo(300);
    assertThat(summary.duplicatesDropped()).isEqualTo(summary.records() - 300).isPositive();
  }

  private static void rewind(String group, String topic) {
    Map<TopicPartition, OffsetAndMetadata> zero = new HashMap<>();
    for (int p = 0; p < 3; p++) {
      zero.put(new TopicPartition(topic, p), new OffsetAndMetadata(0));
    }
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    try (Admin admin = Admin.create(props)) {
      // Refused while the closed consumer's group is still emptying; retried until accepted.
      await().atMost(Duration.ofSeconds(60)).ignoreExceptions().pollInterval(Duration.ofMillis(100)).until(() -> {
        admin.alterConsumerGroupOffsets(group, zero).all().get(10, TimeUnit.SECONDS);
        return true;
      });
    }
  }
}
