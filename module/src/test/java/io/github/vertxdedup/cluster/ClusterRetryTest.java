package io.github.vertxdedup.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.EntryState;
import io.github.vertxdedup.TestDeployments;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.kafka.testkit.LoopbackCluster;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The client's failure path across two cluster members: a request that found no owner is sent again until one
 * registers (within the request timeout); one that was handed to an owner and not answered fails with
 * {@link DedupFailure#OUTCOME_UNKNOWN} and is never sent again. Real time: the waits are the event bus's timeouts and
 * the client's backoff timers, across members.
 */
class ClusterRetryTest {

  private static final long T0 = 1_700_000_000_000L;

  private static Vertx owner;
  private static Vertx caller;

  @BeforeAll
  static void startMembers() {
    String cluster = LoopbackCluster.newClusterName();
    owner = TestFutures.await(LoopbackCluster.member(cluster), 60);
    caller = TestFutures.await(LoopbackCluster.member(cluster), 60);
  }

  @AfterAll
  static void close() {
    TestFutures.await(Future.join(owner.close(), caller.close()), 60);
  }

  @Test
  void shouldSendAgainARequestThatFoundNoOwnerAndAnswerItOnceTheServiceIsDeployed() throws Exception {
    DedupOptions options = new DedupOptions().setAddress("late").setPartitions(2).setWindowMs(60_000)
        .setRequestTimeoutMs(30_000);
    DedupClient client = DedupClient.create(caller, options);
    Future<DedupResult> check = client.check("first");
    // Without the retry the request would fail at once with NO_HANDLERS: nothing is registered at late.<p> yet.
    Thread.sleep(500);
    assertThat(check.isComplete()).as("still waiting for an owner: %s", check).isFalse();

    TestDeployments.deployService(owner, new ManualClock(T0), options);
    DedupResult result = TestFutures.await(check, 30);
    assertThat(result.verdict()).isEqualTo(DedupVerdict.ACCEPTED);
    assertThat(TestFutures.await(client.check("first"), 10).verdict()).isEqualTo(DedupVerdict.DUPLICATE);
    assertThat(TestFutures.await(client.lookup(new DedupEvent("first")), 10).state())
        .isEqualTo(EntryState.REMEMBERED);
    JsonObject stats = TestFutures.await(client.stats(client.partitionOf(new DedupEvent("first"))), 10);
    assertThat(stats.getLong("accepted")).as("decided once: %s", stats).isEqualTo(1L);
  }

  @Test
  void shouldFailWithUnavailableWhenNoOwnerRegistersBeforeTheDeadline() {
    DedupOptions options = new DedupOptions().setAddress("nobody").setWindowMs(60_000).setRequestTimeoutMs(300);
    long start = System.nanoTime();
    ReplyException e = TestFutures.replyFailure(DedupClient.create(caller, options).check("x"), 10);
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(e.failureCode()).as(e.getMessage()).isEqualTo(DedupFailure.UNAVAILABLE);
    assertThat(e.failureType()).isEqualTo(ReplyFailure.NO_HANDLERS);
    assertThat(e.getMessage()).contains("no owner of nobody.0", "requestTimeoutMs 300", "nothing recorded");
    assertThat(elapsedMs).as("gave up at the deadline").isBetween(200L, 3_000L);
  }

  @Test
  void shouldReportATimeoutAsOutcomeUnknownAndNeverSendTheRequestTwice() {
    // A consumer of the partition address on the other member that never answers: the owner took the request and
    // went silent.
    List<String> arrivals = new CopyOnWriteArrayList<>();
    Promise<Void> marker = Promise.promise();
    MessageConsumer<Object> silent = owner.eventBus().consumer("silent.0", msg -> {
      String id = msg.body() instanceof JsonObject json ? json.getString("id") : String.valueOf(msg.body());
      arrivals.add(id);
      if (id.equals("end")) {
        marker.tryComplete();
      }
    });
    TestFutures.await(silent.completion(), 20);

    DedupOptions options = new DedupOptions().setAddress("silent").setWindowMs(60_000).setRequestTimeoutMs(1_000);
    long start = System.nanoTime();
    ReplyException e = TestFutures.replyFailure(DedupClient.create(caller, options).check("once"), 20);
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(e.failureCode()).as(e.getMessage()).isEqualTo(DedupFailure.OUTCOME_UNKNOWN);
    assertThat(e.failureType()).isEqualTo(ReplyFailure.TIMEOUT);
    assertThat(e.getMessage()).contains("outcome unknown", "silent.0", "requestTimeoutMs 1000", "not sent again",
        "lookup");
    assertThat(elapsedMs).as("failed at the request timeout").isBetween(900L, 5_000L);

    // Messages from one member to another arrive in order: once the marker sent after the failure has arrived, a
    // second copy of the request would have too.
    caller.eventBus().send("silent.0", new JsonObject().put("id", "end"));
    TestFutures.await(marker.future(), 20);
    assertThat(arrivals).containsExactly("once", "end");
    TestFutures.await(silent.unregister(), 20);
  }
}
