package io.github.vertxdedup.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.cluster.Member;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerticle;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.kafka.testkit.LoopbackCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A real Hazelcast cluster (three members on loopback in this JVM) that loses a partition's epoch counter: the
 * counter map keeps no backup here, and the member that dies is both the owner of the service's partition and the
 * Hazelcast member holding the counter, so the counter is gone with it, as it is when a member dies during a
 * migration before its entries have backups. The standby that takes over must not start as a first owner: it has
 * read the dead owner's epoch, so it takes an epoch past it, waits out a lease, and marks new ids unvouched.
 */
class EpochCounterLossTest {

  private static final String ADDRESS = "lossy";
  private static final String COUNTER = "io.github.vertxdedup.epoch." + ADDRESS + ".0";
  private static final long LEASE_MS = 1_000;
  /** {@code OwnerLock.LOST_COUNTER_MARGIN}, package-private there. */
  private static final long LOST_COUNTER_MARGIN = 1_000;

  private final List<Vertx> members = new ArrayList<>();

  @AfterEach
  void close() {
    ClusterPartitions.closeMembers(members);
  }

  @Test
  void shouldNotStartAFirstOwnerWhenTheClusterLostTheEpochCounterWithTheOwner() {
    String cluster = LoopbackCluster.newClusterName();
    String[] names = {"a-" + UUID.randomUUID(), "b-" + UUID.randomUUID(), "c-" + UUID.randomUUID()};
    Vertx[] vertx = new Vertx[3];
    for (int i = 0; i < 3; i++) {
      Config config = LoopbackCluster.hazelcastConfig(cluster).setInstanceName(names[i]);
      config.getMapConfig("__vertx.map.counter").setBackupCount(0).setAsyncBackupCount(0);
      vertx[i] = TestFutures.await(LoopbackCluster.member(config, new VertxOptions()), 60);
      members.add(vertx[i]);
    }
    HazelcastInstance first = Hazelcast.getHazelcastInstanceByName(names[0]);
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!first.getPartitionService().isClusterSafe() && System.nanoTime() < deadline) {
      sleep(50);
    }
    assertThat(first.getPartitionService().isClusterSafe()).as("no migration left to move the counter").isTrue();
    // The member that holds the counter's entry owns the service's partition; the next one stands by.
    Member holder = first.getPartitionService().getPartition(COUNTER).getOwner();
    int owner = -1;
    for (int i = 0; i < 3; i++) {
      if (Hazelcast.getHazelcastInstanceByName(names[i]).getCluster().getLocalMember().getUuid()
          .equals(holder.getUuid())) {
        owner = i;
      }
    }
    assertThat(owner).as("the counter's holder is one of the members").isNotNegative();
    int standby = (owner + 1) % 3;
    int sender = (owner + 2) % 3;
    AtomicInteger lostPartitions = new AtomicInteger();
    Hazelcast.getHazelcastInstanceByName(names[sender]).getMap("__vertx.map.counter")
        .addPartitionLostListener(e -> lostPartitions.incrementAndGet());

    String ownerId = deploy(vertx[owner]);
    String standbyId = deploy(vertx[standby]);
    JsonObject stats = stats(vertx[sender]);
    assertThat(stats.getString("owner")).startsWith(ownerId + "@");
    assertThat(stats.getLong("epoch")).isEqualTo(1);
    for (int i = 0; i < 10; i++) {
      assertThat(check(vertx[sender], "id-" + i).getString("verdict")).isEqualTo("ACCEPTED");
    }
    // The standby's deployment completed after its first failed lock poll, which read epoch 1.
    long killedAt = System.nanoTime();
    Hazelcast.getHazelcastInstanceByName(names[owner]).getLifecycleService().terminate();
    JsonObject taken = null;
    deadline = System.nanoTime() + 30_000_000_000L;
    while (System.nanoTime() < deadline) {
      JsonObject s = statsOrNull(vertx[sender]);
      if (s != null && s.getString("owner", "").startsWith(standbyId + "@")) {
        taken = s;
        break;
      }
      sleep(20);
    }
    long takenOverMs = (System.nanoTime() - killedAt) / 1_000_000;
    assertThat(taken).as("the standby took the partition over within 30 s").isNotNull();
    assertThat(lostPartitions.get()).as("the cluster lost the counter's partition").isPositive();
    assertThat(taken.getLong("epoch")).as("1 again, moved past the dead owner's epoch, not a first owner's 1")
        .isEqualTo(1 + 1 + LOST_COUNTER_MARGIN);
    assertThat(takenOverMs).as("the new owner waited out a lease before it answered").isGreaterThanOrEqualTo(LEASE_MS);
    for (int i = 0; i < 10; i++) {
      JsonObject r = check(vertx[sender], "id-" + i);
      assertThat(r.getString("verdict")).isEqualTo("ACCEPTED");
      assertThat(r.getBoolean("unvouched")).as("id-%s, accepted by the dead owner", i).isTrue();
    }
  }

  private static DedupOptions options() {
    return new DedupOptions().setAddress(ADDRESS).setPartitions(1).setWindowMs(60_000).setBucketMs(1_000)
        .setOwnerLeaseMs(LEASE_MS).setOwnerCheckMs(200).setOwnerLockPollMs(100);
  }

  private static String deploy(Vertx member) {
    return TestFutures.await(member.deployVerticle(new DedupVerticle().setMeterRegistry(new SimpleMeterRegistry()),
        new DeploymentOptions().setConfig(options().toJson())), 30);
  }

  private static JsonObject check(Vertx from, String id) {
    return ClusterPartitions.check(from, ADDRESS, 0, id);
  }

  private static JsonObject stats(Vertx from) {
    return ClusterPartitions.stats(from, ADDRESS, 0);
  }

  private static JsonObject statsOrNull(Vertx from) {
    return ClusterPartitions.statsOrNull(from, ADDRESS, 0);
  }

  private static void sleep(long ms) {
    ClusterPartitions.sleep(ms);
  }
}
