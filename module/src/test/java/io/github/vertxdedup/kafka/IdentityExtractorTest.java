package io.github.vertxdedup.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.kafka.client.consumer.impl.KafkaConsumerRecordImpl;
import io.vertx.kafka.client.producer.KafkaHeader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** The identity extractors' factories over the Vert.x Kafka client's {@link KafkaConsumerRecord}. */
class IdentityExtractorTest {

  /** A record as the consumer hands it over: a Kafka record with these headers (name, value; null for no value). */
  private static KafkaConsumerRecord<String, String> record(String key, String value, String... headers) {
    RecordHeaders h = new RecordHeaders();
    for (int i = 0; i < headers.length; i += 2) {
      h.add(headers[i], headers[i + 1] == null ? null : headers[i + 1].getBytes(StandardCharsets.UTF_8));
    }
    return new KafkaConsumerRecordImpl<>(new ConsumerRecord<>("orders", 0, 7, 1_700_000_000_000L,
        TimestampType.CREATE_TIME, 0, 0, key, value, h, Optional.empty()));
  }

  /** A record whose headers only its {@link KafkaHeader}s carry ({@link UnwrappedRecord}). */
  private static KafkaConsumerRecord<String, String> unwrapped(List<KafkaHeader> headers) {
    return new UnwrappedRecord<>(record("k", "v"), headers);
  }

  @Test
  void shouldTakeTheLastValueOfTheHeaderAsTheId() {
    IdentityExtractor<String, String> header = IdentityExtractor.header("message-id");

    assertThat(header.identify(record("k", "v", "message-id", "first", "trace", "t", "message-id", "last")))
        .isEqualTo(RecordIdentity.of("last"));
    assertThat(header.identify(record("k", "v", "trace", "t"))).as("no such header").isNull();
    assertThat(header.identify(record("k", "v", "message-id", ""))).as("empty value").isNull();
    assertThat(header.identify(record("k", "v", "message-id", null))).as("no value").isNull();
  }

  @Test
  void shouldReadTheHeaderOfARecordThatWrapsNoKafkaRecordFromItsKafkaHeaders() {
    IdentityExtractor<String, String> header = IdentityExtractor.header("message-id");

    assertThat(header.identify(unwrapped(List.of(KafkaHeader.header("message-id", "first"),
        KafkaHeader.header("trace", "t"), KafkaHeader.header("message-id", "last")))))
        .isEqualTo(RecordIdentity.of("last"));
    assertThat(header.identify(unwrapped(List.of(KafkaHeader.header("trace", "t"))))).isNull();
    assertThat(header.identify(unwrapped(List.of(KafkaHeader.header("message-id", ""))))).isNull();
  }

  @Test
  void shouldRefuseAMissingHeaderName() {
    assertThatThrownBy(() -> IdentityExtractor.header(""))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("header");
    assertThatThrownBy(() -> IdentityExtractor.header(null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("header");
  }

  @Test
  void shouldTakeTheRecordKeyOrAFunctionOfTheRecordAsTheId() {
    assertThat(IdentityExtractor.<String, String>recordKey().identify(record("order-9", "v")))
        .isEqualTo(RecordIdentity.of("order-9"));
    assertThat(IdentityExtractor.<String, String>recordKey().identify(record(null, "v"))).isNull();
    assertThat(IdentityExtractor.<String, String>of(r -> r.topic() + "/" + r.offset()).identify(record("k", "v")))
        .isEqualTo(RecordIdentity.of("orders/7"));
    assertThat(IdentityExtractor.<String, String>of(r -> "").identify(record("k", "v"))).isNull();
  }

  @Test
  void shouldAddABusinessKeyAndAPayloadHashReadFromTheRecord() {
    IdentityExtractor<String, String> id = IdentityExtractor.<String, String>header("message-id")
        .withBusinessKey(KafkaConsumerRecord::key)
        .withPayloadHash(KafkaConsumerRecord::value);

    assertThat(id.identify(record("order-9", "hash-1", "message-id", "m-1")))
        .isEqualTo(new RecordIdentity("m-1", "order-9", "hash-1"));
    assertThat(id.identify(record(null, "", "message-id", "m-1"))).as("null key, empty hash: the id alone")
        .isEqualTo(RecordIdentity.of("m-1"));
    assertThat(id.identify(record("order-9", "hash-1"))).as("no id, no identity").isNull();
  }
}
