package io.github.vertxdedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A service of four partitions that routes by business key ({@code routeByKey}): every copy of an event reaches the
 * partition of its key, through the router and through the client, and an event without a key is refused.
 */
class RouteByKeyTest extends ServiceTestSupport {

  private static final int PARTITIONS = 4;

  @Override
  DedupOptions options() {
    return super.options().setPartitions(PARTITIONS).setRouteByKey(true);
  }

  private DedupClient client(DedupClient.Transport transport) {
    return DedupClient.create(vertx, options(), transport);
  }

  @Test
  void shouldAnswerDuplicateForTheSameKeyUnderAnotherIdOnEveryPartitionThroughTheRouter() {
    DedupClient client = client(DedupClient.Transport.JSON);
    Set<Integer> partitions = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      String key = "order-" + i;
      JsonObject first = (JsonObject) send("dedup", "check", id("first-" + i).put("key", key));
      assertThat(first.getString("verdict")).as(key).isEqualTo("ACCEPTED");
      assertThat(first.getInteger("partition")).isEqualTo(client.partitionOf(new DedupEvent("any").setKey(key)));
      partitions.add(first.getInteger("partition"));
      JsonObject republished = (JsonObject) send("dedup", "check", id("second-" + i).put("key", key));
      assertThat(republished.getString("verdict")).as(key).isEqualTo("DUPLICATE");
      assertThat(republished.getInteger("partition")).isEqualTo(first.getInteger("partition"));
    }
    assertThat(partitions).containsExactlyInAnyOrder(0, 1, 2, 3);
  }

  @ParameterizedTest
  @EnumSource(DedupClient.Transport.class)
  void shouldAnswerDuplicateForTheSameKeyUnderAnotherIdOnEveryPartitionThroughTheClient(
      DedupClient.Transport transport) {
    DedupClient client = client(transport);
    Set<Integer> partitions = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      String key = "order-" + i;
      DedupResult first = await(client.check(new DedupEvent("first-" + i).setKey(key)));
      assertThat(first.verdict()).as(key).isEqualTo(DedupVerdict.ACCEPTED);
      partitions.add(first.partition());
      DedupResult republished = await(client.check(new DedupEvent("second-" + i).setKey(key)));
      assertThat(republished.verdict()).as(key).isEqualTo(DedupVerdict.DUPLICATE);
      assertThat(republished.partition()).isEqualTo(first.partition());
      // The id is deduplicated as well, inside the key's partition.
      assertThat(await(client.check(new DedupEvent("first-" + i).setKey(key))).verdict())
          .isEqualTo(DedupVerdict.DUPLICATE);
    }
    assertThat(partitions).containsExactlyInAnyOrder(0, 1, 2, 3);
  }

  @Test
  void shouldRefuseACopyWithoutAKeyThroughTheRouterSoThatNoCopyIsSplit() {
    for (int i = 0; i < 40; i++) {
      String id = "evt-" + i;
      assertThat(((JsonObject) send("dedup", "check", id(id).put("key", "order-" + i))).getString("verdict"))
          .isEqualTo("ACCEPTED");
      assertFailure(failure("dedup", "check", id(id)), 400, "key is required", "routeByKey=true");
      assertFailure(failure("dedup", "claim", id(id)), 400, "key is required");
      assertFailure(failure("dedup", "lookup", id(id)), 400, "key is required");
      assertFailure(failure("dedup", "check", id(id).put("key", "")), 400, "key must be 1..1024 UTF-8 bytes");
      assertFailure(failure("dedup", "check", id(id).putNull("key")), 400, "key is required");
      assertThat(((JsonObject) send("dedup", "check", id(id).put("key", "order-" + i))).getString("verdict"))
          .isEqualTo("DUPLICATE");
    }
    // Nothing was recorded for the refused copies: the partitions accepted 40 events and hold their ids and keys.
    long accepted = 0;
    long held = 0;
    for (Object p : ((JsonObject) send("dedup", "stats", null)).getJsonArray("partitions")) {
      accepted += ((JsonObject) p).getLong("accepted");
      held += ((JsonObject) p).getLong("held");
    }
    assertThat(accepted).isEqualTo(40);
    assertThat(held).isEqualTo(80);
  }

  @ParameterizedTest
  @EnumSource(DedupClient.Transport.class)
  void shouldRefuseACopyWithoutAKeyThroughTheClientSoThatNoCopyIsSplit(DedupClient.Transport transport) {
    DedupClient client = client(transport);
    for (int i = 0; i < 40; i++) {
      DedupEvent keyed = new DedupEvent("evt-" + i).setKey("order-" + i);
      assertThat(await(client.check(keyed)).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
      for (DedupEvent keyless : List.of(new DedupEvent("evt-" + i), new DedupEvent("evt-" + i).setKey(""))) {
        assertThatThrownBy(() -> await(client.check(keyless)))
            .isInstanceOfSatisfying(ReplyException.class, e -> {
              assertThat(e.failureCode()).isEqualTo(DedupFailure.BAD_REQUEST);
              assertThat(e.getMessage()).startsWith("key ");
            });
      }
      DedupEvent keylessLookup = new DedupEvent("evt-" + i);
      assertThatThrownBy(() -> await(client.lookup(keylessLookup)))
          .isInstanceOfSatisfying(ReplyException.class, e -> assertThat(e.getMessage()).contains("key is required"));
      assertThat(await(client.check(new DedupEvent("evt-" + i).setKey("order-" + i))).verdict())
          .isEqualTo(DedupVerdict.DUPLICATE);
    }
  }

  @ParameterizedTest
  @EnumSource(DedupClient.Transport.class)
  void shouldRefuseABatchWithAKeylessEventNamingItsKey(DedupClient.Transport transport) {
    DedupClient client = client(transport);
    List<DedupEvent> batch = keyedEventsOfPartition(client, 3, 3);
    batch.add(1, new DedupEvent("no-key"));
    assertThatThrownBy(() -> await(client.checkBatch(batch)))
        .isInstanceOfSatisfying(ReplyException.class, e -> {
          assertThat(e.failureCode()).isEqualTo(DedupFailure.BAD_REQUEST);
          assertThat(e.getMessage()).contains("events[1].key is required");
        });
    batch.remove(1);
    assertThat(await(client.checkBatch(batch))).allSatisfy(r -> {
      assertThat(r.result().verdict()).isEqualTo(DedupVerdict.ACCEPTED);
      assertThat(r.result().partition()).isEqualTo(3);
    });
  }

  @ParameterizedTest
  @EnumSource(DedupClient.Transport.class)
  void shouldClaimCommitReleaseAndLookUpByKey(DedupClient.Transport transport) {
    DedupClient client = client(transport);
    DedupEvent a = new DedupEvent("a").setKey("order-1").setPayloadHash("h");
    DedupResult claim = await(client.claim(a));
    assertThat(claim.verdict()).isEqualTo(DedupVerdict.ACCEPTED);
    assertThat(claim.claimToken()).isNotNull();
    assertThat(await(client.check(new DedupEvent("b").setKey("order-1"))).verdict())
        .isEqualTo(DedupVerdict.IN_FLIGHT);
    assertThat(await(client.lookup(new DedupEvent("a").setKey("order-1"))).state())
        .isEqualTo(EntryState.IN_FLIGHT);
    DedupEvent commit = new DedupEvent("a").setKey("order-1").setClaimToken(claim.claimToken());
    assertThat(await(client.commit(commit)).verdict()).isEqualTo(DedupVerdict.COMMITTED);
    DedupLookup known = await(client.lookup(new DedupEvent("a").setKey("order-1")));
    assertThat(known.known()).isTrue();
    assertThat(known.state()).isEqualTo(EntryState.REMEMBERED);
    assertThat(known.firstSeenMs()).isEqualTo(T0);

    DedupResult other = await(client.claim(new DedupEvent("c").setKey("order-2")));
    DedupEvent release = new DedupEvent("c").setKey("order-2").setClaimToken(other.claimToken());
    assertThat(await(client.release(release)).verdict()).isEqualTo(DedupVerdict.RELEASED);
    assertThat(await(client.check(new DedupEvent("c").setKey("order-2"))).verdict())
        .isEqualTo(DedupVerdict.ACCEPTED);
  }

  @Test
  void shouldRouteByKeyLikeTheClientAndRefuseAKeyAtAPartitionThatDoesNotOwnIt() {
    DedupClient client = client(DedupClient.Transport.JSON);
    DedupEvent e = keyedEventsOfPartition(client, 2, 1).get(0);
    // The id plays no part: the same key under any id belongs to partition 2.
    assertThat(client.partitionOf(new DedupEvent("another-id").setKey(e.getKey()))).isEqualTo(2);
    assertThat(client.partitionOf(new DedupEvent().setKey(e.getKey()))).isEqualTo(2);
    ReplyException wrong = failure("dedup.0", "check", e.toJson());
    assertFailure(wrong, 400, "key belongs to partition 2, not to partition 0");
    JsonObject routed = (JsonObject) send("dedup", "check", e.toJson());
    assertThat(routed.getInteger("partition")).isEqualTo(2);
    assertThat(routed.getString("verdict")).isEqualTo("ACCEPTED");
  }

  private static List<DedupEvent> keyedEventsOfPartition(DedupClient client, int partition, int n) {
    List<DedupEvent> out = new ArrayList<>();
    for (int i = 0; out.size() < n; i++) {
      DedupEvent e = new DedupEvent("p" + partition + "-" + i).setKey("key-" + partition + "-" + i);
      if (client.partitionOf(e) == partition) {
        out.add(e);
      }
    }
    return out;
  }
}
