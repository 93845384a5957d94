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
 * The Java client over both transports, and routing by id across four partitions (the default); routing by key is
 * {@link RouteByKeyTest}.
 */
class DedupClientTest extends ServiceTestSupport {

  private static final int PARTITIONS = 4;

  @Override
  DedupOptions options() {
    return super.options().setPartitions(PARTITIONS);
  }

  private DedupClient client(DedupClient.Transport transport) {
    return DedupClient.create(vertx, options(), transport);
  }

  @ParameterizedTest
  @EnumSource(DedupClient.Transport.class)
  void shouldCheckAndAnswerDuplicatesWithTimes(DedupClient.Transport transport) {
    DedupClient client = client(transport);
    DedupResult first = await(client.check("a"));
    assertThat(first.verdict()).isEqualTo(DedupVerdict.ACCEPTED);
    assertThat(first.partition()).isEqualTo(client.partitionOf(new DedupEvent("a")));
    assertThat(first.hasTimes()).isFalse();
    clock.advanceMs(700);
    DedupResult dup = await(client.check(new DedupEvent("a")));
    assertThat(dup.verdict()).isEqualTo(DedupVerdict.DUPLICATE);
    assertThat(dup.firstSeenMs()).isEqualTo(T0);
    assertThat(dup.ageMs()).isEqualTo(700);
    assertThat(dup.expiresAtMs()).isEqualTo(T0 + WINDOW_MS);
  }

  @ParameterizedTest
  @EnumSource(DedupClient.Transport.class)
  void shouldClaimCommitReleaseAndLookUp(DedupClient.Transport transport) {
    DedupClient client = client(transport);
    DedupEvent a = new DedupEvent("a").setPayloadHash("h");
    DedupResult claim = await(client.claim(a));
    assertThat(claim.verdict()).isEqualTo(DedupVerdict.ACCEPTED);
    assertThat(claim.claimToken()).isNotNull();
    assertThat(await(client.check(new DedupEvent("a"))).verdict()).isEqualTo(DedupVerdict.IN_FLIGHT);
    assertThat(await(client.lookup(new DedupEvent("a"))).state()).isEqualTo(EntryState.IN_FLIGHT);
    DedupEvent commit = new DedupEvent("a").setClaimToken(claim.claimToken());
    assertThat(await(client.commit(commit)).verdict()).isEqualTo(DedupVerdict.COMMITTED);
    DedupLookup known = await(client.lookup(new DedupEvent("a")));
    assertThat(known.known()).isTrue();
    assertThat(known.state()).isEqualTo(EntryState.REMEMBERED);
    assertThat(known.firstSeenMs()).isEqualTo(T0);

    DedupResult other = await(client.claim(new DedupEvent("c")));
    DedupEvent release = new DedupEvent("c").setClaimToken(other.claimToken());
    assertThat(await(client.release(release)).verdict()).isEqualTo(DedupVerdict.RELEASED);
    assertThat(await(client.check("c")).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
  }

  @ParameterizedTest
  @EnumSource(DedupClient.Transport.class)
  void shouldPassFailureCodesThrough(DedupClient.Transport transport) {
    DedupClient client = client(transport);
    assertThatThrownBy(() -> await(client.commit(new DedupEvent("x").setClaimToken("t"))))
        .isInstanceOfSatisfying(ReplyException.class, e -> {
          assertThat(e.failureCode()).isEqualTo(DedupFailure.STATE_CONFLICT);
          assertThat(e.getMessage()).contains("not claimed");
        });
    assertThatThrownBy(() -> await(client.check(new DedupEvent("x").setLeaseMs(5L))))
        .isInstanceOfSatisfying(ReplyException.class, e -> {
          assertThat(e.failureCode()).isEqualTo(DedupFailure.BAD_REQUEST);
          assertThat(e.getMessage()).contains("leaseMs is not allowed with action check");
        });
    assertThatThrownBy(() -> await(client.check(new DedupEvent())))
        .isInstanceOfSatisfying(ReplyException.class, e -> assertThat(e.getMessage()).contains("id is required"));
  }

  @ParameterizedTest
  @EnumSource(DedupClient.Transport.class)
  void shouldSendABatchOfOnePartitionAndAnswerInOrder(DedupClient.Transport transport) {
    DedupClient client = client(transport);
    List<DedupEvent> batch = eventsOfPartition(client, 2, 5);
    batch.add(new DedupEvent(batch.get(0).getId()));
    List<DedupResult> results = results(await(client.checkBatch(batch)));
    assertThat(results).hasSize(6);
    assertThat(results.subList(0, 5)).allSatisfy(r -> {
      assertThat(r.verdict()).isEqualTo(DedupVerdict.ACCEPTED);
      assertThat(r.partition()).isEqualTo(2);
    });
    assertThat(results.get(5).verdict()).isEqualTo(DedupVerdict.DUPLICATE);

    List<DedupResult> claims = results(await(client.claimBatch(eventsOfPartition(client, 1, 2))));
    assertThat(claims).extracting(DedupResult::verdict).containsOnly(DedupVerdict.ACCEPTED);
    assertThat(claims).allSatisfy(r -> assertThat(r.claimToken()).isNotNull());
  }

  @ParameterizedTest
  @EnumSource(DedupClient.Transport.class)
  void shouldFailTheFutureOfANullEventOrBatchWithA400(DedupClient.Transport transport) {
    DedupClient client = client(transport);
    List<DedupEvent> withNull = eventsOfPartition(client, 2, 2);
    withNull.add(1, null);
    List<java.util.function.Supplier<io.vertx.core.Future<?>>> calls = List.of(
        () -> client.check((DedupEvent) null), () -> client.check((String) null), () -> client.claim(null),
        () -> client.commit(null), () -> client.release(null),
        () -> client.lookup(null), () -> client.checkBatch(null), () -> client.claimBatch(null),
        () -> client.commitBatch(null), () -> client.checkBatch(withNull));
    for (java.util.function.Supplier<io.vertx.core.Future<?>> call : calls) {
      io.vertx.core.Future<?> future = call.get();
      assertThatThrownBy(() -> await(future)).isInstanceOfSatisfying(ReplyException.class,
          e -> assertThat(e.failureCode()).isEqualTo(DedupFailure.BAD_REQUEST));
    }
    assertThat(await(client.check(withNull.get(0))).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
  }

  /** @return the result of each element, which must all be decided */
  private static List<DedupResult> results(List<DedupBatchResult> elements) {
    assertThat(elements).allSatisfy(e -> assertThat(e.succeeded()).as("%s", e).isTrue());
    return elements.stream().map(DedupBatchResult::result).toList();
  }

  @Test
  void shouldRefuseABatchThatSpansPartitions() {
    DedupClient client = client(DedupClient.Transport.LOCAL);
    List<DedupEvent> mixed = eventsOfPartition(client, 0, 1);
    mixed.addAll(eventsOfPartition(client, 3, 1));
    assertThatThrownBy(() -> await(client.checkBatch(mixed)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("events[1] belongs to partition 3");
  }

  @Test
  void shouldPassResultsByReferenceWithTheLocalCodec() {
    DedupClient client = client(DedupClient.Transport.LOCAL);
    List<DedupEvent> two = eventsOfPartition(client, 0, 2);
    DedupResult r = await(client.check(two.get(0)));
    // The JSON path would rebuild a result; the local one hands over the partition's own (shared) object.
    assertThat(r).isSameAs(await(client.check(two.get(1))));
  }

  @Test
  void shouldRouteByIdLikeTheClientAndSpreadOverPartitions() {
    DedupClient client = client(DedupClient.Transport.JSON);
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < 100; i++) {
      String id = "evt-" + i;
      JsonObject reply = (JsonObject) send("dedup", "check", id(id));
      assertThat(reply.getInteger("partition")).isEqualTo(client.partitionOf(new DedupEvent(id)));
      seen.add(reply.getInteger("partition"));
    }
    assertThat(seen).containsExactlyInAnyOrder(0, 1, 2, 3);
  }

  @Test
  void shouldRefuseAKeyThroughTheRouterSoThatNoCopyIsSplit() {
    for (int i = 0; i < 40; i++) {
      String id = "evt-" + i;
      // Routed by id, a keyed copy and a keyless one would meet, but a copy under another id with the same key would
      // not: the key is refused rather than checked in one partition only.
      assertFailure(failure("dedup", "check", id(id).put("key", "order-" + i)), 400,
          "key is not accepted", "4 partitions", "routeByKey=true");
      assertFailure(failure("dedup", "claim", id(id).put("key", "order-" + i)), 400, "key is not accepted");
      assertFailure(failure("dedup", "lookup", id(id).put("key", "order-" + i)), 400, "key is not accepted");
      assertThat(((JsonObject) send("dedup", "check", id(id))).getString("verdict")).isEqualTo("ACCEPTED");
      assertThat(((JsonObject) send("dedup", "check", id(id))).getString("verdict")).isEqualTo("DUPLICATE");
    }
  }

  @ParameterizedTest
  @EnumSource(DedupClient.Transport.class)
  void shouldRefuseAKeyThroughTheClientSoThatNoCopyIsSplit(DedupClient.Transport transport) {
    DedupClient client = client(transport);
    for (int i = 0; i < 40; i++) {
      DedupEvent keyed = new DedupEvent("evt-" + i).setKey("order-" + i);
      assertThatThrownBy(() -> await(client.check(keyed)))
          .isInstanceOfSatisfying(ReplyException.class, e -> {
            assertThat(e.failureCode()).isEqualTo(DedupFailure.BAD_REQUEST);
            assertThat(e.getMessage()).contains("key is not accepted", "routeByKey=true");
          });
      assertThat(await(client.check(new DedupEvent("evt-" + i))).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
      DedupEvent sameKey = new DedupEvent("other-" + i).setKey("order-" + i);
      assertThatThrownBy(() -> await(client.check(sameKey)))
          .isInstanceOfSatisfying(ReplyException.class,
              e -> assertThat(e.getMessage()).contains("key is not accepted"));
    }
    List<DedupEvent> batch = eventsOfPartition(client, 1, 3);
    batch.get(2).setKey("order-x");
    assertThatThrownBy(() -> await(client.checkBatch(batch)))
        .isInstanceOfSatisfying(ReplyException.class,
            e -> assertThat(e.getMessage()).contains("events[2].key is not accepted"));
    batch.get(2).setKey(null);
    assertThat(await(client.checkBatch(batch))).extracting(r -> r.result().verdict())
        .containsOnly(DedupVerdict.ACCEPTED);
  }

  @Test
  void shouldRefuseAnEventSentToAPartitionThatDoesNotOwnIt() {
    DedupClient client = client(DedupClient.Transport.JSON);
    DedupEvent e = eventsOfPartition(client, 1, 1).get(0);
    ReplyException wrong = failure("dedup.0", "check", e.toJson());
    assertFailure(wrong, 400, "id belongs to partition 1, not to partition 0");
    assertThat(await(client.check(e)).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
  }

  @Test
  void shouldAnswerStatsOfEveryPartitionAtTheBaseAddress() {
    JsonObject all = (JsonObject) send("dedup", "stats", null);
    assertThat(all.getJsonArray("partitions")).hasSize(PARTITIONS);
    assertThat(await(client(DedupClient.Transport.LOCAL).stats(3)).getInteger("partition")).isEqualTo(3);
  }

  private static List<DedupEvent> eventsOfPartition(DedupClient client, int partition, int n) {
    List<DedupEvent> out = new ArrayList<>();
    for (int i = 0; out.size() < n; i++) {
      DedupEvent e = new DedupEvent("p" + partition + "-" + i);
      if (client.partitionOf(e) == partition) {
        out.add(e);
      }
    }
    return out;
  }
}
