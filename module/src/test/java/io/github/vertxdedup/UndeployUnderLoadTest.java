package io.github.vertxdedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.time.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Undeploying a journaled service while requests reach its router: every request is answered or failed at once, none
 * waits out its timeout. The undeploy is held (a test seam in {@link DedupVerticle#stop()}) at the point where
 * requests used to be lost: every partition has stopped, the router still routes, and its stop is about to close
 * the verticle's context, which removes the reply handlers of the requests it forwarded.
 */
@ExtendWith(VertxExtension.class)
class UndeployUnderLoadTest {

  private static final long T0 = 1_700_000_000_000L;
  /** The callers' timeout; a request answered only by it was lost. */
  private static final long TIMEOUT_MS = 5_000;
  private static final int REQUESTS = 20;

  @TempDir
  Path journalDir;

  private final ManualClock clock = new ManualClock(T0);

  @Test
  void shouldAnswerEveryRoutedRequestAtOnceWhenTheServiceStopsBeforeItsPartitionAnswered(Vertx vertx) {
    DedupOptions options = new DedupOptions().setWindowMs(60_000).setBucketMs(1_000).setPartitions(2)
        .setJournalDir(journalDir.toString());
    DedupVerticle verticle = new DedupVerticle(clock).setMeterRegistry(new SimpleMeterRegistry());
    String deployment = TestDeployments.deployService(vertx, verticle, options);
    Promise<Void> held = Promise.promise();
    Promise<Void> release = Promise.promise();
    verticle.stopHold(() -> {
      held.complete();
      return release.future();
    });
    Future<Void> undeployed = vertx.undeploy(deployment);
    await(held.future());

    // Both partitions have stopped. What reaches partition 0's address now is parked by a stand-in and answered only
    // after the service has stopped: in production, the event bus's answer to a request that was on its way to the
    // partition's consumer when the partition unregistered it, delivered after the router's stop.
    List<Message<Object>> parked = new CopyOnWriteArrayList<>();
    Promise<Void> allParked = Promise.promise();
    MessageConsumer<Object> lateAnswers = vertx.eventBus().consumer("dedup.0", msg -> {
      parked.add(msg);
      if (parked.size() == REQUESTS) {
        allParked.complete();
      }
    });
    await(lateAnswers.completion());

    DedupClient routing = DedupClient.create(vertx, options);
    List<Future<Message<Object>>> toParked = new ArrayList<>();
    List<Future<Message<Object>>> toStopped = new ArrayList<>();
    for (int i = 0; toParked.size() < REQUESTS || toStopped.size() < REQUESTS; i++) {
      String id = "evt-" + i;
      List<Future<Message<Object>>> list = routing.partitionOf(new DedupEvent(id)) == 0 ? toParked : toStopped;
      if (list.size() < REQUESTS) {
        list.add(check(vertx, id));
      }
    }
    // A request for a partition that has stopped is refused at once: nothing listens at its address.
    for (Future<Message<Object>> f : toStopped) {
      ReplyException e = failure(f);
      assertThat(e.failureType()).as(e.getMessage()).isEqualTo(ReplyFailure.RECIPIENT_FAILURE);
      assertThat(e.failureCode()).isEqualTo(503);
    }
    await(allParked.future());
    assertThat(toParked).noneMatch(Future::isComplete);

    release.complete();
    // The router's stop answers what still waits for a partition; none of these times out.
    for (Future<Message<Object>> f : toParked) {
      ReplyException e = failure(f);
      assertThat(e.failureType()).as(e.getMessage()).isEqualTo(ReplyFailure.RECIPIENT_FAILURE);
      assertThat(e.failureCode()).isEqualTo(503);
      assertThat(e.getMessage()).contains("stopping");
    }
    await(undeployed);
    // The partition's late answers reach nobody, and change nothing.
    parked.forEach(m -> m.fail(503, "late"));
    await(lateAnswers.unregister());
    ReplyException after = failure(check(vertx, "evt-after"));
    assertThat(after.failureType()).isEqualTo(ReplyFailure.NO_HANDLERS);
  }

  private static Future<Message<Object>> check(Vertx vertx, String id) {
    return vertx.eventBus().request("dedup", new JsonObject().put("id", id),
        new DeliveryOptions().addHeader(DedupAction.HEADER, "check").setSendTimeout(TIMEOUT_MS));
  }

  private static <T> T await(Future<T> f) {
    return TestFutures.await(f, 10);
  }

  private static ReplyException failure(Future<?> f) {
    return TestFutures.replyFailure(f, 10);
  }
}
