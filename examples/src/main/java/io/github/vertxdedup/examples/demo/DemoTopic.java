package io.github.vertxdedup.examples.demo;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * What the demo reads of its topic through Kafka's admin client: the end offsets of its partitions, and whether a
 * consumer group has committed up to them. Each call waits at most 30 s per request.
 *
 * <p>Stateless; thread-safe as the {@link Admin} passed in is.
 */
final class DemoTopic {

  private DemoTopic() {
  }

  /** @return the admin client's configuration for the broker at {@code bootstrap} */
  static Properties adminConfig(String bootstrap) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    return p;
  }

  /**
   * @param admin an admin client of the demo's broker
   * @param topicPartitions the number of partitions of {@link BillingDemo#TOPIC}
   * @param group the consumer group
   * @return true if the group has committed, on every partition, an offset at least the partition's end offset now
   * @throws Exception if a request fails or takes longer than 30 s
   */
  static boolean allCommitted(Admin admin, int topicPartitions, String group) throws Exception {
    Map<TopicPartition, Long> end = endOffsets(admin, topicPartitions);
    Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
        .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
    for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
      OffsetAndMetadata c = committed.get(e.getKey());
      if (c == null || c.offset() < e.getValue()) {
        return false;
      }
    }
    return true;
  }

  /**
   * @param admin an admin client of the demo's broker
   * @param topicPartitions the number of partitions of {@link BillingDemo#TOPIC}
   * @return each partition's end offset (the offset the next record will get)
   * @throws Exception if the request fails or takes longer than 30 s
   */
  static Map<TopicPartition, Long> endOffsets(Admin admin, int topicPartitions) throws Exception {
    Map<TopicPartition, OffsetSpec> request = new HashMap<>();
    for (int p = 0; p < topicPartitions; p++) {
      request.put(new TopicPartition(BillingDemo.TOPIC, p), OffsetSpec.latest());
    }
    Map<TopicPartition, Long> end = new HashMap<>();
    for (Map.Entry<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> e
        : admin.listOffsets(request).all().get(30, TimeUnit.SECONDS).entrySet()) {
      end.put(e.getKey(), e.getValue().offset());
    }
    return end;
  }
}
