package io.github.vertxdedup.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import kafka.testkit.KafkaClusterTestKit;
import kafka.testkit.TestKitNodes;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * A real one-node Kafka cluster (KRaft, broker and controller combined) running inside this JVM, built from Kafka's
 * own test kit ({@code kafka_2.13} 3.7.1 and its {@code test} jars on Maven Central). It lets the demo and the
 * examples run with nothing installed; a production application points {@code bootstrap.servers} at its own cluster
 * instead.
 *
 * <p>A one-node cluster needs the offsets topic and the transaction log at replication factor 1 (with the default of
 * 3 a consumer never finds its group coordinator) and no initial rebalance delay. The broker keeps its log under
 * {@code java.io.tmpdir} (created if missing) and deletes it on {@link #close()}. Starting takes one to two seconds.
 *
 * <p>Thread-safe. Not a tuned or durable broker: one replica, data deleted on close.
 */
public final class LocalKafka implements AutoCloseable {

  private final KafkaClusterTestKit cluster;

  private LocalKafka(KafkaClusterTestKit cluster) {
    this.cluster = cluster;
  }

  /**
   * Formats and starts the broker and waits until it serves requests.
   *
   * @param defaultPartitions partitions of topics the broker creates on first use ({@code num.partitions}), at least 1
   * @return the running broker; close it to stop it and delete its data
   * @throws IllegalArgumentException if {@code defaultPartitions} is below 1
   * @throws Exception if the broker cannot start (its partial state is closed first)
   */
  public static LocalKafka start(int defaultPartitions) throws Exception {
    if (defaultPartitions < 1) {
      throw new IllegalArgumentException("defaultPartitions must be at least 1, was " + defaultPartitions);
    }
    Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
    KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(
            new TestKitNodes.Builder().setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1).build())
        .setConfigProp("offsets.topic.replication.factor", "1")
        .setConfigProp("offsets.topic.num.partitions", "1")
        .setConfigProp("transaction.state.log.replication.factor", "1")
        .setConfigProp("transaction.state.log.min.isr", "1")
        .setConfigProp("group.initial.rebalance.delay.ms", "0")
        .setConfigProp("num.partitions", Integer.toString(defaultPartitions))
        .build();
    try {
      cluster.format();
      cluster.startup();
      cluster.waitForReadyBrokers();
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
    return new LocalKafka(cluster);
  }

  /** How long {@link #createTopic} waits for a broker's answer, seconds. */
  public static final int ANSWER_TIMEOUT_SECONDS = 30;

  /** @return the {@code bootstrap.servers} value of this broker, a loopback {@code host:port} */
  public String bootstrapServers() {
    return cluster.bootstrapServers();
  }

  /**
   * Creates a topic with replication factor 1 if it does not exist yet, and waits for the broker's answer.
   *
   * @param bootstrapServers the cluster to create it on (this broker's {@link #bootstrapServers()} or another)
   * @param topic the topic name
   * @param partitions its partition count, at least 1
   * @throws IllegalArgumentException if {@code partitions} is below 1
   * @throws java.util.concurrent.TimeoutException if no broker at {@code bootstrapServers} answered within
   *     {@link #ANSWER_TIMEOUT_SECONDS} s; its message names the servers, the topic and the time waited (the call
   *     returns then, it does not wait out the client's own request timeout)
   * @throws Exception if the broker refuses (an existing topic is not an error)
   */
  public static void createTopic(String bootstrapServers, String topic, int partitions) throws Exception {
    if (partitions < 1) {
      throw new IllegalArgumentException("partitions must be at least 1, was " + partitions);
    }
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TimeUnit.SECONDS.toMillis(ANSWER_TIMEOUT_SECONDS));
    Admin admin = Admin.create(p);
    boolean answered = false;
    try {
      admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(Map.of())))
          .all().get(ANSWER_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      answered = true;
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof TopicExistsException) {
        answered = true;
      } else if (e.getCause() instanceof org.apache.kafka.common.errors.TimeoutException) {
        throw noAnswer(bootstrapServers, topic);
      } else {
        throw e;
      }
    } catch (java.util.concurrent.TimeoutException e) {
      throw noAnswer(bootstrapServers, topic);
    } finally {
      // Without an answer, closing would wait for the pending request's own timeout: do not.
      admin.close(answered ? Duration.ofSeconds(30) : Duration.ZERO);
    }
  }

  private static java.util.concurrent.TimeoutException noAnswer(String bootstrapServers, String topic) {
    return new java.util.concurrent.TimeoutException("no Kafka broker at " + bootstrapServers + " answered within "
        + ANSWER_TIMEOUT_SECONDS + " s (creating topic " + topic + "); is it running and reachable?");
  }

  /** Stops the broker and deletes its log directories. */
  @Override
  public void close() throws Exception {
    cluster.close();
  }
}
