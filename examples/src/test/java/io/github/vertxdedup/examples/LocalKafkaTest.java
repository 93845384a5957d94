package io.github.vertxdedup.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;

class LocalKafkaTest {

  @Test
  void startsABrokerThatCreatesTopicsOnceAndStops() throws Exception {
    try (LocalKafka kafka = LocalKafka.start(2)) {
      LocalKafka.createTopic(kafka.bootstrapServers(), "payments", 3);
      LocalKafka.createTopic(kafka.bootstrapServers(), "payments", 3); // existing topic: no error
      Properties p = new Properties();
      p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
      try (Admin admin = Admin.create(p)) {
        int partitions = admin.describeTopics(java.util.List.of("payments")).allTopicNames()
            .get(30, TimeUnit.SECONDS).get("payments").partitions().size();
        assertThat(partitions).isEqualTo(3);
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
