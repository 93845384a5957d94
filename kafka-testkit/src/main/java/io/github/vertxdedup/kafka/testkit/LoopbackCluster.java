package io.github.vertxdedup.kafka.testkit;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.Objects;
import java.util.UUID;

/**
 * Clustered Vert.x members on loopback, with the Hazelcast cluster manager of the Vert.x stack ({@code
 * vertx-hazelcast}): for tests, examples and benchmarks that run the dedup service across a real cluster, with members
 * in one JVM (one {@link Vertx} and one cluster manager each) or in child JVMs (each calls {@link #member} with the
 * same cluster name).
 *
 * <p>Every member of one {@linkplain #newClusterName() cluster name} joins over TCP-IP on 127.0.0.1 only: multicast,
 * auto-detection and Hazelcast's phone-home are off, and a cluster name of its own keeps concurrent test classes
 * (and other processes on the machine) out of each other's clusters. Hazelcast listens on the first free port from
 * {@value #BASE_PORT} (up to {@value #PORT_COUNT} ports) and a joining member probes that whole range; the event bus
 * listens on an ephemeral port of 127.0.0.1.
 *
 * <p>Failure detection is set for tests: a heartbeat every {@value #HEARTBEAT_SECONDS} s and a member declared dead
 * after {@value #MAX_NO_HEARTBEAT_SECONDS} s without one (Hazelcast's defaults are 5 s and 60 s), and no wait before
 * joining (default 5 s). {@code docs/partitioning.md} gives the values for production.
 *
 * <p>Thread-safe: every method may be called from any thread.
 */
public final class LoopbackCluster {

  /** The first port a member's Hazelcast tries: {@value} (Hazelcast's default). */
  public static final int BASE_PORT = 5701;
  /**
   * How many ports from {@link #BASE_PORT} a member may take, and a joining member probes: {@value}. A member named
   * without its port is looked for on the first three ports only, so a member that had to take a later port (others
   * running on the machine) would form a cluster of its own.
   */
  public static final int PORT_COUNT = 40;
  /** Seconds between heartbeats of a member: {@value}. */
  public static final int HEARTBEAT_SECONDS = 1;
  /** Seconds without a heartbeat after which a member is declared dead and leaves the cluster: {@value}. */
  public static final int MAX_NO_HEARTBEAT_SECONDS = 4;

  private LoopbackCluster() {}

  /** @return a cluster name no other call returns, so that concurrent clusters on the machine stay apart */
  public static String newClusterName() {
    return "vertx-dedup-test-" + UUID.randomUUID();
  }

  /**
   * The Hazelcast configuration of a member: the Vert.x defaults ({@code default-cluster.xml} of
   * {@code vertx-hazelcast}: the maps and multimaps the event bus and shared data use), joined on loopback as the
   * class documentation says.
   *
   * @param clusterName the cluster to join; members with the same name form one cluster
   * @return a new configuration, which the caller may change further before starting a member with it
   * @throws NullPointerException if {@code clusterName} is null
   */
  public static Config hazelcastConfig(String clusterName) {
    Objects.requireNonNull(clusterName, "clusterName");
    Config config = ConfigUtil.loadConfig();
    config.setClusterName(clusterName);
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.logging.type", "slf4j");
    config.setProperty("hazelcast.heartbeat.interval.seconds", Integer.toString(HEARTBEAT_SECONDS));
    config.setProperty("hazelcast.max.no.heartbeat.seconds", Integer.toString(MAX_NO_HEARTBEAT_SECONDS));
    config.setProperty("hazelcast.wait.seconds.before.join", "0");
    config.setProperty("hazelcast.max.wait.seconds.before.join", "0");
    // A member killed with SIGKILL never says goodbye; one stopped in a test must not linger either.
    config.setProperty("hazelcast.shutdownhook.enabled", "false");
    config.setProperty("hazelcast.graceful.shutdown.max.wait", "5");
    NetworkConfig network = config.getNetworkConfig();
    network.setPort(BASE_PORT).setPortAutoIncrement(true).setPortCount(PORT_COUNT);
    network.getInterfaces().setEnabled(true).clear().addInterface("127.0.0.1");
    JoinConfig join = network.getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    // Every port of the range by itself: Hazelcast's address parser refuses a "from-to" range where interfaces are set.
    join.getTcpIpConfig().setEnabled(true).clear();
    for (int port = BASE_PORT; port < BASE_PORT + PORT_COUNT; port++) {
      join.getTcpIpConfig().addMember("127.0.0.1:" + port);
    }
    return config;
  }

  /**
   * Starts a clustered Vert.x member that joins {@code clusterName} on loopback.
   *
   * @param clusterName the cluster to join
   * @return completes with the member once it has joined and its event bus listens; fails as
   *     {@link io.vertx.core.VertxBuilder#buildClustered()} does
   * @throws NullPointerException if {@code clusterName} is null
   */
  public static Future<Vertx> member(String clusterName) {
    return member(hazelcastConfig(clusterName), new VertxOptions());
  }

  /**
   * Starts a clustered Vert.x member with a Hazelcast configuration of the caller's (from
   * {@link #hazelcastConfig}, changed further) and Vert.x options whose event bus is put on 127.0.0.1.
   *
   * @param config the Hazelcast configuration
   * @param options the Vert.x options; its event bus host and public host are set to 127.0.0.1
   * @return completes with the member once it has joined and its event bus listens
   * @throws NullPointerException if an argument is null
   */
  public static Future<Vertx> member(Config config, VertxOptions options) {
    Objects.requireNonNull(config, "config");
    EventBusOptions bus = Objects.requireNonNull(options, "options").getEventBusOptions();
    bus.setHost("127.0.0.1").setClusterPublicHost("127.0.0.1").setPort(0);
    return Vertx.builder().with(options).withClusterManager(new HazelcastClusterManager(config)).buildClustered();
  }
}
