package io.github.vertxdedup.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.hazelcast.config.Config;
import com.hazelcast.config.SplitBrainProtectionConfig;
import com.hazelcast.splitbrainprotection.SplitBrainProtectionOn;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerticle;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.kafka.testkit.LoopbackCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster's record of a deployed term, written when its first write fails: a real Hazelcast cluster whose map of
 * deployed terms refuses writes below three members (a split-brain protection). The owner deploys on a cluster of two,
 * so its record fails; once a third member joins, the owner's next confirmation writes it, and a standby on the same
 * journal directory then takes the journal over as the previous owner's.
 */
class DeployedTermRecordTest {

  private static final String ADDRESS = "recorded";
  private static final String TERMS_MAP = "io.github.vertxdedup.owner.terms";

  private final List<Vertx> members = new ArrayList<>();

  @TempDir
  Path tmp;

  @AfterEach
  void close() {
    ClusterPartitions.closeMembers(members);
  }

  @Test
  void shouldRecordTheDeployedTermAtTheNextConfirmationAfterAFailedWrite() {
    String cluster = LoopbackCluster.newClusterName();
    Vertx a = member(cluster);
    Vertx b = member(cluster);
    DedupOptions options = new DedupOptions().setAddress(ADDRESS).setPartitions(1).setWindowMs(60_000)
        .setBucketMs(1_000).setOwnerLeaseMs(1_000).setOwnerCheckMs(200).setOwnerLockPollMs(100)
        .setJournalDir(tmp.resolve("journal").toString());
    String owner = deploy(a, options);
    assertThat(ClusterPartitions.stats(b, ADDRESS, 0).getString("owner")).startsWith(owner + "@");
    assertThat(ClusterPartitions.check(b, ADDRESS, 0, "x").getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(termRecord(b)).as("refused below three members").isNull();

    member(cluster);
    String record = null;
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (record == null && System.nanoTime() < deadline) {
      ClusterPartitions.sleep(100);
      record = termRecord(b);
    }
    assertThat(record).as("written at a confirmation once the map takes writes").startsWith("1:");

    // The standby on the same directory takes the journal over as the previous owner's: "x" is a duplicate.
    String standby = deploy(b, options);
    TestFutures.await(a.undeploy(owner), 20);
    JsonObject s = null;
    deadline = System.nanoTime() + 20_000_000_000L;
    while ((s == null || !s.getString("owner", "").startsWith(standby + "@")) && System.nanoTime() < deadline) {
      ClusterPartitions.sleep(50);
      s = ClusterPartitions.statsOrNull(b, ADDRESS, 0);
    }
    assertThat(s).isNotNull();
    assertThat(s.getString("owner")).startsWith(standby + "@");
    assertThat(s.getBoolean("journalHandedOver")).isTrue();
    assertThat(ClusterPartitions.check(b, ADDRESS, 0, "x").getString("verdict")).isEqualTo("DUPLICATE");
  }

  private String termRecord(Vertx from) {
    try {
      return TestFutures.await(from.sharedData().<String, String>getAsyncMap(TERMS_MAP)
          .compose(m -> m.get(ADDRESS + ".0")), 10);
    } catch (RuntimeException e) {
      return null; // a read may be refused too while the protection is not met
    }
  }

  private Vertx member(String cluster) {
    Config config = LoopbackCluster.hazelcastConfig(cluster).setInstanceName("m-" + UUID.randomUUID());
    config.addSplitBrainProtectionConfig(new SplitBrainProtectionConfig("three", true, 3)
        .setProtectOn(SplitBrainProtectionOn.WRITE));
    config.getMapConfig(TERMS_MAP).setSplitBrainProtectionName("three");
    Vertx m = TestFutures.await(LoopbackCluster.member(config, new VertxOptions()), 60);
    members.add(m);
    return m;
  }

  private static String deploy(Vertx member, DedupOptions options) {
    return TestFutures.await(member.deployVerticle(new DedupVerticle().setMeterRegistry(new SimpleMeterRegistry()),
        new DeploymentOptions().setConfig(options.toJson())), 30);
  }
}
