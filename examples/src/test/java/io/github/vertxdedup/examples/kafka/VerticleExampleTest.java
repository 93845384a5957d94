package io.github.vertxdedup.examples.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.examples.Ledger;
import io.github.vertxdedup.kafka.testkit.LocalKafka;
import io.github.vertxdedup.kafka.testkit.LocalKafkaExtension;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example configuration file deployed as it is, with only the broker's address and the journal's directory
 * overridden: every payment, copies included, is credited once through the event-bus handler.
 */
class VerticleExampleTest {

  @RegisterExtension
  static final LocalKafkaExtension kafka = new LocalKafkaExtension(1);

  @TempDir
  Path journalDir;

  @Test
  void theExampleConfigurationShouldCreditEachPaymentOnceThroughTheEventBus() throws Exception {
    Path file = Path.of("config", "dedup-kafka-verticle.json").toAbsolutePath();
    assertThat(file).as("the example configuration, read from the examples module's directory").isRegularFile();
    JsonObject example = new JsonObject(Files.readString(file)).getJsonObject("dedupKafka");
    String topic = example.getJsonArray("topics").getString(0);
    String group = example.getJsonObject("kafka").getString("group.id");
    String address = example.getString("address");
    LocalKafka.createTopic(kafka.bootstrapServers(), topic, 3);
    Payments.Published published = Payments.publish(kafka.bootstrapServers(), topic, 200, 0.3, 5);

    Vertx vertx = Vertx.vertx();
    try {
      Ledger ledger = new Ledger();
      List<JsonObject> deadLetters = new CopyOnWriteArrayList<>();
      VerticleExample.handleRecords(vertx, address, ledger).await();
      vertx.eventBus().<JsonObject>consumer(example.getString("deadLetterAddress"), m -> {
        deadLetters.add(m.body());
        m.reply(null);
      }).completion().await();
      JsonObject overrides = new JsonObject().put("dedupKafka", new JsonObject()
          .put("kafka", new JsonObject().put("bootstrap.servers", kafka.bootstrapServers()))
          .put("options", new JsonObject().put("dedup", new JsonObject().put("journalDir", journalDir.toString()))));

      VerticleExample.deploy(vertx, file.toString(), overrides).await();
      Payments.awaitConsumed(kafka.bootstrapServers(), group, topic, Duration.ofMinutes(2), () -> null);

      assertThat(published.records()).isGreaterThan(published.distinctIds());
      assertThat(ledger.distinctIds()).isEqualTo(published.distinctIds());
      assertThat(ledger.repeated()).isEmpty();
      assertThat(deadLetters).isEmpty();
      assertThat(Files.list(journalDir.resolve(group))).hasSize(3);
    } finally {
      vertx.close().await();
    }
  }
}
