package io.github.vertxdedup.cluster;

import io.github.vertxdedup.kafka.testkit.LoopbackCluster;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.io.InputStream;
import java.util.concurrent.TimeUnit;

/**
 * The member {@link ClusterMemberKillTest} kills: joins a loopback cluster ({@link LoopbackCluster}), registers a
 * consumer of one address that takes every request and never answers (an owner that dies before it answers), and
 * prints {@code ready} once the registration is in the cluster, then {@code arrived <id>} per request. Runs until
 * its standard input ends or it is killed.
 */
public final class SilentMemberChild {

  private SilentMemberChild() {}

  /**
   * Runs the child.
   *
   * @param args cluster name, address
   * @throws Exception on any failure (the driver sees the exit code and the standard error)
   */
  public static void main(String[] args) throws Exception {
    Vertx vertx = LoopbackCluster.member(args[0]).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    MessageConsumer<Object> consumer = vertx.eventBus().consumer(args[1], msg -> {
      Object body = msg.body();
      System.out.println("arrived " + (body instanceof JsonObject json ? json.getString("id") : body));
      System.out.flush();
    });
    consumer.completion().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    System.out.println("ready");
    System.out.flush();
    InputStream in = System.in;
    while (in.read() >= 0) {
      // wait for the driver to close our input
    }
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
