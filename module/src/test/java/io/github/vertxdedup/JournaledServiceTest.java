package io.github.vertxdedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service with a {@code journalDir}: what was decided before an undeploy is what the redeployed service knows,
 * one process owns a journal at a time, and the journal layout is guarded. Time is a {@link ManualClock} shared by
 * both deployments (a restart within one process).
 */
@ExtendWith(VertxExtension.class)
class JournaledServiceTest {

  private static final long T0 = 1_700_000_000_000L;
  private static final long WINDOW_MS = 60_000;

  @TempDir
  Path journalDir;

  private final ManualClock clock = new ManualClock(T0);
  private Vertx vertx;
  private String deployment;

  @BeforeEach
  void setUp(Vertx vertx) {
    this.vertx = vertx;
  }

  private DedupOptions options() {
    return new DedupOptions().setWindowMs(WINDOW_MS).setBucketMs(1_000).setPartitions(2)
        .setJournalDir(journalDir.toString());
  }

  private void deploy(DedupOptions options) {
    deployment = TestDeployments.deployService(vertx, clock, options);
  }

  private void restart(DedupOptions options) {
    await(vertx.undeploy(deployment));
    deploy(options);
  }

  @Test
  void shouldAnswerDuplicateAfterARestartForEveryIdAcceptedBefore() {
    deploy(options());
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      ids.add("order-" + i);
      assertThat(check("order-" + i)).isEqualTo("ACCEPTED");
    }
    JsonObject before = lookup("order-7");
    clock.advanceMs(5_000);
    restart(options());

    for (String id : ids) {
      assertThat(check(id)).as(id).isEqualTo("DUPLICATE");
    }
    assertThat(lookup("order-7").getLong("firstSeenMs")).isEqualTo(before.getLong("firstSeenMs"));
    assertThat(lookup("order-7").getLong("expiresAtMs")).isEqualTo(before.getLong("expiresAtMs"));
    assertThat(check("order-new")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldKeepClaimsCommitsReleasesKeysAndExpiriesAsTheyWereAcrossARestart() {
    // Keys over two partitions need routing by key, so every event carries one (and its copies the same one).
    DedupOptions options = options().setRouteByKey(true);
    deploy(options);
    String committedToken = claim(keyed("committed"), 10_000);
    assertThat(ok("commit", keyed("committed").put("claimToken", committedToken)).getString("verdict"))
        .isEqualTo("COMMITTED");
    String openToken = claim(keyed("open"), 10_000);
    String lapsingToken = claim(keyed("lapsing"), 10_000);
    assertThat(lapsingToken).isNotNull();
    String releasedToken = claim(keyed("released"), 10_000);
    assertThat(ok("release", keyed("released").put("claimToken", releasedToken)).getString("verdict"))
        .isEqualTo("RELEASED");
    assertThat(verdict("check", keyed("short").put("rememberUntilMs", T0 + 3_000))).isEqualTo("ACCEPTED");
    assertThat(verdict("check", id("keyed").put("key", "invoice-1").put("payloadHash", "h1")))
        .isEqualTo("ACCEPTED");
    clock.advanceMs(4_000);
    restart(options);

    assertThat(verdict("check", keyed("committed"))).isEqualTo("DUPLICATE");
    assertThat(verdict("check", keyed("open"))).isEqualTo("IN_FLIGHT");
    assertThat(verdict("check", keyed("lapsing"))).isEqualTo("IN_FLIGHT");
    assertThat(verdict("check", keyed("released"))).isEqualTo("ACCEPTED");
    assertThat(verdict("check", keyed("short"))).as("expired before the restart").isEqualTo("ACCEPTED");
    assertThat(verdict("check", id("other-id").put("key", "invoice-1"))).isEqualTo("DUPLICATE");
    assertThat(verdict("check", id("keyed").put("key", "invoice-1").put("payloadHash", "h2"))).isEqualTo("CONFLICT");

    // The token issued before the restart still commits its claim.
    assertThat(ok("commit", keyed("open").put("claimToken", openToken)).getString("verdict"))
        .isEqualTo("COMMITTED");
    assertThat(verdict("check", keyed("open"))).isEqualTo("DUPLICATE");
    // An orphaned claim is in flight until its lease ends, then free: never taken for a commit.
    clock.advanceMs(6_001);
    assertThat(verdict("check", keyed("lapsing"))).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldBringBackAnOrphanedClaimOnlyUntilItsLeaseEnds() {
    deploy(options());
    claim("orphan", 5_000);
    clock.advanceMs(6_000);
    restart(options());
    assertThat(lookup("orphan").getString("state")).isEqualTo("ABSENT");
    assertThat(check("orphan")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldCoverForEventTimesSinceTheJournalBeganAfterARestart() {
    deploy(options());
    assertThat(check("first")).isEqualTo("ACCEPTED");
    clock.advanceMs(10_000);
    restart(options());
    // A memory-only partition would answer UNKNOWN: its memory would begin at the restart.
    assertThat(verdict("check", id("late").put("eventTimeMs", T0 + 5_000))).isEqualTo("ACCEPTED");
    assertThat(verdict("check", id("older").put("eventTimeMs", T0 - 5_000))).isEqualTo("UNKNOWN");
  }

  @Test
  void shouldJournalBatchesAndAnswerAfterTheSyncUnderTheSyncPolicy() {
    DedupOptions options = options().setPartitions(1).setJournalSync(SyncPolicy.SYNC);
    deploy(options);
    JsonArray events = new JsonArray();
    for (int i = 0; i < 100; i++) {
      events.add(new JsonObject().put("id", "b" + i));
    }
    events.add(new JsonObject().put("id", "k").put("key", "key-1"));
    assertThat(verdicts(ok("checkBatch", new JsonObject().put("events", events))))
        .hasSize(101).containsOnly("ACCEPTED");
    assertThat(check("single")).isEqualTo("ACCEPTED");
    restart(options);
    assertThat(verdicts(ok("checkBatch", new JsonObject().put("events", events))))
        .hasSize(101).containsOnly("DUPLICATE");
    assertThat(check("single")).isEqualTo("DUPLICATE");
    assertThat(verdict("check", id("k2").put("key", "key-1"))).isEqualTo("DUPLICATE");
  }

  @Test
  void shouldJournalACommitBatchSoItsCommittedIdsAreDuplicatesAfterARestart() {
    DedupOptions options = options().setPartitions(1);
    deploy(options);
    JsonArray events = new JsonArray();
    for (int i = 0; i < 20; i++) {
      events.add(id("c" + i).put("claimToken", claim("c" + i, 10_000)));
    }
    // A claim that is not held: its 409 must not stop the others, nor be remembered.
    events.add(id("never").put("claimToken", "t"));
    JsonArray results = ok("commitBatch", new JsonObject().put("events", events)).getJsonArray("results");
    assertThat(results).hasSize(21);
    assertThat(results.getJsonObject(20).getInteger("failureCode")).isEqualTo(DedupFailure.STATE_CONFLICT);
    clock.advanceMs(1_000);
    restart(options);
    for (int i = 0; i < 20; i++) {
      assertThat(results.getJsonObject(i).getString("verdict")).isEqualTo("COMMITTED");
      assertThat(check("c" + i)).as("c" + i).isEqualTo("DUPLICATE");
    }
    assertThat(check("never")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldCarryOpenClaimsIntoNewCyclesAndDeleteExpiredCycleFiles() throws IOException {
    DedupOptions options = options().setPartitions(1);
    deploy(options);
    String token = claim("long", 600_000);
    for (int minute = 1; minute <= 6; minute++) {
      clock.advanceMs(61_000);
      assertThat(check("x" + minute)).isEqualTo("ACCEPTED");
    }
    restart(options);
    Path partitionDir = journalDir.resolve("dedup").resolve("0");
    // Seven one-minute cycles were written. Which of them the passes before the restart deleted depends on the
    // worker's timing (an append skips its pass while an earlier one is still running). The restarted partition's
    // first tick runs a pass whatever the cycle: it leaves the newest cycle alone, as every older one holds only
    // expired accepts and the open claim is carried into the newest.
    Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
        .until(() -> cycleFiles(partitionDir) == 1);
    assertThat(check("long")).isEqualTo("IN_FLIGHT");
    assertThat(check("x6")).isEqualTo("DUPLICATE");
    assertThat(check("x1")).as("expired a window ago").isEqualTo("ACCEPTED");
    assertThat(ok("commit", id("long").put("claimToken", token)).getString("verdict")).isEqualTo("COMMITTED");
  }

  @Test
  void shouldAnswer503WhileAnotherProcessHoldsTheJournalAndTakeOverOnceItStops() {
    deploy(options());
    assertThat(check("a")).isEqualTo("ACCEPTED");

    Vertx other = Vertx.vertx();
    try {
      // The second service deploys, but its partitions wait for the journal's lock.
      TestDeployments.deployService(other, clock, options());
      ReplyException locked = failure(other, "check", id("a"));
      assertThat(locked.failureCode()).isEqualTo(503);
      assertThat(locked.getMessage()).contains("journal locked by another process");

      await(vertx.undeploy(deployment));
      String verdict = null;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (verdict == null && System.nanoTime() < deadline) {
        try {
          verdict = ((JsonObject) await(other.eventBus().request("dedup", id("a"),
              new DeliveryOptions().addHeader(DedupAction.HEADER, "check"))).body()).getString("verdict");
        } catch (ReplyException e) {
          assertThat(e.failureCode()).as(e.getMessage()).isEqualTo(503);
        }
      }
      assertThat(verdict).as("the id accepted by the first owner, once the second took the journal over")
          .isEqualTo("DUPLICATE");
    } finally {
      await(other.close());
    }
  }

  @Test
  void shouldRefuseToDeployOnJournalsWrittenWithAnotherPartitionCount() {
    deploy(options());
    await(vertx.undeploy(deployment));
    assertThatThrownBy(() -> deploy(options().setPartitions(3)))
        .hasMessageContaining("partitions must be 2 for the journals in")
        .hasMessageContaining("but was 3");
  }

  @Test
  void shouldRefuseToDeployOnJournalsWrittenWithAnotherRoutedField() {
    deploy(options().setRouteByKey(true));
    await(vertx.undeploy(deployment));
    assertThatThrownBy(() -> deploy(options()))
        .hasMessageContaining("routeByKey must be true for the journals in")
        .hasMessageContaining("but was false");
    deploy(options().setRouteByKey(true));
  }

  @Test
  void shouldLetASinglePartitionChangeItsRoutedField() throws IOException {
    deploy(options().setPartitions(1));
    assertThat(check("order-1")).isEqualTo("ACCEPTED");
    restart(options().setPartitions(1).setRouteByKey(true));
    assertThat(Files.readAllLines(journalDir.resolve("dedup").resolve("partitions")))
        .containsExactly("1", "routeBy=key");
  }

  @Test
  void shouldRecordTheRoutedFieldInALayoutFileOfAnEarlierBuild() throws IOException {
    Path addressDir = Files.createDirectories(journalDir.resolve("dedup"));
    Files.writeString(addressDir.resolve("partitions"), "2\n");
    deploy(options().setRouteByKey(true));
    assertThat(Files.readAllLines(addressDir.resolve("partitions"))).containsExactly("2", "routeBy=key");
    await(vertx.undeploy(deployment));
    assertThatThrownBy(() -> deploy(options())).hasMessageContaining("routeByKey must be true");
  }

  @Test
  void shouldRefuseALayoutFileWithAnUnknownRoutedField() throws IOException {
    Path addressDir = Files.createDirectories(journalDir.resolve("dedup"));
    Files.writeString(addressDir.resolve("partitions"), "2\nrouteBy=payload\n");
    assertThatThrownBy(() -> deploy(options()))
        .hasMessageContaining("must hold routeBy=id or routeBy=key on its second line but holds 'routeBy=payload'");
  }

  // ---------------------------------------------------------------------------------------------------------------

  private static long cycleFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(f -> f.getFileName().toString().endsWith(".cq4")).count();
    }
  }

  private String claim(String id, long leaseMs) {
    return claim(id(id), leaseMs);
  }

  private String claim(JsonObject event, long leaseMs) {
    JsonObject reply = ok("claim", event.put("leaseMs", leaseMs));
    assertThat(reply.getString("verdict")).isEqualTo("ACCEPTED");
    return reply.getString("claimToken");
  }

  private String check(String id) {
    return verdict("check", id(id));
  }

  private JsonObject lookup(String id) {
    return ok("lookup", id(id));
  }

  private String verdict(String action, JsonObject body) {
    return ok(action, body).getString("verdict");
  }

  private static List<String> verdicts(JsonObject batchReply) {
    List<String> out = new ArrayList<>();
    for (Object o : batchReply.getJsonArray("verdicts")) {
      out.add(((JsonObject) o).getString("verdict"));
    }
    return out;
  }

  /** Single requests go through the router; batches to the partition that owns them (one partition there). */
  private JsonObject ok(String action, JsonObject body) {
    String address = action.endsWith("Batch") ? "dedup.0" : "dedup";
    Message<Object> reply = await(vertx.eventBus().request(address, body,
        new DeliveryOptions().addHeader(DedupAction.HEADER, action)));
    return (JsonObject) reply.body();
  }

  private static ReplyException failure(Vertx vertx, String action, JsonObject body) {
    try {
      Object reply = await(vertx.eventBus().request("dedup", body,
          new DeliveryOptions().addHeader(DedupAction.HEADER, action)));
      return fail("expected a failure but got " + reply);
    } catch (ReplyException e) {
      return e;
    }
  }

  private static JsonObject id(String id) {
    return new JsonObject().put("id", id);
  }

  /** An event whose business key is derived from its id, so that all its copies carry the same one. */
  private static JsonObject keyed(String id) {
    return id(id).put("key", "key-" + id);
  }

  private static <T> T await(Future<T> f) {
    return TestFutures.await(f, 20);
  }
}
