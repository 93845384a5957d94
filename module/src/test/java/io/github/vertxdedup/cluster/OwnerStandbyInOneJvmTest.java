package io.github.vertxdedup.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.UnvouchedPolicy;
import io.github.vertxdedup.impl.protocol.PartitionRouting;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Two deployments of one service in one (non-clustered) Vert.x: exactly one owner per partition, the other stands
 * by without registering the partitions' addresses; undeploying the owner hands every partition to the standby,
 * which marks new ids unvouched for {@code W} without a journal and remembers everything with the journal handed
 * over. The window's time is a {@link ManualClock}; the ownership's polls run on short real timers (a standby
 * notices a released lock within {@code ownerLockPollMs}), which the test waits for by probing.
 */
class OwnerStandbyInOneJvmTest extends OwnersInOneJvmSupport {

  private static final long WINDOW_MS = 60_000;
  private static final int PARTITIONS = 4;
  private static final String ADDRESS = "owned";

  private DedupOptions options() {
    return new DedupOptions().setAddress(ADDRESS).setPartitions(PARTITIONS).setWindowMs(WINDOW_MS)
        .setBucketMs(1_000).setOwnerLockPollMs(20).setOwnerCheckMs(50).setOwnerLeaseMs(5_000);
  }

  @Test
  void shouldHaveOneOwnerPerPartitionAndMarkNewIdsUnvouchedAfterATakeoverWithoutAJournal() {
    DedupOptions options = options();
    String first = deploy(options);
    String second = deploy(options);
    assertOneOwnerPerPartition(first, 1);

    List<String> accepted = acceptIds(options, "before-", 40);
    assertThat(accepted).allSatisfy(id -> assertThat(check(options, id, null).getBoolean("unvouched")).isNull());

    TestFutures.await(vertx.undeploy(first), 20);
    awaitOwner(second, 2);
    assertOneOwnerPerPartition(second, 2);

    // The standby could not know what the first owner accepted: it says so for every new id within W.
    for (String id : accepted) {
      JsonObject r = check(options, id, null);
      assertThat(r.getString("verdict")).isEqualTo("ACCEPTED");
      assertThat(r.getBoolean("unvouched")).as("id %s accepted within W after the takeover", id).isTrue();
    }
    // An id it accepted itself is a plain duplicate.
    assertThat(check(options, accepted.get(0), null).getString("verdict")).isEqualTo("DUPLICATE");
    // An event older than the takeover is not covered: today's uncoveredPolicy (UNKNOWN).
    assertThat(check(options, "old-event", clock.nowMs() - 1).getString("verdict")).isEqualTo("UNKNOWN");
    long unvouched = 0;
    for (int p = 0; p < PARTITIONS; p++) {
      JsonObject stats = stats(p);
      assertThat(stats.getBoolean("journalHandedOver")).isFalse();
      assertThat(stats.getLong("unvouchedUntilMs")).isEqualTo(T0 + WINDOW_MS);
      unvouched += stats.getLong("unvouched");
    }
    assertThat(unvouched).isEqualTo(accepted.size());

    // Once W has passed since the takeover, new ids are vouched for again.
    clock.advanceMs(WINDOW_MS);
    JsonObject later = check(options, "after-w", null);
    assertThat(later.getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(later.containsKey("unvouched")).isFalse();
  }

  @Test
  void shouldRefuseNewIdsUntilWHasPassedUnderRefuse() {
    DedupOptions options = options().setUnvouchedPolicy(UnvouchedPolicy.REFUSE);
    String first = deploy(options);
    String second = deploy(options);
    acceptIds(options, "before-", 8);
    TestFutures.await(vertx.undeploy(first), 20);
    awaitOwner(second, 2);

    ReplyException refused = TestFutures.replyFailure(vertx.eventBus().request(ADDRESS + "." + partitionOf(options,
        "new-id"), new JsonObject().put("id", "new-id"), action(DedupAction.CHECK)), 10);
    assertThat(refused.failureCode()).isEqualTo(DedupFailure.UNAVAILABLE);
    assertThat(refused.getMessage()).contains("unvouchedPolicy=REFUSE");

    clock.advanceMs(WINDOW_MS);
    assertThat(check(options, "new-id", null).getString("verdict")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldRememberEveryIdWhenTheStandbyOpensTheOwnersJournal() {
    DedupOptions options = options().setJournalDir(tmp.resolve("journal").toString());
    String first = deploy(options);
    String second = deploy(options);
    assertOneOwnerPerPartition(first, 1);
    List<String> accepted = acceptIds(options, "journaled-", 40);

    handOver(first, second);
    assertOneOwnerPerPartition(second, 2);
    assertJournalHandedOver(true);
    for (int p = 0; p < PARTITIONS; p++) {
      assertThat(stats(p).containsKey("unvouchedUntilMs")).isFalse();
    }
    for (String id : accepted) {
      assertThat(check(options, id, null).getString("verdict")).as(id).isEqualTo("DUPLICATE");
    }
    JsonObject fresh = check(options, "fresh", null);
    assertThat(fresh.getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(fresh.containsKey("unvouched")).isFalse();
  }

  @Test
  void shouldNotHandOverAStaleJournalWhoseEpochMatchesByChanceAfterTheWholeClusterRestarted() {
    // Before the restart: a deployment on directory "a" owns every partition at epoch 1 and writes it in owner-epoch.
    DedupOptions onA = options().setJournalDir(tmp.resolve("a").toString());
    deploy(onA);
    TestFutures.await(vertx.close(), 20);

    // The whole cluster (here, the JVM's shared data) restarted: epochs start again at 1. A deployment on directory
    // "c" owns the partitions now, at epoch 1 as well, and accepts ids that "a" never saw.
    vertx = io.vertx.core.Vertx.vertx();
    DedupOptions onC = options().setJournalDir(tmp.resolve("c").toString());
    String c = deploy(onC);
    String a = deploy(onA);
    assertOneOwnerPerPartition(c, 1);
    List<String> accepted = acceptIds(onC, "on-c-", 40);

    // "c" releases cleanly; "a" takes over at epoch 2. Its file says epoch 1, the previous epoch, but of another term.
    handOver(c, a);
    assertJournalHandedOver(false);
    for (String id : accepted) {
      JsonObject r = check(onA, id, null);
      assertThat(r.getString("verdict")).isEqualTo("ACCEPTED");
      assertThat(r.getBoolean("unvouched")).as("id %s, accepted by c", id).isTrue();
    }
  }

  // ---------------------------------------------------------------------------------------------------------------

  /** Undeploys {@code from}, the owner at epoch 1, and waits until {@code to} owns every partition at epoch 2. */
  private void handOver(String from, String to) {
    TestFutures.await(vertx.undeploy(from), 20);
    awaitOwner(to, 2);
  }

  private void assertJournalHandedOver(boolean handedOver) {
    for (int p = 0; p < PARTITIONS; p++) {
      assertThat(stats(p).getBoolean("journalHandedOver")).as("partition %s", p).isEqualTo(handedOver);
    }
  }

  /** Probes every partition address many times: every answer comes from {@code owner} with {@code epoch}. */
  private void assertOneOwnerPerPartition(String owner, long epoch) {
    for (int p = 0; p < PARTITIONS; p++) {
      Set<String> answers = new HashSet<>();
      for (int i = 0; i < 50; i++) {
        JsonObject s = stats(p);
        answers.add(s.getString("owner").split("@")[0] + "@" + s.getLong("epoch") + "/" + s.getString("role"));
      }
      assertThat(answers).as("answers of partition %s", p).containsExactly(owner + "@" + epoch + "/OWNER");
    }
  }

  /** Waits (real time: the standby polls the lock every 20 ms) until every partition answers from {@code owner}. */
  private void awaitOwner(String owner, long epoch) {
    long deadline = System.nanoTime() + 10_000_000_000L;
    for (int p = 0; p < PARTITIONS; p++) {
      while (true) {
        JsonObject s = statsOrNull(p);
        if (s != null && s.getString("owner", "").startsWith(owner + "@")) {
          assertThat(s.getLong("epoch")).isEqualTo(epoch);
          break;
        }
        if (System.nanoTime() > deadline) {
          throw new AssertionError("partition " + p + " not taken over by " + owner + " within 10 s: " + s);
        }
        sleepBriefly();
      }
    }
  }

  private List<String> acceptIds(DedupOptions options, String prefix, int n) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String id = prefix + i;
      assertThat(check(options, id, null).getString("verdict")).isEqualTo("ACCEPTED");
      ids.add(id);
    }
    return ids;
  }

  private JsonObject check(DedupOptions options, String id, Long eventTimeMs) {
    JsonObject body = new JsonObject().put("id", id);
    if (eventTimeMs != null) {
      body.put("eventTimeMs", eventTimeMs);
    }
    return request(ADDRESS + "." + partitionOf(options, id), DedupAction.CHECK, body);
  }

  private static int partitionOf(DedupOptions options, String id) {
    return new PartitionRouting(options).partitionOf(id, null);
  }

  private JsonObject stats(int p) {
    return request(ADDRESS + "." + p, DedupAction.STATS, null);
  }

  /** @return the stats of partition {@code p}, or null while no partition listens on its address (or refuses) */
  private JsonObject statsOrNull(int p) {
    try {
      return stats(p);
    } catch (ReplyException e) {
      if (e.failureType() == ReplyFailure.NO_HANDLERS || e.failureCode() == DedupFailure.UNAVAILABLE) {
        return null;
      }
      throw e;
    }
  }

  private static void sleepBriefly() {
    try {
      Thread.sleep(10);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
