package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.kafka.client.consumer.KafkaConsumerRecord;
import io.vertx.kafka.client.producer.KafkaHeader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** The poll loop's hand-over of a partition's records to its owner, as the application will see them. */
class PollLoopTest {

  /**
   * Each polled record is wrapped once, in offset order, as a {@link KafkaConsumerRecord} that shows the Kafka
   * record's topic, partition, offset, timestamp, key and value, and its headers as {@link KafkaHeader}s in their
   * order (a name given twice keeps both values), and that hands back the Kafka record it wraps.
   */
  @Test
  void shouldWrapEachPolledRecordAsTheKafkaConsumerRecordTheApplicationSees() {
    RecordHeaders headers = new RecordHeaders();
    headers.add("message-id", "m-1".getBytes(StandardCharsets.UTF_8));
    headers.add("trace", "t".getBytes(StandardCharsets.UTF_8));
    headers.add("message-id", "m-2".getBytes(StandardCharsets.UTF_8));
    ConsumerRecord<String, String> first = new ConsumerRecord<>("orders", 3, 41, 1_700_000_000_000L,
        TimestampType.CREATE_TIME, 0, 0, "k-41", "v-41", headers, Optional.empty());
    ConsumerRecord<String, String> second = new ConsumerRecord<>("orders", 3, 42, "k-42", "v-42");

    List<KafkaConsumerRecord<String, String>> wrapped = PollLoop.wrap(List.of(first, second));

    assertThat(wrapped).hasSize(2);
    KafkaConsumerRecord<String, String> r = wrapped.get(0);
    assertThat(r.topic()).isEqualTo("orders");
    assertThat(r.partition()).isEqualTo(3);
    assertThat(r.offset()).isEqualTo(41);
    assertThat(r.timestamp()).isEqualTo(1_700_000_000_000L);
    assertThat(r.timestampType()).isEqualTo(TimestampType.CREATE_TIME);
    assertThat(r.key()).isEqualTo("k-41");
    assertThat(r.value()).isEqualTo("v-41");
    assertThat(r.headers()).extracting(KafkaHeader::key).containsExactly("message-id", "trace", "message-id");
    assertThat(r.headers()).extracting(h -> h.value().toString(StandardCharsets.UTF_8))
        .containsExactly("m-1", "t", "m-2");
    assertThat(r.record()).isSameAs(first);
    assertThat(wrapped.get(1).offset()).isEqualTo(42);
    assertThat(wrapped.get(1).timestamp()).isEqualTo(ConsumerRecord.NO_TIMESTAMP);
    assertThat(wrapped.get(1).headers()).isEmpty();
    assertThat(wrapped.get(1).record()).isSameAs(second);
  }
}
