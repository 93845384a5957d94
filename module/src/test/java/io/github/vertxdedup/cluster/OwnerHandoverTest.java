package io.github.vertxdedup.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/**
 * Handovers of one partition between deployments of one service in one (non-clustered) Vert.x, each deployment on
 * a journal directory of its own (a machine's disk): the unvouched mark of a takeover without the previous owner's
 * journal survives that owner's restart on its own journal; a takeover that never answered leaves no trace that
 * would make its directory look handed over; a standby undeployed while it takes over settles before its undeploy
 * completes; an owner answers as soon as its deployment completes; the shortest check period {@code validate()}
 * allows keeps the owner confirmed. The window's time is a {@link ManualClock}; the ownership's polls, checks and
 * leases run on short real timers, which the test waits for by probing.
 */
class OwnerHandoverTest extends OwnersInOneJvmSupport {

  private static final String ADDRESS = "handed";

  private DedupOptions options(String journal) {
    return new DedupOptions().setAddress(ADDRESS).setPartitions(1).setWindowMs(60_000).setBucketMs(1_000)
        .setOwnerLockPollMs(20).setOwnerCheckMs(50).setOwnerLeaseMs(2_000)
        .setJournalDir(journal == null ? null : tmp.resolve(journal).toString());
  }

  @Test
  void shouldKeepNewIdsUnvouchedWhenTheTakeoverRestartsOnItsOwnJournalWithinW() {
    String a = deploy(options("j1"));
    assertThat(check("x").getString("verdict")).isEqualTo("ACCEPTED");
    String b = deploy(options("j2"));
    TestFutures.await(vertx.undeploy(a), 20);
    awaitEpoch(2);
    // B took over without j1: it cannot vouch for new ids until W after its takeover.
    assertThat(check("y").getBoolean("unvouched")).isTrue();
    TestFutures.await(vertx.undeploy(b), 20);
    // A rolling restart of B on the journal it wrote itself, within W: that journal is handed over, but it never held
    // what A accepted, so the mark must last until the same instant.
    deploy(options("j2"));
    JsonObject stats = stats();
    assertThat(stats.getLong("epoch")).isEqualTo(3);
    assertThat(stats.getBoolean("journalHandedOver")).isTrue();
    JsonObject x = check("x");
    assertThat(x.getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(x.getBoolean("unvouched")).as("reply %s, stats %s", x, stats).isTrue();
    assertThat(check("y").getString("verdict")).as("y is in the handed-over journal").isEqualTo("DUPLICATE");
    // The mark ends W after B's first takeover, not W after the restart.
    clock.advanceMs(60_000);
    JsonObject z = check("z");
    assertThat(z.getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(z.getBoolean("unvouched")).as("reply %s", z).isNotEqualTo(Boolean.TRUE);
  }

  @Test
  void shouldNotCountTheDirectoryOfATakeoverThatNeverAnsweredAsHandedOver() {
    // M1 (journal j1) owns epoch 1 and accepts "x"; it polls the lock rarely, so it does not take it back.
    String m1 = deploy(options("j1").setOwnerLockPollMs(600_000));
    assertThat(check("x").getString("verdict")).isEqualTo("ACCEPTED");
    String m2 = deploy(options("j2")); // M2 (journal j2): standby
    // M1 loses its partition uncleanly: another term (epoch 2) appears; M1 steps down and releases nothing cleanly.
    TestFutures.await(vertx.sharedData().getCounter(counterName()).compose(c -> c.incrementAndGet()), 5);
    // M2 takes epoch 3 and waits out the lease of epoch 2 (2 s); it is undeployed meanwhile, never having answered.
    awaitCounter(3);
    TestFutures.await(vertx.undeploy(m2), 20);
    assertThat(Files.exists(tmp.resolve("j2").resolve(ADDRESS).resolve("0").resolve("owner-epoch")))
        .as("a term that never deployed its partition writes no owner-epoch").isFalse();
    TestFutures.await(vertx.undeploy(m1), 20);
    // M2 comes back on the same directory: epoch 4, whose predecessor (3) never opened j2.
    deploy(options("j2"));
    JsonObject stats = stats();
    JsonObject r = check("x");
    assertThat(stats.getLong("epoch")).isEqualTo(4);
    assertThat(stats.getBoolean("journalHandedOver")).as("stats %s", stats).isFalse();
    assertThat(r.getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(r.getBoolean("unvouched")).as("reply %s", r).isTrue();
  }

  @Test
  void shouldSettleAStandbyUndeployedWhileTakingOverBeforeItsUndeployCompletes() throws Exception {
    for (int i = 0; i < 10; i++) {
      String a = deploy(options(null));
      String b = deploy(options(null));
      TestFutures.await(vertx.undeploy(a), 20);
      Thread.sleep(i % 5 * 10); // B's takeover in its various steps
      TestFutures.await(vertx.undeploy(b), 20);
      // Nothing answers once B's undeploy has completed...
      ReplyException none = TestFutures.replyFailure(vertx.eventBus().request(ADDRESS + ".0", null,
          action(DedupAction.STATS)), 10);
      assertThat(none.failureType()).as("iteration %s", i).isEqualTo(ReplyFailure.NO_HANDLERS);
      // ... and B's release is clean (a term that decided nothing after a clean release): the next owner need not
      // wait out a lease.
      long epoch = TestFutures.await(vertx.sharedData().getCounter(counterName()).compose(c -> c.get()), 5);
      Long released = TestFutures.await(vertx.sharedData().<String, Long>getAsyncMap("io.github.vertxdedup.owner"
          + ".releases").compose(m -> m.get(ADDRESS + ".0")), 5);
      assertThat(released).as("iteration %s: clean release of the last epoch", i).isEqualTo(epoch);
      String c = deploy(options(null));
      assertThat(stats().getString("owner")).startsWith(c + "@");
      TestFutures.await(vertx.undeploy(c), 20);
    }
    assertThat(vertx.deploymentIDs()).isEmpty();
  }

  @Test
  void shouldAnswerAsSoonAsItsDeploymentHasCompletedWithALeaseShorterThanItsRecovery() {
    deploy(options("j").setOwnerLeaseMs(200).setOwnerCheckMs(50));
    assertThat(stats().getString("state")).isEqualTo("READY");
    assertThat(check("first").getString("verdict")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldStayConfirmedWithTheLongestCheckPeriodValidateAllows() throws Exception {
    // A lease of 2 s: a check period of half the lease leaves a second for a check delayed on a loaded machine.
    deploy(options(null).setOwnerLeaseMs(2_000).setOwnerCheckMs(1_000));
    int refused = 0;
    for (int i = 0; i < 300; i++) {
      try {
        check("e-" + i);
      } catch (ReplyException e) {
        assertThat(e.failureCode()).isEqualTo(DedupFailure.UNAVAILABLE);
        refused++;
      }
      Thread.sleep(15); // spread the requests over several check periods (about 5 s)
    }
    assertThat(refused).as("requests refused as unconfirmed").isZero();
  }

  // ---------------------------------------------------------------------------------------------------------------

  private static String counterName() {
    return "io.github.vertxdedup.epoch." + ADDRESS + ".0";
  }

  private void awaitCounter(long epoch) {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (TestFutures.await(vertx.sharedData().getCounter(counterName()).compose(c -> c.get()), 5) < epoch) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("epoch " + epoch + " not taken within 10 s");
      }
      Thread.onSpinWait();
    }
  }

  private void awaitEpoch(long epoch) {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (System.nanoTime() < deadline) {
      try {
        if (stats().getLong("epoch") == epoch) {
          return;
        }
      } catch (ReplyException e) {
        // no owner answers yet
      }
    }
    throw new AssertionError("epoch " + epoch + " not reached within 10 s");
  }

  private JsonObject check(String id) {
    return request(ADDRESS + ".0", DedupAction.CHECK, new JsonObject().put("id", id));
  }

  private JsonObject stats() {
    return request(ADDRESS + ".0", DedupAction.STATS, null);
  }
}
