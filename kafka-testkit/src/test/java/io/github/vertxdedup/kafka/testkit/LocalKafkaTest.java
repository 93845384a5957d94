package io.github.vertxdedup.kafka.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

class LocalKafkaTest {

  @Test
  void startsABrokerThatCreatesTopicsOnceAndStops() throws Exception {
    try (LocalKafka kafka = LocalKafka.start(2)) {
      LocalKafka.createTopic(kafka.bootstrapServers(), "payments", 3);
      kafka.createTopic("payments", 3); // existing topic: no error
      assertThat(partitionCount(kafka.bootstrapServers(), "payments")).isEqualTo(3);
    }
  }

  /**
   * A new topic is handed over only once its leader serves every partition, not as soon as the metadata names the
   * leaders: the broker creates the partitions' logs one by one after publishing their leaders, and a produce request
   * in between is refused (see {@link LocalKafka#createTopic(String, String, int)}). Many partitions widen that gap.
   */
  @Test
  void createsATopicWhoseLeaderServesEveryPartitionOnReturn() throws Exception {
    try (LocalKafka kafka = LocalKafka.start(1)) {
      for (int t = 0; t < 3; t++) {
        String topic = "wide-" + t;
        kafka.createTopic(topic, 32);
        for (int p = 0; p < 32; p++) {
          assertThat(kafka.leadsWithLog(new TopicPartition(topic, p))).as("%s-%d served", topic, p).isTrue();
        }
      }
    }
  }

  /** @return the partition count the broker at {@code bootstrapServers} reports for {@code topic} */
  static int partitionCount(String bootstrapServers, String topic) throws Exception {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    try (Admin admin = Admin.create(p)) {
      return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic)
          .partitions().size();
    }
  }

  /** The offsets topic at replication factor 1: on one node a group finds its coordinator and commits. */
  @Test
  void servesAGroupOffsetCommitOnOneNode() throws Exception {
    try (LocalKafka kafka = LocalKafka.start(1)) {
      kafka.createTopic("orders", 1);
      Properties p = new Properties();
      p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
      p.put(ConsumerConfig.GROUP_ID_CONFIG, "billing");
      p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
      TopicPartition tp = new TopicPartition("orders", 0);
      try (KafkaConsumer<String, String> consumer =
               new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
        consumer.assign(List.of(tp));
        consumer.commitSync(Map.of(tp, new OffsetAndMetadata(5)), Duration.ofSeconds(30));
        assertThat(consumer.committed(Set.of(tp), Duration.ofSeconds(30)).get(tp).offset()).isEqualTo(5);
      }
    }
  }

  @Test
  void refusesANonPositivePartitionCount() {
    assertThatThrownBy(() -> LocalKafka.start(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("defaultPartitions");
    assertThatThrownBy(() -> LocalKafka.createTopic("localhost:1", "t", 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partitions");
  }
}
