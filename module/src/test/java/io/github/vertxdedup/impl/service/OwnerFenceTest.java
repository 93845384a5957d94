package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.impl.journal.NoJournal;
import io.github.vertxdedup.impl.journal.ForwardingPartitionJournal;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.SharedData;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The fence, driven by hand: the ownership's timers are a {@link ManualPartitionTimer} (a check runs only when the
 * test fires it) and the lease clock an {@link AtomicLong} the test moves. An owner whose last confirmation is older
 * than its lease answers 503 before deciding anything; a confirmation restores it; a check that finds a larger epoch
 * (another owner took over) makes it step down at once: its address is unregistered.
 */
class OwnerFenceTest {

  private static final long LEASE_MS = 1_000;
  private static final String ADDRESS = "fenced";

  private final ManualClock clock = new ManualClock(1_700_000_000_000L);
  private final AtomicLong leaseClock = new AtomicLong(0);
  private final ManualPartitionTimer timer = new ManualPartitionTimer();
  private Vertx vertx;
  private Context context;
  private PartitionOwnership ownership;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    context = vertx.getOrCreateContext();
    DedupOptions options = new DedupOptions().setAddress(ADDRESS).setWindowMs(60_000).setBucketMs(1_000)
        .setOwnerLeaseMs(LEASE_MS).setOwnerCheckMs(100).setOwnerLockPollMs(100).validate();
    Promise<Void> started = Promise.promise();
    context.runOnContext(v -> {
      ownership = new PartitionOwnership(vertx, context, options, 0, clock, timer, leaseClock::get, "test-owner",
          null, () -> new PartitionVerticle(options, 0, clock, NoJournal.INSTANCE, null));
      ownership.start().onComplete(started);
    });
    TestFutures.await(started.future(), 10);
  }

  @AfterEach
  void stop() {
    TestFutures.await(vertx.close(), 20);
  }

  @Test
  void shouldStopDecidingOnceItsLeaseRunsOutWithoutAConfirmation() {
    assertThat(ownership.role()).isEqualTo(PartitionOwnership.Role.OWNER);
    assertThat(ownership.epoch()).isEqualTo(1);
    assertThat(check("a").getString("verdict")).isEqualTo("ACCEPTED");

    // No check has run (its timer is not fired): at the lease's end the owner decides nothing more.
    leaseClock.set(LEASE_MS);
    ReplyException fenced = TestFutures.replyFailure(request("b"), 10);
    assertThat(fenced.failureCode()).isEqualTo(DedupFailure.UNAVAILABLE);
    assertThat(fenced.getMessage()).contains("has not confirmed its ownership");

    // A confirmation (the check finds its own epoch) extends the lease from the moment it was asked.
    timer.fireNext();
    awaitLeaseEnd(2 * LEASE_MS);
    assertThat(check("b").getString("verdict")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldStepDownWhenItsEpochIsNoLongerTheNewest() {
    assertThat(check("a").getString("verdict")).isEqualTo("ACCEPTED");
    // Another owner took the partition over somewhere: the epoch counter moved past ours.
    TestFutures.await(vertx.sharedData().getCounter("io.github.vertxdedup.epoch." + ADDRESS + ".0")
        .compose(c -> c.incrementAndGet()), 10);
    timer.fireNext();
    awaitRole(ownership, PartitionOwnership.Role.STANDBY);
    assertThat(ownership.role()).isEqualTo(PartitionOwnership.Role.STANDBY);
    assertThat(ownership.partition()).isNull();
    ReplyException gone = TestFutures.replyFailure(request("c"), 10);
    assertThat(gone.failureType()).isEqualTo(ReplyFailure.NO_HANDLERS);
  }

  @Test
  void shouldPutBackACounterThatWentBackAndGoOnOwning() {
    assertThat(check("a").getString("verdict")).isEqualTo("ACCEPTED");
    // The cluster lost the counter's partition with a member (no backup yet): the counter reads 0 while this owner
    // still holds the lock. The owner puts its epoch back and keeps its window.
    assertThat(TestFutures.<Boolean>await(counter(ADDRESS).compose(c -> c.compareAndSet(1, 0)), 10)).isTrue();
    leaseClock.set(LEASE_MS / 2);
    timer.fireNext();
    awaitLeaseEnd(LEASE_MS / 2 + LEASE_MS);
    assertThat(TestFutures.<Long>await(counter(ADDRESS).compose(c -> c.get()), 10)).isEqualTo(1L);
    assertThat(ownership.role()).isEqualTo(PartitionOwnership.Role.OWNER);
    assertThat(check("a").getString("verdict")).isEqualTo("DUPLICATE");
  }

  @Test
  void shouldStopAStandbyOnlyOnceTheEpochReadAfterItsFailedTryHasAnswered() {
    // A standby reads the epoch counter after each try for the lock it did not get. The service stops while that read
    // is held back in the cluster: the stop completes once the read answers, and the standby then polls no more.
    Promise<Void> held = Promise.promise();
    Promise<Void> asked = Promise.promise();
    SharedData data = SteppedSharedData.counterReads(vertx.sharedData(), read -> {
      asked.tryComplete();
      return held.future();
    });
    ManualPartitionTimer waits = new ManualPartitionTimer();
    Promise<PartitionOwnership> made = Promise.promise();
    context.runOnContext(v -> {
      PartitionOwnership o = new PartitionOwnership(vertx, context, ownerOptions(), 0, clock, waits, leaseClock::get,
          "standby", null, () -> new PartitionVerticle(ownerOptions(), 0, clock, NoJournal.INSTANCE, null), data);
      o.start();
      made.complete(o);
    });
    PartitionOwnership standby = TestFutures.await(made.future(), 10);
    TestFutures.await(asked.future(), 10);

    Promise<Future<Void>> stopping = Promise.promise();
    context.runOnContext(v -> stopping.complete(standby.stop()));
    Future<Void> stopped = TestFutures.await(stopping.future(), 10);
    assertThat(stopped.isComplete()).as("stopped while its read is held").isFalse();

    held.complete();
    TestFutures.await(stopped, 10);
    assertThat(standby.role()).isEqualTo(PartitionOwnership.Role.STOPPED);
    assertThat(waits.waiting()).as("polls scheduled after the stop").isZero();
    assertThat(ownership.role()).isEqualTo(PartitionOwnership.Role.OWNER);
    assertThat(check("a").getString("verdict")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldTakeOverAsAfterALossWhenTheCounterWentBackBelowAnEpochItHadRead() {
    assertThat(check("a").getString("verdict")).isEqualTo("ACCEPTED");
    ManualPartitionTimer waits = new ManualPartitionTimer();
    PartitionOwnership[] standby = new PartitionOwnership[1];
    Promise<Void> standing = Promise.promise();
    context.runOnContext(v -> {
      standby[0] = new PartitionOwnership(vertx, context, ownerOptions(), 0, clock, waits, leaseClock::get,
          "standby", null, () -> new PartitionVerticle(ownerOptions(), 0, clock, NoJournal.INSTANCE, null));
      standby[0].start().onComplete(standing);
    });
    TestFutures.await(standing.future(), 10);
    assertThat(standby[0].role()).isEqualTo(PartitionOwnership.Role.STANDBY);
    ManualPartitionTimer.Scheduled poll = waits.next();

    // The owner's member dies, and the cluster loses the partitions of its counter and of its release with it: the
    // counter is back at 0 and no clean release is recorded.
    TestFutures.await(ownership.stop(), 10);
    assertThat(TestFutures.<Boolean>await(counter(ADDRESS).compose(c -> c.compareAndSet(1, 0)), 10)).isTrue();
    TestFutures.await(vertx.sharedData().<String, Long>getAsyncMap(OwnerLock.RELEASES_MAP)
        .compose(m -> m.remove(ADDRESS + ".0")), 10);

    // The standby had read epoch 1: it is not a first owner. It takes an epoch past 1 and waits out a lease.
    waits.fire(poll);
    ManualPartitionTimer.Scheduled wait = waits.next();
    assertThat(wait.delayMs()).as("the wait after an unclean loss").isEqualTo(LEASE_MS);
    assertThat(standby[0].epoch()).as("1 again, moved past epoch 1 by the margin")
        .isEqualTo(1 + 1 + OwnerLock.LOST_COUNTER_MARGIN);
    leaseClock.addAndGet(LEASE_MS);
    waits.fire(wait);
    awaitRole(standby[0], PartitionOwnership.Role.OWNER);
    assertThat(standby[0].role()).isEqualTo(PartitionOwnership.Role.OWNER);
    JsonObject again = check("a");
    assertThat(again.getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(again.getBoolean("unvouched")).as("the window holds nothing of the lost owner's ids").isTrue();
  }

  @Test
  void shouldTakeOverAsAfterALossWhenTheCounterIsAtOrBelowACleanlyReleasedEpoch() {
    // The owner releases epoch 1 cleanly; then the cluster loses the counter (not the release map). A deployment
    // that never read the counter takes over: the release names an epoch the counter no longer passes.
    TestFutures.await(ownership.stop(), 10);
    assertThat(TestFutures.<Boolean>await(counter(ADDRESS).compose(c -> c.compareAndSet(1, 0)), 10)).isTrue();
    ManualPartitionTimer waits = new ManualPartitionTimer();
    PartitionOwnership next = startOn(ownerOptions(), waits, "next");
    ManualPartitionTimer.Scheduled wait = waits.next();
    assertThat(wait.delayMs()).as("a lease waited out, although the release was clean").isEqualTo(LEASE_MS);
    assertThat(next.epoch()).isEqualTo(1 + 1 + OwnerLock.LOST_COUNTER_MARGIN);
    assertThat(next.role()).isEqualTo(PartitionOwnership.Role.TAKING_OVER);
  }

  @Test
  void shouldTakeOverAsAfterALossWhenTheCounterIsAtOrBelowTheLastDeployedTerm() {
    // The owner's deployment of epoch 1 is recorded; its release record and the counter are lost. A deployment that
    // never read the counter takes over: the deployed term names an epoch the counter no longer passes.
    TestFutures.await(ownership.stop(), 10);
    assertThat(TestFutures.<Boolean>await(counter(ADDRESS).compose(c -> c.compareAndSet(1, 0)), 10)).isTrue();
    TestFutures.await(vertx.sharedData().<String, Long>getAsyncMap(OwnerLock.RELEASES_MAP)
        .compose(m -> m.remove(ADDRESS + ".0")), 10);
    assertThat(TestFutures.<String>await(vertx.sharedData().<String, String>getAsyncMap(OwnerLock.TERMS_MAP)
        .compose(m -> m.get(ADDRESS + ".0")), 10)).startsWith("1:");
    ManualPartitionTimer waits = new ManualPartitionTimer();
    PartitionOwnership next = startOn(ownerOptions(), waits, "next");
    ManualPartitionTimer.Scheduled wait = waits.next();
    assertThat(wait.delayMs()).as("a lease waited out").isEqualTo(LEASE_MS);
    assertThat(next.epoch()).isEqualTo(1 + 1 + OwnerLock.LOST_COUNTER_MARGIN);
  }

  @Test
  void shouldPutBackACounterLostWhileItWaitsOutALease() {
    // A takeover after an unclean loss waits a lease; meanwhile the cluster loses the counter. The confirmation after
    // the wait finds it below its epoch, puts it back and deploys, instead of stepping down and waiting again.
    String address = "lost-twice";
    DedupOptions options = new DedupOptions().setAddress(address).setWindowMs(60_000).setBucketMs(1_000)
        .setOwnerLeaseMs(LEASE_MS).setOwnerCheckMs(100).setOwnerLockPollMs(100).validate();
    TestFutures.await(counter(address).compose(c -> c.incrementAndGet()), 10);
    ManualPartitionTimer waits = new ManualPartitionTimer();
    PartitionOwnership next = startOn(options, waits, "next-owner");
    ManualPartitionTimer.Scheduled wait = waits.next();
    assertThat(next.epoch()).isEqualTo(2);
    assertThat(TestFutures.<Boolean>await(counter(address).compose(c -> c.compareAndSet(2, 0)), 10)).isTrue();
    leaseClock.addAndGet(LEASE_MS);
    waits.fire(wait);
    awaitRole(next, PartitionOwnership.Role.OWNER);
    assertThat(next.role()).isEqualTo(PartitionOwnership.Role.OWNER);
    assertThat(next.epoch()).isEqualTo(2);
    assertThat(TestFutures.<Long>await(counter(address).compose(c -> c.get()), 10)).isEqualTo(2L);
  }

  @Test
  void shouldReleaseCleanlyATakeoverWhoseServiceIsUndeployedWhileItsPartitionDeploys() {
    // The owner of epoch 1 releases cleanly; a standby's service takes epoch 2 and deploys its partition, a child of
    // the service's deployment. The service is undeployed while the partition recovers: Vert.x refuses the partition
    // as a child of a deployment going away, and that failure reaches the ownership before the service's stop() does
    // (held here; under load it comes first by chance). The term answered nothing after a clean release, so its
    // release is clean too, and the next owner need not wait out a lease.
    TestFutures.await(ownership.stop(), 10);
    Promise<Void> recovering = Promise.promise();
    Promise<Void> recovered = Promise.promise();
    Promise<Void> stopCalled = Promise.promise();
    Promise<Void> stopHeld = Promise.promise();
    PartitionOwnership[] taking = new PartitionOwnership[1];
    String service = TestFutures.await(vertx.deployVerticle(new VerticleBase() {
      @Override
      public Future<?> start() {
        taking[0] = new PartitionOwnership(vertx, context, ownerOptions(), 0, clock, new ManualPartitionTimer(),
            leaseClock::get, "taking-over", null, () -> new PartitionVerticle(ownerOptions(), 0, clock,
                new HeldRecoveryJournal(recovering, recovered.future()), null));
        taking[0].start();
        return Future.succeededFuture();
      }

      @Override
      public Future<?> stop() {
        stopCalled.complete();
        Promise<Void> stopped = Promise.promise();
        stopHeld.future().onComplete(v -> context.runOnContext(x -> taking[0].stop().onComplete(stopped)));
        return stopped.future();
      }
    }), 10);
    TestFutures.await(recovering.future(), 10);
    assertThat(taking[0].epoch()).isEqualTo(2);

    Future<Void> undeployed = vertx.undeploy(service);
    TestFutures.await(stopCalled.future(), 10);
    recovered.complete(); // the partition starts, but its parent deployment is going away
    awaitRole(taking[0], PartitionOwnership.Role.STANDBY);
    stopHeld.complete();
    TestFutures.await(undeployed, 10);

    assertThat(taking[0].role()).isEqualTo(PartitionOwnership.Role.STOPPED);
    assertThat(TestFutures.<Long>await(counter(ADDRESS).compose(c -> c.get()), 10)).isEqualTo(2L);
    assertThat(TestFutures.<Long>await(vertx.sharedData().<String, Long>getAsyncMap(OwnerLock.RELEASES_MAP)
        .compose(m -> m.get(ADDRESS + ".0")), 10)).as("a clean release of epoch 2").isEqualTo(2L);
  }

  /**
   * Makes an ownership of partition 0 on the test's context, with the lease clock the test moves, and starts it.
   *
   * @return the ownership, once made (its start may still wait for a timer the test fires)
   */
  private PartitionOwnership startOn(DedupOptions options, ManualPartitionTimer timers, String name) {
    Promise<PartitionOwnership> made = Promise.promise();
    context.runOnContext(v -> {
      PartitionOwnership o = new PartitionOwnership(vertx, context, options, 0, clock, timers, leaseClock::get, name,
          null, () -> new PartitionVerticle(options, 0, clock, NoJournal.INSTANCE, null));
      o.start();
      made.complete(o);
    });
    return TestFutures.await(made.future(), 10);
  }

  private static void awaitRole(PartitionOwnership o, PartitionOwnership.Role role) {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (o.role() != role && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(o.role()).isEqualTo(role);
  }

  private static DedupOptions ownerOptions() {
    return new DedupOptions().setAddress(ADDRESS).setWindowMs(60_000).setBucketMs(1_000).setOwnerLeaseMs(LEASE_MS)
        .setOwnerCheckMs(100).setOwnerLockPollMs(100).validate();
  }

  private io.vertx.core.Future<io.vertx.core.shareddata.Counter> counter(String address) {
    return vertx.sharedData().getCounter("io.github.vertxdedup.epoch." + address + ".0");
  }

  @Test
  void shouldCountTheUnvouchedWindowFromTheEndOfTheWaitAfterAnUncleanLoss() {
    // A previous owner of "lost.0" (epoch 1) was lost without marking a clean release: the next owner takes epoch 2,
    // waits out one lease (the predecessor, if cut off rather than dead, may decide until then), then decides.
    String address = "lost";
    DedupOptions options = new DedupOptions().setAddress(address).setWindowMs(60_000).setBucketMs(1_000)
        .setOwnerLeaseMs(LEASE_MS).setOwnerCheckMs(100).setOwnerLockPollMs(100).validate();
    TestFutures.await(vertx.sharedData().getCounter("io.github.vertxdedup.epoch." + address + ".0")
        .compose(c -> c.incrementAndGet()), 10);
    ManualPartitionTimer waits = new ManualPartitionTimer();
    PartitionOwnership next = startOn(options, waits, "next-owner");
    long takenAtMs = clock.nowMs();
    ManualPartitionTimer.Scheduled wait = waits.next();
    assertThat(wait.delayMs()).as("the wait after an unclean loss").isEqualTo(LEASE_MS);
    assertThat(next.role()).isEqualTo(PartitionOwnership.Role.TAKING_OVER);
    clock.advanceMs(LEASE_MS);
    leaseClock.addAndGet(LEASE_MS);
    waits.fire(wait);
    awaitRole(next, PartitionOwnership.Role.OWNER);
    assertThat(next.role()).isEqualTo(PartitionOwnership.Role.OWNER);
    JsonObject stats = (JsonObject) TestFutures.await(vertx.eventBus().request(address + ".0", null,
        new DeliveryOptions().addHeader(DedupAction.HEADER, DedupAction.STATS.wireName())), 10).body();
    assertThat(stats.getLong("epoch")).isEqualTo(2);
    assertThat(stats.getLong("unvouchedUntilMs")).as("W counted from the end of the wait, not from the lock")
        .isEqualTo(takenAtMs + LEASE_MS + options.getWindowMs());
  }

  @Test
  void shouldAnswerAsSoonAsItStartsWhenItsRecoveryOutlastedTheLease() {
    // A partition whose recovery (its deployment) takes longer than the lease: the lease clock moves past the lease
    // the takeover confirmed while the partition deploys, and no check timer fires meanwhile.
    DedupOptions options = new DedupOptions().setAddress("slow").setWindowMs(60_000).setBucketMs(1_000)
        .setOwnerLeaseMs(LEASE_MS).setOwnerCheckMs(100).setOwnerLockPollMs(100).validate();
    Promise<PartitionOwnership> started = Promise.promise();
    context.runOnContext(v -> {
      PartitionOwnership slow = new PartitionOwnership(vertx, context, options, 0, clock, timer, leaseClock::get,
          "slow-owner", null, () -> {
            leaseClock.addAndGet(3 * LEASE_MS);
            return new PartitionVerticle(options, 0, clock, NoJournal.INSTANCE, null);
          });
      slow.start().map(slow).onComplete(started);
    });
    PartitionOwnership slow = TestFutures.await(started.future(), 10);
    assertThat(slow.role()).isEqualTo(PartitionOwnership.Role.OWNER);
    JsonObject r = (JsonObject) TestFutures.await(vertx.eventBus().request("slow.0", new JsonObject().put("id", "a"),
        new DeliveryOptions().addHeader(DedupAction.HEADER, DedupAction.CHECK.wireName())), 10).body();
    assertThat(r.getString("verdict")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldScheduleEachCheckFromTheMomentThePreviousOneWasAsked() {
    // A lease clock that moves 30 ms at every reading: the read of the epoch "takes" 30 ms between its ask and the
    // scheduling of the next check, which is then due 70 ms later (100 after the ask), not 100 ms after the answer.
    DedupOptions options = new DedupOptions().setAddress("periodic").setWindowMs(60_000).setBucketMs(1_000)
        .setOwnerLeaseMs(LEASE_MS).setOwnerCheckMs(100).setOwnerLockPollMs(100).validate();
    AtomicLong movingClock = new AtomicLong();
    ManualPartitionTimer checks = new ManualPartitionTimer();
    Promise<Void> started = Promise.promise();
    context.runOnContext(v -> new PartitionOwnership(vertx, context, options, 0, clock, checks,
        () -> movingClock.getAndAdd(30), "periodic-owner", null,
        () -> new PartitionVerticle(options, 0, clock, NoJournal.INSTANCE, null)).start().onComplete(started));
    TestFutures.await(started.future(), 10);
    assertThat(checks.fireNext()).as("the first check, scheduled at the takeover").isEqualTo(70);
    assertThat(checks.fireNext()).as("the check after a confirmation").isEqualTo(70);
    assertThat(checks.fireNext()).isEqualTo(70);
  }

  private void awaitLeaseEnd(long atLeastMs) {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (System.nanoTime() < deadline) {
      PartitionVerticle p = ownership.partition();
      if (p != null && p.term().leaseEndMs() >= atLeastMs) {
        return;
      }
      Thread.onSpinWait();
    }
    throw new AssertionError("the check did not confirm the epoch within 10 s");
  }

  private JsonObject check(String id) {
    return (JsonObject) TestFutures.await(request(id), 10).body();
  }

  private io.vertx.core.Future<io.vertx.core.eventbus.Message<Object>> request(String id) {
    return vertx.eventBus().request(ADDRESS + ".0", new JsonObject().put("id", id),
        new DeliveryOptions().addHeader(DedupAction.HEADER, DedupAction.CHECK.wireName()));
  }

  /** A journal without entries whose recovery completes when the test says so. */
  private static final class HeldRecoveryJournal extends ForwardingPartitionJournal {

    private final Promise<Void> recovering;
    private final Future<Void> recovered;

    /**
     * @param recovering completed when the recovery is asked
     * @param recovered completes the recovery
     */
    HeldRecoveryJournal(Promise<Void> recovering, Future<Void> recovered) {
      super(NoJournal.INSTANCE);
      this.recovering = recovering;
      this.recovered = recovered;
    }

    @Override
    public Future<Void> recover(RecoveryTarget target) {
      recovering.tryComplete();
      return recovered;
    }
  }
}
