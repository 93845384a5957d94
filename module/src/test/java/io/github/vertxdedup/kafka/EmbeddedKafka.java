package io.github.vertxdedup.kafka;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import kafka.testkit.KafkaClusterTestKit;
import kafka.testkit.TestKitNodes;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * A real single-node KRaft Kafka broker (combined broker + controller) started in this JVM from Maven Central
 * artifacts: no Docker, nothing installed. Starts in one to two seconds.
 *
 * <p>Settings a one-node cluster needs: the offsets topic and the transaction log with replication factor 1 (otherwise
 * a consumer never finds its group coordinator), and no initial rebalance delay (group joins in tests are immediate).
 * The broker writes its log under {@code java.io.tmpdir}, which is created if missing.
 *
 * <p>Thread-safe; {@link #close()} stops the broker and deletes its data.
 */
public final class EmbeddedKafka implements AutoCloseable {

  private final KafkaClusterTestKit cluster;

  private EmbeddedKafka(KafkaClusterTestKit cluster) {
    this.cluster = cluster;
  }

  /**
   * Formats and starts a one-node broker and waits until it serves.
   *
   * @param numPartitions default partition count of auto-created topics
   * @return the running broker
   * @throws Exception if the broker cannot start
   */
  public static EmbeddedKafka start(int numPartitions) throws Exception {
    Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
    Files.createDirectories(tmp);
    KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(
            new TestKitNodes.Builder().setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1).build())
        .setConfigProp("offsets.topic.replication.factor", "1")
        .setConfigProp("offsets.topic.num.partitions", "1")
        .setConfigProp("transaction.state.log.replication.factor", "1")
        .setConfigProp("transaction.state.log.min.isr", "1")
        .setConfigProp("group.initial.rebalance.delay.ms", "0")
        .setConfigProp("num.partitions", Integer.toString(numPartitions))
        .setConfigProp("auto.create.topics.enable", "true")
        .build();
    try {
      cluster.format();
      cluster.startup();
      cluster.waitForReadyBrokers();
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
    return new EmbeddedKafka(cluster);
  }

  /** @return the {@code bootstrap.servers} value of the broker (a loopback address) */
  public String bootstrapServers() {
    return cluster.bootstrapServers();
  }

  /**
   * Creates a topic and waits for it.
   *
   * @param name the topic
   * @param partitions its partition count
   * @throws Exception if creation fails or takes more than 30 s
   */
  public void createTopic(String name, int partitions) throws Exception {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    try (Admin admin = Admin.create(p)) {
      admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(Map.of())))
          .all().get(30, TimeUnit.SECONDS);
    }
  }

  @Override
  public void close() throws Exception {
    cluster.close();
  }
}
