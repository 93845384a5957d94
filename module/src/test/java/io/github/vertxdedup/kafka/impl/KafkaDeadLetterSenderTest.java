package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.vertxdedup.kafka.DeadLetter;
import io.github.vertxdedup.kafka.DeadLetterHandler;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.kafka.client.consumer.impl.KafkaConsumerRecordImpl;
import io.vertx.kafka.client.producer.KafkaProducer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The dead-letter handler that sends to a Kafka topic, over Kafka's {@link MockProducer} wrapped in a Vert.x
 * producer; {@code DedupKafkaConsumerTest} sends to a real broker and reads the topic back.
 */
class KafkaDeadLetterSenderTest {

  private Vertx vertx;
  private MockProducer<String, String> mock;
  private KafkaProducer<String, String> producer;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    mock = new MockProducer<>(false, new StringSerializer(), new StringSerializer());
    producer = KafkaProducer.create(vertx, mock);
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** A record of orders-2 at offset 17 with a message-id header and a header without a value. */
  private static KafkaConsumerRecord<String, String> record() {
    RecordHeaders headers = new RecordHeaders();
    headers.add("message-id", "m-1".getBytes(StandardCharsets.UTF_8));
    headers.add("no-value", null);
    return new KafkaConsumerRecordImpl<>(new ConsumerRecord<>("orders", 2, 17, 1_700_000_000_000L,
        TimestampType.CREATE_TIME, 0, 0, "k-1", "v-1", headers, Optional.empty()));
  }

  private static List<String> names(ProducerRecord<?, ?> r) {
    List<String> names = new ArrayList<>();
    for (Header h : r.headers()) {
      names.add(h.key());
    }
    return names;
  }

  private static String value(ProducerRecord<?, ?> r, String header) {
    Header h = r.headers().lastHeader(header);
    return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  /**
   * The dead letter goes to the dead-letter topic with the record's key and value, its headers as they came (the
   * one without a value too), then the reason, the detail, the attempts and where the record was read; the
   * partition and the timestamp are left to the producer. The handler's future completes when the send does.
   */
  @Test
  void shouldSendTheRecordWithItsHeadersAndTheDeadLettersAndCompleteWhenTheSendIsAcknowledged() throws Exception {
    DeadLetterHandler<String, String> handler = DeadLetterHandler.toTopic(producer, "orders.dead");

    Future<Void> sent = handler.handle(new DeadLetter<>(record(), DeadLetter.Reason.HANDLER_FAILED,
        "the handler failed 3 times; last: boom", 3, new RuntimeException("boom")));

    await().atMost(10, TimeUnit.SECONDS).until(() -> mock.history().size() == 1);
    assertThat(sent.isComplete()).as("not acknowledged yet").isFalse();
    mock.completeNext();
    sent.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    ProducerRecord<String, String> r = mock.history().get(0);
    assertThat(r.topic()).isEqualTo("orders.dead");
    assertThat(r.key()).isEqualTo("k-1");
    assertThat(r.value()).isEqualTo("v-1");
    assertThat(r.partition()).isNull();
    assertThat(r.timestamp()).isNull();
    assertThat(names(r)).containsExactly("message-id", "no-value", "dedup.reason", "dedup.detail", "dedup.attempts",
        "dedup.source.topic", "dedup.source.partition", "dedup.source.offset");
    assertThat(value(r, "message-id")).isEqualTo("m-1");
    assertThat(r.headers().lastHeader("no-value").value()).isNull();
    assertThat(value(r, DeadLetterHandler.REASON_HEADER)).isEqualTo("HANDLER_FAILED");
    assertThat(value(r, DeadLetterHandler.DETAIL_HEADER)).isEqualTo("the handler failed 3 times; last: boom");
    assertThat(value(r, DeadLetterHandler.ATTEMPTS_HEADER)).isEqualTo("3");
    assertThat(value(r, DeadLetterHandler.SOURCE_TOPIC_HEADER)).isEqualTo("orders");
    assertThat(value(r, DeadLetterHandler.SOURCE_PARTITION_HEADER)).isEqualTo("2");
    assertThat(value(r, DeadLetterHandler.SOURCE_OFFSET_HEADER)).isEqualTo("17");
  }

  /** A send the producer fails fails the handler's future, so the consumer sends the dead letter again. */
  @Test
  void shouldFailWhenTheSendFails() {
    DeadLetterHandler<String, String> handler = DeadLetterHandler.toTopic(producer, "orders.dead");

    Future<Void> sent = handler.handle(new DeadLetter<>(record(), DeadLetter.Reason.NO_IDENTITY,
        "the identity extractor found no id in the record", 0, null));

    await().atMost(10, TimeUnit.SECONDS).until(() -> mock.history().size() == 1);
    mock.errorNext(new TopicAuthorizationException("no right to write orders.dead"));
    assertThatThrownBy(() -> sent.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS))
        .hasRootCauseInstanceOf(TopicAuthorizationException.class);
  }

  @Test
  void shouldRefuseATopicThatKafkaWouldRefuse() {
    for (String bad : new String[] {"", ".", "..", "orders dead", "orders/dead", "x".repeat(250)}) {
      assertThatThrownBy(() -> DeadLetterHandler.toTopic(producer, bad)).as("'%s'", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("topic must be a Kafka topic name (1..249 characters of [a-zA-Z0-9._-]");
    }
    assertThatThrownBy(() -> DeadLetterHandler.toTopic(producer, null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageEndingWith("but was null");
    assertThatThrownBy(() -> DeadLetterHandler.toTopic(null, "orders.dead"))
        .isInstanceOf(NullPointerException.class).hasMessage("producer");
    assertThat(DeadLetterHandler.toTopic(producer, "x".repeat(249))).isNotNull();
  }
}
