package io.github.vertxdedup.kafka.impl;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * The context a {@link WrappedConsumer} keeps its state on (the one that called {@code subscribe}), and the way onto
 * it: the Vert.x consumer calls its handlers, and completes its futures, on the context it was created on, which may
 * be another one; the owners wake it from their windows' event loops. Work handed over from one thread keeps its order.
 * Also converts between the Vert.x client's topic-partitions and Kafka's, which the partition owners use.
 *
 * <p>Thread-safe.
 */
final class WrappedContext {

  private final Context context;

  /** @param context the wrapped consumer's context */
  WrappedContext(Context context) {
    this.context = context;
  }

  /** @return the context */
  Context context() {
    return context;
  }

  /** Runs {@code r} on the context: at once if called on it, else later. Any thread. */
  void execute(Runnable r) {
    if (Vertx.currentContext() == context) {
      r.run();
    } else {
      context.runOnContext(v -> r.run());
    }
  }

  /**
   * @param f a future completed on any thread
   * @return a future completed with {@code f}'s outcome on the context, so its continuations run there
   */
  <T> Future<T> here(Future<T> f) {
    Promise<T> p = Promise.promise();
    f.onComplete(ar -> execute(() -> p.handle(ar)));
    return p.future();
  }

  /** @return the Vert.x client's form of a topic-partition */
  static io.vertx.kafka.client.common.TopicPartition vertx(TopicPartition tp) {
    return new io.vertx.kafka.client.common.TopicPartition(tp.topic(), tp.partition());
  }

  /** @return the Vert.x client's form of topic-partitions */
  static Set<io.vertx.kafka.client.common.TopicPartition> vertx(List<TopicPartition> tps) {
    Set<io.vertx.kafka.client.common.TopicPartition> s = new HashSet<>();
    for (TopicPartition tp : tps) {
      s.add(vertx(tp));
    }
    return s;
  }

  /** @return Kafka's form of the Vert.x client's topic-partitions */
  static List<TopicPartition> kafka(Collection<io.vertx.kafka.client.common.TopicPartition> tps) {
    return tps.stream().map(tp -> new TopicPartition(tp.getTopic(), tp.getPartition())).toList();
  }
}
