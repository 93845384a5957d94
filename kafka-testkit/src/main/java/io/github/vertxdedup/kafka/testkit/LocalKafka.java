package io.github.vertxdedup.kafka.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import kafka.cluster.Partition;
import kafka.server.BrokerServer;
import kafka.testkit.KafkaClusterTestKit;
import kafka.testkit.TestKitNodes;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * A real one-node Kafka cluster (KRaft, broker and controller combined in one node) running inside this JVM, built
 * from Kafka's own test kit ({@code kafka.testkit.KafkaClusterTestKit} of {@code kafka_2.13} 3.7.1 and its
 * {@code test} jars, on Maven Central). The module's tests, the examples, the demo and the Kafka benchmark all start
 * their broker here, so they run with nothing installed and with the same settings. A production application points
 * {@code bootstrap.servers} at its own cluster instead.
 *
 * <p>The broker settings, each set once in {@link #start(int)}. Defaults and meanings are those of Kafka's broker
 * configuration reference (<a href="https://kafka.apache.org/37/documentation.html#brokerconfigs">Kafka 3.7
 * documentation, "Broker Configs"</a>). The replication-factor and min-ISR overrides are also those of the sample
 * {@code config/kraft/server.properties} shipped with Kafka, whose comments recommend them for development testing
 * only.
 * <ul>
 *   <li>{@code offsets.topic.replication.factor=1} (default 3): the consumer-offsets topic is created on the first
 *       group join and needs that many live brokers; with the default on one node, creation fails and a consumer
 *       never finds its group coordinator.
 *   <li>{@code offsets.topic.num.partitions=1} (default 50): one partition is enough for a handful of groups and is
 *       quicker to create and load than fifty, which shortens the first group join.
 *   <li>{@code transaction.state.log.replication.factor=1} (default 3) and {@code transaction.state.log.min.isr=1}
 *       (default 2): the same for the transaction log, so that a transactional producer can start.
 *   <li>{@code group.initial.rebalance.delay.ms=0} (default 3000): the broker waits that long after the first member
 *       of a new group joins, to gather the others (KIP-134); a test or the demo would only wait.
 *   <li>{@code num.partitions} (default 1): the partition count of topics the broker creates on first use, the
 *       {@code defaultPartitions} argument of {@link #start(int)}.
 *   <li>{@code auto.create.topics.enable=true}: the broker default, stated because callers produce to and subscribe
 *       to topics they have not created.
 * </ul>
 *
 * <p>The test kit creates the broker's log and metadata directories under {@code java.io.tmpdir}, which
 * {@link #start(int)} creates if missing (a build may point it at a directory under {@code target/} that does not
 * exist yet); {@link #close()} deletes them. Starting takes one to two seconds. The broker logs through SLF4J: how
 * much of it shows is the choice of the caller's SLF4J binding (the examples' {@code simplelogger.properties} keeps it
 * to errors; without a binding nothing shows).
 *
 * <p>Thread-safe. Not a tuned or durable broker: one replica, data deleted on close.
 */
public final class LocalKafka implements AutoCloseable {

  /** How long {@link #createTopic} waits for a broker's answer, seconds. */
  public static final int ANSWER_TIMEOUT_SECONDS = 30;

  private final KafkaClusterTestKit cluster;

  private LocalKafka(KafkaClusterTestKit cluster) {
    this.cluster = cluster;
  }

  /**
   * Formats and starts the broker with the settings listed in the class javadoc and waits until it serves requests.
   * Blocks for one to two seconds: call it from a test setup, a {@code main} or a worker, never an event loop.
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
    return new LocalKafka(cluster);
  }

  /** @return the {@code bootstrap.servers} value of this broker, a loopback {@code host:port} */
  public String bootstrapServers() {
    return cluster.bootstrapServers();
  }

  /**
   * Creates a topic on this broker; the same as {@link #createTopic(String, String, int)} with
   * {@link #bootstrapServers()}.
   *
   * @param topic the topic name
   * @param partitions its partition count, at least 1
   * @throws IllegalArgumentException if {@code partitions} is below 1
   * @throws Exception as {@link #createTopic(String, String, int)}
   */
  public void createTopic(String topic, int partitions) throws Exception {
    createTopic(bootstrapServers(), topic, partitions);
  }

  /**
   * Creates a topic with replication factor 1 if it does not exist yet, and waits for the broker's answer and until
   * the leader of every partition serves it: it answers a {@code ListOffsets} request for the partition, which it
   * does only once it has created the partition's log and taken its leadership (the check a produce request meets).
   *
   * <p>Why a leader in the metadata is not enough: a KRaft broker publishes a new topic's leaders in its metadata cache
   * first and then creates the partitions' logs one by one (on a loaded machine the last one up to several hundred
   * milliseconds later). A produce request in between is refused with {@code NOT_LEADER_OR_FOLLOWER}. An idempotent
   * producer (the default since Kafka 3.0) keeps up to five requests per connection in flight; when the refused one
   * held a partition's first batch (sequence 0) and a later one of the same partition arrives after the log exists, the
   * broker, which knows no state for that producer yet, takes the later batch's sequence as the start. The retried
   * first batch is then refused with {@code OUT_OF_ORDER_SEQUENCE_NUMBER} on every try until the producer's delivery
   * timeout expires it, and its records are never written.
   *
   * <p>Blocks: call it from a test, a {@code main} or a worker, never an event loop.
   *
   * @param bootstrapServers the cluster to create it on (this broker's {@link #bootstrapServers()} or another)
   * @param topic the topic name
   * @param partitions its partition count, at least 1 (an existing topic keeps its own count, and is waited for)
   * @throws IllegalArgumentException if {@code partitions} is below 1
   * @throws TimeoutException if no broker at {@code bootstrapServers} answered within {@link #ANSWER_TIMEOUT_SECONDS}
   *     s; its message names the servers, the topic and the time waited (the call returns then, it does not wait out
   *     the client's own request timeout); or if, within as long after the answer, a partition still has no leader or
   *     its leader does not serve it yet (the message names the last refusal, if any)
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
      try {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(Map.of())))
            .all().get(ANSWER_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        if (e.getCause() instanceof org.apache.kafka.common.errors.TimeoutException) {
          throw noAnswer(bootstrapServers, topic);
        }
        if (!(e.getCause() instanceof TopicExistsException)) {
          throw e;
        }
      } catch (TimeoutException e) {
        throw noAnswer(bootstrapServers, topic);
      }
      answered = true;
      awaitServed(admin, bootstrapServers, topic);
    } finally {
      // Without an answer, closing would wait for the pending request's own timeout: do not.
      admin.close(answered ? Duration.ofSeconds(ANSWER_TIMEOUT_SECONDS) : Duration.ZERO);
    }
  }

  /**
   * Waits, {@link #ANSWER_TIMEOUT_SECONDS} s at most, until every partition of a topic has a leader in the broker's
   * metadata and that leader answers a {@code ListOffsets} request for it (see {@link #createTopic(String, String,
   * int)} for why the first is not enough). Polls every 10 ms; a refusal the client may retry (no leader yet, not the
   * leader yet, unknown partition yet) is retried, any other error is thrown.
   */
  private static void awaitServed(Admin admin, String bootstrapServers, String topic) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ANSWER_TIMEOUT_SECONDS);
    Exception last = null;
    while (true) {
      long leftMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
      try {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames()
            .get(leftMs, TimeUnit.MILLISECONDS).get(topic);
        if (d.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty())) {
          Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
          d.partitions().forEach(p -> ends.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
          admin.listOffsets(ends, new ListOffsetsOptions().timeoutMs((int) Math.min(leftMs, Integer.MAX_VALUE)))
              .all().get(leftMs, TimeUnit.MILLISECONDS);
          return;
        }
        last = null;
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof RetriableException)) {
          throw e;
        }
        last = e;
      } catch (TimeoutException e) {
        last = e;
      }
      if (System.nanoTime() - deadline > 0) {
        TimeoutException t = new TimeoutException("topic " + topic + " at " + bootstrapServers + " still has a "
            + "partition without a leader, or one its leader does not serve yet, after " + ANSWER_TIMEOUT_SECONDS
            + " s" + (last == null ? "" : "; last refusal: "
                + (last instanceof ExecutionException ? last.getCause() : last)));
        t.initCause(last);
        throw t;
      }
      Thread.sleep(10);
    }
  }

  private static TimeoutException noAnswer(String bootstrapServers, String topic) {
    return new TimeoutException("no Kafka broker at " + bootstrapServers + " answered within "
        + ANSWER_TIMEOUT_SECONDS + " s (creating topic " + topic + "); is it running and reachable?");
  }

  /**
   * Whether this broker would append a produce request for a partition now: its replica manager holds the partition
   * online, as its leader, with a local log. This is the broker's own state, which a new topic's partitions reach
   * after its metadata cache names their leader. For this package's tests.
   *
   * @param partition the topic partition
   * @return true if the broker leads the partition and has its log
   */
  boolean leadsWithLog(TopicPartition partition) {
    for (BrokerServer b : cluster.brokers().values()) {
      scala.Option<Partition> p = b.replicaManager().onlinePartition(partition);
      if (p.isDefined() && p.get().leaderLogIfLocal().isDefined()) {
        return true;
      }
    }
    return false;
  }

  /** Stops the broker and deletes its log and metadata directories. Blocks until the broker has stopped. */
  @Override
  public void close() throws Exception {
    cluster.close();
  }
}
