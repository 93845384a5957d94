package io.github.vertxdedup.kafka.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LoopbackClusterTest {

  @Test
  void shouldCarryARequestBetweenTwoMembersOfOneClusterAndNotToAnother() throws Exception {
    String name = LoopbackCluster.newClusterName();
    Vertx a = await(LoopbackCluster.member(name));
    Vertx b = await(LoopbackCluster.member(name));
    Vertx stranger = await(LoopbackCluster.member(LoopbackCluster.newClusterName()));
    try {
      assertThat(a.isClustered()).isTrue();
      await(b.eventBus().<JsonObject>consumer("echo", m -> m.reply(m.body().put("by", "b"))).completion());
      JsonObject reply = await(a.eventBus().<JsonObject>request("echo", new JsonObject().put("n", 1))).body();
      assertThat(reply).isEqualTo(new JsonObject().put("n", 1).put("by", "b"));
      // A member of another cluster does not see b's consumer.
      Throwable refused = stranger.eventBus().request("echo", new JsonObject()).toCompletionStage()
          .toCompletableFuture().handle((m, e) -> e).get(30, TimeUnit.SECONDS);
      assertThat(refused).isNotNull().hasMessageContaining("No handlers");
    } finally {
      await(Future.join(a.close(), b.close(), stranger.close()));
    }
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }
}
