package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.TestDeployments;
import io.github.vertxdedup.impl.protocol.LocalRequest;
import io.github.vertxdedup.impl.protocol.PartitionRouting;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.junit5.VertxExtension;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The router forwards local-codec requests like JSON ones, by the routing mode's field, and refuses local batches and
 * events the mode does not admit.
 */
@ExtendWith(VertxExtension.class)
class AddressRouterLocalTest {

  @Test
  void shouldRouteALocalRequestToTheOwningPartition(Vertx vertx) throws Exception {
    DedupOptions options = new DedupOptions().setWindowMs(60_000).setPartitions(4);
    TestDeployments.deployService(vertx, new ManualClock(0), options);
    PartitionRouting routing = new PartitionRouting(options);
    for (String id : List.of("a", "b", "c", "d", "e")) {
      Message<DedupResult> reply = await(vertx.eventBus()
          .request("dedup", LocalRequest.single(DedupAction.CHECK, new DedupEvent(id))));
      assertThat(reply.body().verdict()).isEqualTo(DedupVerdict.ACCEPTED);
      assertThat(reply.body().partition()).isEqualTo(routing.partitionOf(id, null));
    }
    assertThatThrownBy(() -> await(vertx.eventBus()
        .request("dedup", LocalRequest.batch(DedupAction.CHECK_BATCH, List.of(new DedupEvent("a"))))))
        .isInstanceOfSatisfying(ReplyException.class, e -> {
          assertThat(e.failureCode()).isEqualTo(400);
          assertThat(e.getMessage()).contains("must be sent to a partition address");
        });
    assertThatThrownBy(() -> await(vertx.eventBus()
        .request("dedup", LocalRequest.single(DedupAction.CHECK, new DedupEvent("f").setKey("order-1")))))
        .isInstanceOfSatisfying(ReplyException.class, e -> {
          assertThat(e.failureCode()).isEqualTo(400);
          assertThat(e.getMessage()).startsWith("key is not accepted");
        });
  }

  @Test
  void shouldRouteALocalRequestByItsKeyWhenTheServiceRoutesByKey(Vertx vertx) throws Exception {
    DedupOptions options = new DedupOptions().setWindowMs(60_000).setPartitions(4).setRouteByKey(true);
    TestDeployments.deployService(vertx, new ManualClock(0), options);
    PartitionRouting routing = new PartitionRouting(options);
    Set<Integer> partitions = new HashSet<>();
    for (int i = 0; i < 40; i++) {
      String key = "order-" + i;
      Message<DedupResult> first = await(vertx.eventBus()
          .request("dedup", LocalRequest.single(DedupAction.CHECK, new DedupEvent("a-" + i).setKey(key))));
      assertThat(first.body().verdict()).isEqualTo(DedupVerdict.ACCEPTED);
      assertThat(first.body().partition()).isEqualTo(routing.partitionOf("any id", key));
      partitions.add(first.body().partition());
      Message<DedupResult> second = await(vertx.eventBus()
          .request("dedup", LocalRequest.single(DedupAction.CHECK, new DedupEvent("b-" + i).setKey(key))));
      assertThat(second.body().verdict()).isEqualTo(DedupVerdict.DUPLICATE);
      DedupEvent keyless = new DedupEvent("a-" + i);
      assertThatThrownBy(() -> await(vertx.eventBus()
          .request("dedup", LocalRequest.single(DedupAction.CHECK, keyless))))
          .isInstanceOfSatisfying(ReplyException.class, e -> {
            assertThat(e.failureCode()).isEqualTo(400);
            assertThat(e.getMessage()).startsWith("key is required");
          });
    }
    assertThat(partitions).containsExactlyInAnyOrder(0, 1, 2, 3);
  }

  private static <T> T await(Future<T> f) throws Exception {
    try {
      return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw (Exception) e.getCause();
    }
  }
}
