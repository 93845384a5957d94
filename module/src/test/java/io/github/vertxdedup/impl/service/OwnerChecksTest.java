package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.TestFutures;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Counter;
import io.vertx.core.shareddata.SharedData;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The owner's periodic check ({@link OwnerChecks}) when the cluster moves between its steps: the epoch counter is read
 * below the owner's epoch (the cluster lost it), and before the check puts it back by compare-and-set another owner
 * takes the partition over. The put-back must fail and the owner step down, its lease not extended. The cluster's
 * shared data is the instance's own, with a step run between a counter read and its answer ({@link SteppedSharedData}).
 */
@ExtendWith(VertxExtension.class)
class OwnerChecksTest {

  private static final String NAME = "dedup.0";
  private static final String COUNTER = "io.github.vertxdedup.epoch." + NAME;

  private Vertx vertx;
  private Context context;
  private final ManualPartitionTimer timer = new ManualPartitionTimer();
  private final AtomicLong leaseClock = new AtomicLong(1_000);
  private final DedupOptions options = new DedupOptions().setWindowMs(60_000).setOwnerLeaseMs(10_000)
      .setOwnerCheckMs(2_000).validate();
  private final CompletableFuture<String> failed = new CompletableFuture<>();
  private final CompletableFuture<Void> confirmed = new CompletableFuture<>();

  @BeforeEach
  void setUp(Vertx vertx) {
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
  }

  @Test
  void shouldStepDownWhenTheCounterChangesBetweenItsReadAndItsPutBack() {
    counterSetTo(1); // the cluster lost the counter of this owner's epoch 3: it reads 1
    OwnerTerm term = new OwnerTerm(3, 2, true, 0, Long.MIN_VALUE, "test", leaseClock::get);
    // Between the check's read and its compare-and-set, another owner takes the partition over: epoch 4.
    OwnerChecks checks = checks(read -> vertx.sharedData().getCounter(COUNTER).compose(c -> c.compareAndSet(read, 4)),
        term);

    scheduleAndFire(checks, term);

    String why = TestFutures.await(Future.fromCompletionStage(failed), 10);
    assertThat(why).isEqualTo("the epoch counter went back to 1 and could not be put back to 3: it changed meanwhile");
    assertThat(confirmed).isNotDone();
    assertThat(term.leaseEndMs()).as("the lease, never confirmed").isEqualTo(Long.MIN_VALUE);
    assertThat(counter()).as("the newer owner's epoch, left as it is").isEqualTo(4);
  }

  @Test
  void shouldPutTheCounterBackWhenNothingChangesMeanwhile() {
    counterSetTo(1);
    OwnerTerm term = new OwnerTerm(3, 2, true, 0, Long.MIN_VALUE, "test", leaseClock::get);
    OwnerChecks checks = checks(read -> Future.succeededFuture(), term);

    scheduleAndFire(checks, term);

    TestFutures.await(Future.fromCompletionStage(confirmed), 10);
    assertThat(failed).isNotDone();
    assertThat(term.leaseEndMs()).as("the lease, from the check's asking").isEqualTo(1_000 + 10_000);
    assertThat(counter()).isEqualTo(3);
  }

  /** The checks of {@code term}, on shared data that runs {@code between} after each counter read. */
  private OwnerChecks checks(Function<Long, Future<?>> between, OwnerTerm term) {
    SharedData data = SteppedSharedData.counterReads(vertx.sharedData(), between);
    return new OwnerChecks(NAME, options, timer, leaseClock::get, new OwnerLock(data, NAME),
        new OwnerChecks.Owner() {
          @Override
          public boolean current(OwnerTerm t) {
            return t == term && !t.revoked();
          }

          @Override
          public void checkFailed(OwnerTerm t, String why) {
            failed.complete(why);
          }

          @Override
          public void confirmed(OwnerTerm t) {
            confirmed.complete(null);
          }
        });
  }

  /** Schedules the term's next check on the context, as a takeover does, and fires its timer. */
  private void scheduleAndFire(OwnerChecks checks, OwnerTerm term) {
    CompletableFuture<Void> scheduled = new CompletableFuture<>();
    context.runOnContext(v -> {
      checks.schedule(term, leaseClock.get() - options.getOwnerCheckMs());
      scheduled.complete(null);
    });
    TestFutures.await(Future.fromCompletionStage(scheduled), 10);
    assertThat(timer.fireNext()).as("the check's delay, due at once").isEqualTo(1);
  }

  private void counterSetTo(long value) {
    TestFutures.await(vertx.sharedData().getCounter(COUNTER).compose(c -> c.get()
        .compose(now -> c.compareAndSet(now, value))), 10);
    assertThat(counter()).isEqualTo(value);
  }

  private long counter() {
    return TestFutures.<Long>await(vertx.sharedData().getCounter(COUNTER).compose(Counter::get), 10);
  }
}
