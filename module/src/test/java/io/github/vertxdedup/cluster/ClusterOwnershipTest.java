package io.github.vertxdedup.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerticle;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.impl.protocol.PartitionRouting;
import io.github.vertxdedup.kafka.testkit.LoopbackCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The service on a real cluster (Hazelcast on loopback, three members in this JVM): members A and B deploy it, C
 * only sends (JSON bodies with the action header, the cluster's wire form). One owner per partition across the
 * cluster; when A goes, B takes every partition over, within the bound {@code docs/partitioning.md} states: at once
 * after a clean close (lock poll + recovery), and when A's Hazelcast instance is terminated without a goodbye (A can
 * no longer confirm its epoch: it must stop answering before B answers; Vert.x then closes A, whose undeploy marks
 * the release). Real time: failure detection is the cluster manager's.
 */
class ClusterOwnershipTest {

  private static final String ADDRESS = "clustered";
  private static final int PARTITIONS = 2;
  private static final long LEASE_MS = 2_000;

  private final List<Vertx> members = new ArrayList<>();

  @AfterEach
  void close() {
    ClusterPartitions.closeMembers(members);
  }

  private static DedupOptions options() {
    return new DedupOptions().setAddress(ADDRESS).setPartitions(PARTITIONS).setWindowMs(60_000).setBucketMs(1_000)
        .setOwnerLeaseMs(LEASE_MS).setOwnerCheckMs(300).setOwnerLockPollMs(100);
  }

  private Vertx member(String clusterName, String instanceName) {
    Config config = LoopbackCluster.hazelcastConfig(clusterName).setInstanceName(instanceName);
    Vertx m = TestFutures.await(LoopbackCluster.member(config, new VertxOptions()), 60);
    members.add(m);
    return m;
  }

  private static String deploy(Vertx member) {
    return TestFutures.await(member.deployVerticle(new DedupVerticle().setMeterRegistry(new SimpleMeterRegistry()),
        new DeploymentOptions().setConfig(options().toJson())), 30);
  }

  @Test
  void shouldHaveOneOwnerAcrossTheClusterAndFailOverOnACleanClose() {
    String cluster = LoopbackCluster.newClusterName();
    Vertx a = member(cluster, "a-" + UUID.randomUUID());
    Vertx b = member(cluster, "b-" + UUID.randomUUID());
    Vertx c = member(cluster, "c-" + UUID.randomUUID());
    String ownerA = deploy(a);
    String ownerB = deploy(b);
    assertOneOwner(c, ownerA, 1);
    List<String> accepted = acceptIds(c, 20);

    long closedAt = System.nanoTime();
    TestFutures.await(a.close(), 30);
    members.remove(a);
    long failoverMs = awaitOwner(c, ownerB, closedAt);
    System.out.printf("clean close of the owner's member -> first answer of the new owner: %d ms%n", failoverMs);
    assertThat(failoverMs).isLessThan(10_000);
    assertOneOwner(c, ownerB, 2);
    // Memory only: the new owner cannot know A's ids and says so.
    for (String id : accepted) {
      JsonObject r = check(c, id);
      assertThat(r.getString("verdict")).isEqualTo("ACCEPTED");
      assertThat(r.getBoolean("unvouched")).isTrue();
    }
  }

  @Test
  void shouldFenceACutOffOwnerBeforeTheStandbyAnswers() {
    String cluster = LoopbackCluster.newClusterName();
    String aName = "a-" + UUID.randomUUID();
    Vertx a = member(cluster, aName);
    Vertx b = member(cluster, "b-" + UUID.randomUUID());
    Vertx c = member(cluster, "c-" + UUID.randomUUID());
    String ownerA = deploy(a);
    String ownerB = deploy(b);
    assertOneOwner(c, ownerA, 1);

    // A's cluster manager dies without a goodbye; A's verticles run on and cannot confirm their epoch any more.
    long cutAt = System.nanoTime();
    Hazelcast.getHazelcastInstanceByName(aName).getLifecycleService().terminate();
    long lastAnswerFromA = 0;
    long firstAnswerFromB = 0;
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (System.nanoTime() < deadline && firstAnswerFromB == 0) {
      for (int p = 0; p < PARTITIONS; p++) {
        // A zombie that still answered would show here: A's stats straight from A's own event bus.
        JsonObject fromA = statsOrNull(a, p);
        if (fromA != null) {
          lastAnswerFromA = System.nanoTime();
        }
        JsonObject fromC = statsOrNull(c, p);
        if (fromC != null && fromC.getString("owner", "").startsWith(ownerB + "@") && firstAnswerFromB == 0) {
          firstAnswerFromB = System.nanoTime();
          assertThat(fromC.getLong("epoch")).isEqualTo(2);
        }
      }
      sleep(20);
    }
    assertThat(firstAnswerFromB).as("B answered as the new owner within 30 s").isPositive();
    long failoverMs = (firstAnswerFromB - cutAt) / 1_000_000;
    System.out.printf("owner's cluster manager cut off -> last answer of the old owner %d ms, first answer of the"
        + " new owner %d ms%n", lastAnswerFromA == 0 ? -1 : (lastAnswerFromA - cutAt) / 1_000_000, failoverMs);
    assertThat(lastAnswerFromA).as("the old owner's last answer precedes the new owner's first")
        .isLessThan(firstAnswerFromB);
    // Bound: failure detection (4 s + a 1 s heartbeat) + lock poll + one lease + recovery, with room for a slow box.
    assertThat(failoverMs).isLessThan(LoopbackCluster.MAX_NO_HEARTBEAT_SECONDS * 1000L + LEASE_MS + 8_000);
    assertOneOwner(c, ownerB, 2);
  }

  // ---------------------------------------------------------------------------------------------------------------

  /**
   * Probes every partition 30 times: every answer comes from {@code owner}. A request the event bus still sends to a
   * member that is gone (until the cluster drops its registrations) fails without an answer, and is not counted.
   */
  private void assertOneOwner(Vertx from, String owner, long epoch) {
    for (int p = 0; p < PARTITIONS; p++) {
      Set<String> answers = new HashSet<>();
      for (int i = 0; i < 30; i++) {
        JsonObject s = statsOrNull(from, p);
        if (s != null) {
          answers.add(s.getString("owner").split("@")[0] + "@" + s.getLong("epoch"));
        }
      }
      assertThat(answers).as("answers of partition %s", p).containsExactly(owner + "@" + epoch);
    }
  }

  private long awaitOwner(Vertx from, String owner, long sinceNanos) {
    long deadline = System.nanoTime() + 30_000_000_000L;
    for (int p = 0; p < PARTITIONS; p++) {
      while (true) {
        JsonObject s = statsOrNull(from, p);
        if (s != null && s.getString("owner", "").startsWith(owner + "@")) {
          break;
        }
        if (System.nanoTime() > deadline) {
          throw new AssertionError("partition " + p + " not taken over by " + owner + " within 30 s: " + s);
        }
        sleep(20);
      }
    }
    return (System.nanoTime() - sinceNanos) / 1_000_000;
  }

  private List<String> acceptIds(Vertx from, int n) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String id = "id-" + i;
      assertThat(check(from, id).getString("verdict")).isEqualTo("ACCEPTED");
      ids.add(id);
    }
    return ids;
  }

  private static JsonObject check(Vertx from, String id) {
    return ClusterPartitions.check(from, ADDRESS, new PartitionRouting(options()).partitionOf(id, null), id);
  }

  private static JsonObject statsOrNull(Vertx from, int p) {
    return ClusterPartitions.statsOrNull(from, ADDRESS, p);
  }

  private static void sleep(long ms) {
    ClusterPartitions.sleep(ms);
  }
}
