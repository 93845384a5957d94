package io.github.vertxdedup.cluster;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.TestFutures;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * For the tests that watch the service's partitions move between members of a real cluster: raw wire requests to one
 * partition ({@code <address>.<p>}, JSON bodies with the action header, the cluster's wire form), and the members'
 * close. Test threads only: every call waits for its reply.
 */
final class ClusterPartitions {

  private ClusterPartitions() {}

  /**
   * @return the answer to a {@code check} of {@code id} at partition {@code p} of {@code address}, within 10 s
   * @throws ReplyException if the request fails
   */
  static JsonObject check(Vertx from, String address, int p, String id) {
    return (JsonObject) TestFutures.await(from.eventBus().request(address + "." + p, new JsonObject().put("id", id),
        action(DedupAction.CHECK)), 10).body();
  }

  /**
   * @return the partition's {@code stats}, within 2 s
   * @throws ReplyException if the request fails
   */
  static JsonObject stats(Vertx from, String address, int p) {
    return (JsonObject) TestFutures.await(from.eventBus().request(address + "." + p, null,
        action(DedupAction.STATS).setSendTimeout(2_000)), 10).body();
  }

  /**
   * @return the partition's {@code stats}, or null while no owner answers: no handler (nobody registered, or the
   *     event bus still sends to a member that is gone), no answer within 2 s, or 503 (recovering or fenced)
   */
  static JsonObject statsOrNull(Vertx from, String address, int p) {
    try {
      return stats(from, address, p);
    } catch (ReplyException e) {
      if (e.failureType() == ReplyFailure.NO_HANDLERS || e.failureType() == ReplyFailure.TIMEOUT
          || e.failureCode() == DedupFailure.UNAVAILABLE) {
        return null;
      }
      throw e;
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Sleeps between two polls of a partition; an interrupt fails the test. */
  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** Closes every member, within 30 s each; a member whose cluster manager was terminated may fail to leave. */
  static void closeMembers(List<Vertx> members) {
    for (Vertx m : members) {
      try {
        TestFutures.await(m.close(), 30);
      } catch (RuntimeException e) {
        // Gone either way.
      }
    }
  }

  private static DeliveryOptions action(DedupAction action) {
    return new DeliveryOptions().addHeader(DedupAction.HEADER, action.wireName());
  }
}
