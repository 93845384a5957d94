package io.github.vertxdedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.window.CapacityPolicy;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.Vertx;
import io.vertx.ext.healthchecks.CheckResult;
import io.vertx.ext.healthchecks.HealthChecks;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Meters, health procedures, capacity policies and deployment by name. */
class MetricsAndHealthTest extends ServiceTestSupport {

  private double counter(String name, String... tags) {
    return registry.get(name).tags("address", "dedup", "partition", "0").tags(tags).functionCounter().count();
  }

  private double gauge(String name) {
    return registry.get(name).tags("address", "dedup", "partition", "0").gauge().value();
  }

  @Test
  void shouldPublishVerdictCountersGaugesAndTheDuplicateAgeHistogram() {
    check("a");
    check("b");
    clock.advanceMs(4_000);
    check("a");
    verdict("check", id("c").put("payloadHash", "1"));
    verdict("check", id("c").put("payloadHash", "2"));
    ok("claim", id("d").put("leaseMs", 1_000));
    check("d");
    verdict("check", id("e").put("eventTimeMs", 1_000));
    clock.advanceMs(1_000);
    stats(); // publishes the snapshot (the 1 s timer does too)

    assertThat(counter("dedup.verdicts", "verdict", "accepted")).isEqualTo(4);
    assertThat(counter("dedup.verdicts", "verdict", "duplicate")).isEqualTo(1);
    assertThat(counter("dedup.verdicts", "verdict", "conflict")).isEqualTo(1);
    assertThat(counter("dedup.verdicts", "verdict", "in_flight")).isEqualTo(1);
    assertThat(counter("dedup.verdicts", "verdict", "unknown")).isEqualTo(1);
    assertThat(counter("dedup.late.deliveries")).isEqualTo(1);
    assertThat(counter("dedup.expired.leases")).isEqualTo(1);
    assertThat(counter("dedup.early.evictions")).isZero();
    assertThat(gauge("dedup.held.ids")).isEqualTo(3);
    assertThat(gauge("dedup.claims.held")).isZero();
    assertThat(gauge("dedup.held.id.bytes")).isPositive();
    assertThat(gauge("dedup.ready")).isEqualTo(1);
    assertThat(gauge("dedup.window")).as("W in seconds").isEqualTo(WINDOW_MS / 1000.0);
    Timer age = registry.get("dedup.duplicate.age").tags("partition", "0").timer();
    assertThat(age.count()).isEqualTo(1);
    assertThat(age.max(TimeUnit.MILLISECONDS)).isEqualTo(4_000);
  }

  @Test
  void shouldReportEachPartitionReadyAndRemoveItsMetersWhenUndeployed() {
    CheckResult all = await(verticle.getHealthChecks().checkStatus());
    assertThat(all.getUp()).isTrue();
    CheckResult p0 = await(verticle.getHealthChecks().checkStatus("dedup/0"));
    assertThat(p0.getUp()).isTrue();
    assertThat(p0.getData().getString("state")).isEqualTo("READY");

    await(vertx.undeploy(deploymentId));
    assertThat(registry.find("dedup.verdicts").meters()).isEmpty();
    assertThat(registry.find("dedup.duplicate.age").meters()).isEmpty();
  }

  @Test
  void shouldKeepAPartitionsMetersWhenAnEarlierPartitionOfTheSameIdentityStops() {
    // A second service at the same address in another Vert.x instance of the JVM, with the same registry: the state
    // of a journal handed from one owner to the next, whose successor registers before its predecessor stopped.
    Vertx other = Vertx.vertx();
    try {
      TestDeployments.deployService(other, new DedupVerticle(clock).setMeterRegistry(registry), options());
      await(other.eventBus().request("dedup.0", id("x"),
          new io.vertx.core.eventbus.DeliveryOptions().addHeader(DedupAction.HEADER, "check")));
      await(vertx.undeploy(deploymentId));
      await(other.eventBus().request("dedup.0", null,
          new io.vertx.core.eventbus.DeliveryOptions().addHeader(DedupAction.HEADER, "stats")));

      assertThat(registry.find("dedup.verdicts").tags("address", "dedup", "partition", "0", "verdict", "accepted")
          .functionCounter()).as("the successor's meter stays").isNotNull();
      assertThat(counter("dedup.verdicts", "verdict", "accepted")).as("and reads the successor's verdicts")
          .isEqualTo(1);
      assertThat(gauge("dedup.ready")).isEqualTo(1);
    } finally {
      await(other.close());
    }
  }

  @Test
  void shouldAnswerHealthProceduresRegisteredForAServiceDeployedByName() {
    DedupOptions named = new DedupOptions().setAddress("named").setPartitions(2).setWindowMs(60_000);
    HealthChecks checks = HealthChecks.create(vertx);
    DedupVerticle.registerHealthProcedures(vertx, checks, named, Duration.ofSeconds(2));
    CheckResult absent = await(checks.checkStatus("named/1"));
    assertThat(absent.getUp()).as("nothing deployed yet").isFalse();
    assertThat(absent.getData().getString("state")).isEqualTo("NOT_DEPLOYED");

    await(vertx.deployVerticle("io.github.vertxdedup.DedupVerticle",
        new DeploymentOptions().setConfig(named.toJson())));
    check("a");
    CheckResult all = await(checks.checkStatus());
    assertThat(all.getUp()).isTrue();
    CheckResult p1 = await(checks.checkStatus("named/1"));
    assertThat(p1.getUp()).isTrue();
    assertThat(p1.getData().getString("state")).isEqualTo("READY");
    assertThat(p1.getData().getString("address")).isEqualTo("named.1");

    assertThatThrownBy(() -> DedupVerticle.registerHealthProcedures(vertx, checks, named, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout must be > 0");
  }

  @Test
  void shouldRefuseANewIdWhenFullUnderRejectAndEvictEarlyUnderEvictOldest() {
    deploy("full", CapacityPolicy.REJECT);
    deploy("evicting", CapacityPolicy.EVICT_OLDEST);
    for (String address : new String[] {"full.0", "evicting.0"}) {
      send(address, "check", id("a"));
      clock.advanceMs(BUCKET_MS);
      send(address, "check", id("b"));
      clock.advanceMs(BUCKET_MS);
    }
    assertFailure(failure("full.0", "check", id("c")), 503, "window full", "maxIdsPerPartition=2");
    assertThat(((JsonObject) send("full.0", "check", id("a"))).getString("verdict")).isEqualTo("DUPLICATE");

    assertThat(((JsonObject) send("evicting.0", "check", id("c"))).getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(((JsonObject) send("evicting.0", "check", id("a"))).getString("verdict")).isEqualTo("ACCEPTED");
    JsonObject s = (JsonObject) send("evicting.0", "stats", null);
    assertThat(s.getLong("earlyEvictions")).isEqualTo(2);
    assertThat(registry.get("dedup.early.evictions").tags("address", "evicting").functionCounter().count())
        .isEqualTo(2);
  }

  @Test
  void shouldReserveRoomForClaimsUnderReject() {
    deploy("full", CapacityPolicy.REJECT);
    JsonObject claim = (JsonObject) send("full.0", "claim", id("a").put("key", "k"));
    assertThat(claim.getString("verdict")).isEqualTo("ACCEPTED");
    assertFailure(failure("full.0", "check", id("b")), 503, "reserved by claims");
    JsonObject commit = (JsonObject) send("full.0", "commit",
        id("a").put("key", "k").put("claimToken", claim.getString("claimToken")));
    assertThat(commit.getString("verdict")).isEqualTo("COMMITTED");
  }

  @Test
  void shouldDeployByNameWithAJsonConfig() {
    JsonObject config = new DedupOptions().setAddress("named").setWindowMs(60_000).toJson();
    await(vertx.deployVerticle("io.github.vertxdedup.DedupVerticle", new DeploymentOptions().setConfig(config)));
    assertThat(((JsonObject) send("named.0", "check", id("a"))).getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(((JsonObject) send("named", "check", id("a"))).getString("verdict")).isEqualTo("DUPLICATE");
  }

  @Test
  void shouldRefuseToDeployWithAnInvalidConfigNamingTheKey() {
    assertThatThrownBy(() -> await(vertx.deployVerticle(new DedupVerticle(clock),
        new DeploymentOptions().setConfig(new JsonObject().put("windowMs", 60_000).put("partition", 2)))))
        .hasMessageContaining("unknown dedup option 'partition'");
    assertThatThrownBy(() -> await(vertx.deployVerticle(new DedupVerticle(clock),
        new DeploymentOptions().setConfig(new JsonObject().put("address", "x")))))
        .hasMessageContaining("windowMs is required");
  }

  private void deploy(String address, CapacityPolicy policy) {
    DedupOptions o = new DedupOptions().setAddress(address).setWindowMs(WINDOW_MS).setBucketMs(BUCKET_MS)
        .setMaxIdsPerPartition(2).setCapacityPolicy(policy);
    TestDeployments.deployService(vertx, new DedupVerticle(clock).setMeterRegistry(registry), o);
  }
}
