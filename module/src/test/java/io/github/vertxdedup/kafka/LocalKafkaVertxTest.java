package io.github.vertxdedup.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.kafka.testkit.LocalKafka;
import io.github.vertxdedup.kafka.testkit.LocalKafkaExtension;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import io.vertx.kafka.client.consumer.KafkaConsumer;
import io.vertx.kafka.client.producer.KafkaProducer;
import io.vertx.kafka.client.producer.KafkaProducerRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The in-process broker ({@link LocalKafka}) serves a Vert.x producer and consumer end to end. */
@ExtendWith(VertxExtension.class)
class LocalKafkaVertxTest {

  @RegisterExtension
  static final LocalKafkaExtension kafka = new LocalKafkaExtension(1);

  @Test
  void shouldDeliverProducedRecordsToVertxConsumer(Vertx vertx, VertxTestContext ctx) throws Exception {
    kafka.createTopic("smoke", 2);
    Map<String, String> producerConfig = Map.of(
        "bootstrap.servers", kafka.bootstrapServers(),
        "key.serializer", "org.apache.kafka.common.serialization.StringSerializer",
        "value.serializer", "org.apache.kafka.common.serialization.StringSerializer",
        "acks", "all");
    Map<String, String> consumerConfig = Map.of(
        "bootstrap.servers", kafka.bootstrapServers(),
        "key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer",
        "value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer",
        "group.id", "smoke-group",
        "auto.offset.reset", "earliest",
        "enable.auto.commit", "false");
    KafkaProducer<String, String> producer = KafkaProducer.create(vertx, producerConfig);
    KafkaConsumer<String, String> consumer = KafkaConsumer.create(vertx, consumerConfig);
    List<String> seen = new ArrayList<>();
    consumer.handler(rec -> {
      seen.add(rec.value());
      if (seen.size() == 10) {
        ctx.verify(() -> assertThat(seen).containsExactlyInAnyOrder(
            "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"));
        consumer.close().onComplete(ctx.succeedingThenComplete());
      }
    });
    consumer.subscribe("smoke").onComplete(ctx.succeeding(v -> {
      for (int i = 0; i < 10; i++) {
        producer.send(KafkaProducerRecord.create("smoke", "k" + i, "v" + i));
      }
    }));
    assertThat(ctx.awaitCompletion(60, TimeUnit.SECONDS)).isTrue();
    producer.close();
    if (ctx.failed()) {
      throw new AssertionError(ctx.causeOfFailure());
    }
  }
}
