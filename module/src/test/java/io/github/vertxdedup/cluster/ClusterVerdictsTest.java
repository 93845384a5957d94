package io.github.vertxdedup.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupLookup;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.TestDeployments;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.impl.protocol.LocalRequest;
import io.github.vertxdedup.kafka.testkit.LoopbackCluster;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The service on a three-member Vert.x cluster (Hazelcast on loopback, {@link LoopbackCluster}) answers every caller
 * on every member exactly as the same service answers in a Vert.x that is not clustered: the same event sequence is
 * played against both, and the expected answers are the single-member run's, not written by hand.
 *
 * <p>Callers, each with its own ids and on each member: {@link DedupClient#create(Vertx, DedupOptions)} (JSON in the
 * cluster, the local codec in the single-member run), raw JSON requests to the partition addresses, raw JSON requests
 * to the router at {@code <address>}, and (on the service's member only: the local codec does not cross members)
 * local-codec requests to the router, which forwards them as JSON in the cluster. The sequence covers check, claim,
 * commit and release, batches, lookup, stats, bad input (400 with its message), state conflicts (409) and limits
 * ({@code maxBatch}, {@code maxIdBytes}). The service runs on member 0 only; nothing here depends on which member
 * owns a partition. Both services run on a {@link ManualClock} at the same instant, so times compare exactly.
 */
class ClusterVerdictsTest {

  private static final long T0 = 1_700_000_000_000L;
  private static final int MEMBERS = 3;
  private static final DedupOptions OPTIONS = new DedupOptions().setAddress("verdicts").setPartitions(4)
      .setWindowMs(60_000).setBucketMs(1_000).setMaxBatch(5).setMaxIdBytes(32).setRequestTimeoutMs(10_000);

  private static final List<Vertx> members = new ArrayList<>();
  private static Vertx single;

  @BeforeAll
  static void startMembersAndServices() {
    String cluster = LoopbackCluster.newClusterName();
    // One after the other: each join is quick once the first member is up, and the machine may be busy.
    for (int i = 0; i < MEMBERS; i++) {
      members.add(TestFutures.await(LoopbackCluster.member(cluster), 60));
    }
    TestDeployments.deployService(members.get(0), new ManualClock(T0), OPTIONS);
    single = Vertx.vertx();
    TestDeployments.deployService(single, new ManualClock(T0), OPTIONS);
    members.forEach(ClusterVerdictsTest::awaitRegistrations);
    awaitRegistrations(single);
  }

  /**
   * Waits until {@code vertx} sees the service's addresses: a member learns of another's registrations through the
   * cluster manager, a little after they were made, and a raw request sent before would fail with {@code
   * NO_HANDLERS} (a {@link DedupClient} sends such a request again; a raw caller does not). {@code stats} records
   * nothing, so the waits change no answer of the sequence.
   */
  private static void awaitRegistrations(Vertx vertx) {
    DedupClient client = DedupClient.create(vertx, OPTIONS);
    for (int p = 0; p < OPTIONS.getPartitions(); p++) {
      TestFutures.await(client.stats(p), 20);
    }
    for (int attempt = 0; ; attempt++) {
      try {
        TestFutures.await(vertx.eventBus().request(OPTIONS.getAddress(), null,
            new DeliveryOptions().addHeader(DedupAction.HEADER, "stats")), 20);
        return;
      } catch (ReplyException e) {
        if (attempt == 100) {
          throw e;
        }
        TestFutures.await(Future.future(p -> vertx.setTimer(100, id -> p.complete())), 5);
      }
    }
  }

  @AfterAll
  static void close() {
    List<Future<Void>> closed = new ArrayList<>();
    members.forEach(m -> closed.add(m.close()));
    if (single != null) {
      closed.add(single.close());
    }
    TestFutures.await(Future.join(closed), 60);
  }

  @Test
  void shouldAnswerEveryCallerOnEveryMemberAsASingleMemberServiceDoes() {
    assertThat(members.get(1).isClustered()).isTrue();
    assertThat(single.isClustered()).isFalse();
    // The callers, in order; each plays the sequence with its own ids. The single-member run plays them all on its
    // one Vert.x in the same order, so that its stats count the same requests.
    Map<String, Function<Vertx, Caller>> callers = new LinkedHashMap<>();
    for (int m = 0; m < MEMBERS; m++) {
      int member = m;
      callers.put("client" + m, v -> new ClientCaller(DedupClient.create(v, OPTIONS)));
      callers.put("raw" + m, v -> new RawCaller(v, false));
      callers.put("router" + m, v -> new RawCaller(v, true));
      if (member == 0) {
        callers.put("localRouter" + m, LocalRouterCaller::new);
      }
    }
    List<String> expected = new ArrayList<>();
    List<String> actual = new ArrayList<>();
    for (Map.Entry<String, Function<Vertx, Caller>> c : callers.entrySet()) {
      String name = c.getKey();
      Vertx member = members.get(name.charAt(name.length() - 1) - '0');
      expected.addAll(play(name, c.getValue().apply(single)));
      actual.addAll(play(name, c.getValue().apply(member)));
    }
    assertThat(expected).as("the single-member run answered").isNotEmpty();
    assertThat(String.join("\n", expected)).as("sanity: the sequence reached verdicts, conflicts and limits")
        .contains("\"verdict\":\"ACCEPTED\"", "\"verdict\":\"DUPLICATE\"", "\"verdict\":\"CONFLICT\"",
            "\"verdict\":\"IN_FLIGHT\"", "\"verdict\":\"COMMITTED\"", "\"verdict\":\"RELEASED\"", "\"failure\":409",
            "\"failure\":400", "maxBatch", "maxIdBytes", "\"state\":\"REMEMBERED\"");
    for (int i = 0; i < expected.size(); i++) {
      assertThat(actual.get(i)).as("step %d", i).isEqualTo(expected.get(i));
    }
    assertThat(actual).hasSameSizeAs(expected);
  }

  @Test
  void shouldRefuseTheLocalTransportOnAClusteredVertxNamingIt() {
    assertThatThrownBy(() -> DedupClient.create(members.get(1), OPTIONS, DedupClient.Transport.LOCAL))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("transport LOCAL")
        .hasMessageContaining("clustered")
        .hasMessageContaining("transport JSON");
  }

  /**
   * Plays the sequence with ids prefixed by {@code name}; returns one line per step: the step's name and its
   * answer as JSON (claim tokens replaced by {@code <token>}: they are random), or its failure code and message.
   */
  private static List<String> play(String name, Caller c) {
    List<String> out = new ArrayList<>();
    String p = name + "-";
    step(out, "check a", c.check(new DedupEvent(p + "a").setPayloadHash("h1")));
    step(out, "check a again", c.check(new DedupEvent(p + "a").setPayloadHash("h1")));
    step(out, "check a other payload", c.check(new DedupEvent(p + "a").setPayloadHash("h2")));
    Future<JsonObject> claim = c.claim(new DedupEvent(p + "c").setClaimer("worker-1"));
    step(out, "claim c", claim);
    String token = token(claim);
    step(out, "check c claimed", c.check(new DedupEvent(p + "c")));
    step(out, "lookup c claimed", c.lookup(new DedupEvent(p + "c")));
    step(out, "release c wrong token", c.release(new DedupEvent(p + "c").setClaimToken("not-" + token)));
    step(out, "commit c", c.commit(new DedupEvent(p + "c").setClaimToken(token)));
    step(out, "commit c again", c.commit(new DedupEvent(p + "c").setClaimToken(token)));
    step(out, "lookup c", c.lookup(new DedupEvent(p + "c")));
    Future<JsonObject> claimR = c.claim(new DedupEvent(p + "r"));
    step(out, "claim r", claimR);
    step(out, "release r", c.release(new DedupEvent(p + "r").setClaimToken(token(claimR))));
    step(out, "check r released", c.check(new DedupEvent(p + "r")));
    step(out, "commit unclaimed", c.commit(new DedupEvent(p + "u").setClaimToken("t")));
    step(out, "lookup absent", c.lookup(new DedupEvent(p + "never")));
    step(out, "check id over maxIdBytes", c.check(new DedupEvent(p + "x".repeat(40))));
    step(out, "check with a key over 4 partitions", c.check(new DedupEvent(p + "k").setKey("key")));
    step(out, "check empty id", c.check(new DedupEvent("")));
    // Batches: events of one partition, that of p + "a".
    List<DedupEvent> same = new ArrayList<>();
    int target = c.partitionOf(p + "a");
    for (int i = 0; same.size() < 6; i++) {
      if (c.partitionOf(p + "b" + i) == target) {
        same.add(new DedupEvent(p + "b" + i));
      }
    }
    step(out, "checkBatch", c.checkBatch(List.of(same.get(0), same.get(1), new DedupEvent(p + "a")
        .setPayloadHash("h1"), same.get(0))));
    Future<JsonObject> claims = c.claimBatch(List.of(same.get(2), same.get(3), same.get(1)));
    step(out, "claimBatch", claims);
    JsonArray verdicts = TestFutures.await(claims, 20).getJsonArray("verdicts");
    step(out, "commitBatch", c.commitBatch(List.of(
        new DedupEvent(same.get(2).getId()).setClaimToken(tokenOf(verdicts.getJsonObject(0))),
        new DedupEvent(same.get(3).getId()).setClaimToken("wrong"),
        new DedupEvent(same.get(4).getId()).setClaimToken("unclaimed"))));
    step(out, "checkBatch over maxBatch", c.checkBatch(same));
    String tooLong = null;
    for (int i = 0; tooLong == null; i++) {
      String id = p + "y".repeat(40) + i;
      tooLong = c.partitionOf(id) == target ? id : null;
    }
    step(out, "checkBatch with a bad event", c.checkBatch(List.of(same.get(5), new DedupEvent(tooLong))));
    step(out, "commitBatch empty", c.commitBatch(List.of()));
    for (int q = 0; q < OPTIONS.getPartitions(); q++) {
      step(out, "stats " + q, c.stats(q));
    }
    out.addAll(c.raw(p));
    return out;
  }

  private static void step(List<String> out, String name, Future<JsonObject> answer) {
    out.add(name + ": " + outcome(answer));
  }

  private static String outcome(Future<JsonObject> answer) {
    try {
      return normalize(TestFutures.await(answer, 20)).encode();
    } catch (ReplyException re) {
      return new JsonObject().put("failure", re.failureCode()).put("message", re.getMessage()).encode();
    }
  }

  /**
   * Claim tokens are random: each becomes {@code <token>}, in any nesting; so does the owning deployment's id in
   * {@code stats} ({@code owner}), which Vert.x numbers per instance.
   */
  private static JsonObject normalize(JsonObject json) {
    JsonObject copy = json.copy();
    for (String k : copy.fieldNames()) {
      Object v = copy.getValue(k);
      if (k.equals("claimToken") && v != null) {
        copy.put(k, "<token>");
      } else if (k.equals("owner") && v instanceof String) {
        copy.put(k, "<deployment>");
      } else if (v instanceof JsonObject o) {
        copy.put(k, normalize(o));
      } else if (v instanceof JsonArray a) {
        JsonArray n = new JsonArray();
        a.forEach(e -> n.add(e instanceof JsonObject o ? normalize(o) : e));
        copy.put(k, n);
      }
    }
    return copy;
  }

  private static String token(Future<JsonObject> claim) {
    return tokenOf(TestFutures.await(claim, 20));
  }

  private static String tokenOf(JsonObject result) {
    if (result.containsKey("result")) {
      return tokenOf(result.getJsonObject("result"));
    }
    return result.getString("claimToken");
  }

  /** One way of calling the service; every answer as its JSON form. */
  private interface Caller {
    Future<JsonObject> check(DedupEvent e);

    Future<JsonObject> claim(DedupEvent e);

    Future<JsonObject> commit(DedupEvent e);

    Future<JsonObject> release(DedupEvent e);

    Future<JsonObject> lookup(DedupEvent e);

    Future<JsonObject> stats(int partition);

    Future<JsonObject> checkBatch(List<DedupEvent> events);

    Future<JsonObject> claimBatch(List<DedupEvent> events);

    Future<JsonObject> commitBatch(List<DedupEvent> events);

    int partitionOf(String id);

    /** Steps only raw JSON can take (malformed requests); none for the others. */
    default List<String> raw(String prefix) {
      return List.of();
    }
  }

  /** {@link DedupClient}: JSON in the cluster, the local codec in the single-member run. */
  private static final class ClientCaller implements Caller {
    private final DedupClient client;

    ClientCaller(DedupClient client) {
      this.client = client;
    }

    @Override
    public Future<JsonObject> check(DedupEvent e) {
      return client.check(e).map(DedupResult::toJson);
    }

    @Override
    public Future<JsonObject> claim(DedupEvent e) {
      return client.claim(e).map(DedupResult::toJson);
    }

    @Override
    public Future<JsonObject> commit(DedupEvent e) {
      return client.commit(e).map(DedupResult::toJson);
    }

    @Override
    public Future<JsonObject> release(DedupEvent e) {
      return client.release(e).map(DedupResult::toJson);
    }

    @Override
    public Future<JsonObject> lookup(DedupEvent e) {
      return client.lookup(e).map(DedupLookup::toJson);
    }

    @Override
    public Future<JsonObject> stats(int partition) {
      return client.stats(partition);
    }

    @Override
    public Future<JsonObject> checkBatch(List<DedupEvent> events) {
      return client.checkBatch(events).map(ClientCaller::verdicts);
    }

    @Override
    public Future<JsonObject> claimBatch(List<DedupEvent> events) {
      return client.claimBatch(events).map(ClientCaller::verdicts);
    }

    @Override
    public Future<JsonObject> commitBatch(List<DedupEvent> events) {
      return client.commitBatch(events).map(results -> {
        JsonArray a = new JsonArray();
        results.forEach(r -> a.add(r.toJson()));
        return new JsonObject().put("results", a);
      });
    }

    private static JsonObject verdicts(List<DedupBatchResult> results) {
      JsonArray a = new JsonArray();
      results.forEach(r -> a.add(r.toJson()));
      return new JsonObject().put("verdicts", a);
    }

    @Override
    public int partitionOf(String id) {
      return client.partitionOf(new DedupEvent(id));
    }
  }

  /** Raw JSON on the event bus: to the partition addresses, or single requests and stats to the router. */
  private static final class RawCaller implements Caller {
    private final Vertx vertx;
    private final boolean viaRouter;
    private final DedupClient routing;

    RawCaller(Vertx vertx, boolean viaRouter) {
      this.vertx = vertx;
      this.viaRouter = viaRouter;
      this.routing = DedupClient.create(vertx, OPTIONS, DedupClient.Transport.JSON);
    }

    private Future<JsonObject> send(String address, String action, Object body) {
      DeliveryOptions o = new DeliveryOptions().setSendTimeout(10_000);
      if (action != null) {
        o.addHeader(DedupAction.HEADER, action);
      }
      return vertx.eventBus().<JsonObject>request(address, body, o).map(Message::body);
    }

    private Future<JsonObject> single(String action, DedupEvent e) {
      String to = viaRouter ? OPTIONS.getAddress()
          : OPTIONS.getAddress() + "." + routing.partitionOf(e);
      return send(to, action, e.toJson());
    }

    private Future<JsonObject> batch(String action, List<DedupEvent> events) {
      JsonArray a = new JsonArray();
      events.forEach(e -> a.add(e.toJson()));
      int p = events.isEmpty() ? 0 : routing.partitionOf(events.get(0));
      return send(OPTIONS.getAddress() + "." + p, action, new JsonObject().put("events", a));
    }

    @Override
    public Future<JsonObject> check(DedupEvent e) {
      return single("check", e);
    }

    @Override
    public Future<JsonObject> claim(DedupEvent e) {
      return single("claim", e);
    }

    @Override
    public Future<JsonObject> commit(DedupEvent e) {
      return single("commit", e);
    }

    @Override
    public Future<JsonObject> release(DedupEvent e) {
      return single("release", e);
    }

    @Override
    public Future<JsonObject> lookup(DedupEvent e) {
      return single("lookup", e);
    }

    @Override
    public Future<JsonObject> stats(int partition) {
      if (viaRouter) {
        return partition == 0 ? send(OPTIONS.getAddress(), "stats", null) : Future.succeededFuture(new JsonObject());
      }
      return send(OPTIONS.getAddress() + "." + partition, "stats", null);
    }

    @Override
    public Future<JsonObject> checkBatch(List<DedupEvent> events) {
      return batch("checkBatch", events);
    }

    @Override
    public Future<JsonObject> claimBatch(List<DedupEvent> events) {
      return batch("claimBatch", events);
    }

    @Override
    public Future<JsonObject> commitBatch(List<DedupEvent> events) {
      return batch("commitBatch", events);
    }

    @Override
    public int partitionOf(String id) {
      return routing.partitionOf(new DedupEvent(id));
    }

    @Override
    public List<String> raw(String prefix) {
      String to = viaRouter ? OPTIONS.getAddress() : OPTIONS.getAddress() + "."
          + routing.partitionOf(new DedupEvent(prefix + "n"));
      List<String> out = new ArrayList<>();
      step(out, "raw id a number", send(to, "check", new JsonObject().put("id", 42)));
      step(out, "raw no action", send(to, null, new JsonObject().put("id", prefix + "n")));
      step(out, "raw unknown action", send(to, "forget", new JsonObject().put("id", prefix + "n")));
      step(out, "raw body a string", send(to, "check", "id"));
      step(out, "raw unknown field", send(to, "check", new JsonObject().put("id", prefix + "n").put("idd", 1)));
      step(out, "raw leaseMs out of range", send(to, "claim", new JsonObject().put("id", prefix + "n")
          .put("leaseMs", 0)));
      step(out, "raw batch to the router or a partition", send(to, "checkBatch", new JsonObject()
          .put("events", new JsonArray().add(new JsonObject().put("id", prefix + "n")))));
      return out;
    }
  }

  /**
   * Local-codec requests ({@link LocalRequest}) to the router, as an in-process caller of this JVM sends them: the
   * router forwards them as JSON in a clustered Vert.x and answers with the local objects.
   */
  private static final class LocalRouterCaller implements Caller {
    private final Vertx vertx;
    private final RawCaller batches;

    LocalRouterCaller(Vertx vertx) {
      this.vertx = vertx;
      this.batches = new RawCaller(vertx, false);
    }

    private Future<JsonObject> single(DedupAction action, DedupEvent e) {
      return vertx.eventBus().request(OPTIONS.getAddress(), LocalRequest.single(action, e),
          new DeliveryOptions().setSendTimeout(10_000)).map(m -> {
            Object body = m.body();
            return body instanceof DedupLookup l ? l.toJson() : ((DedupResult) body).toJson();
          });
    }

    @Override
    public Future<JsonObject> check(DedupEvent e) {
      return single(DedupAction.CHECK, e);
    }

    @Override
    public Future<JsonObject> claim(DedupEvent e) {
      return single(DedupAction.CLAIM, e);
    }

    @Override
    public Future<JsonObject> commit(DedupEvent e) {
      return single(DedupAction.COMMIT, e);
    }

    @Override
    public Future<JsonObject> release(DedupEvent e) {
      return single(DedupAction.RELEASE, e);
    }

    @Override
    public Future<JsonObject> lookup(DedupEvent e) {
      return single(DedupAction.LOOKUP, e);
    }

    @Override
    public Future<JsonObject> stats(int partition) {
      return partition > 0 ? Future.succeededFuture(new JsonObject())
          : vertx.eventBus().<JsonObject>request(OPTIONS.getAddress(), LocalRequest.stats()).map(Message::body);
    }

    @Override
    public Future<JsonObject> checkBatch(List<DedupEvent> events) {
      return batches.checkBatch(events);
    }

    @Override
    public Future<JsonObject> claimBatch(List<DedupEvent> events) {
      return batches.claimBatch(events);
    }

    @Override
    public Future<JsonObject> commitBatch(List<DedupEvent> events) {
      return batches.commitBatch(events);
    }

    @Override
    public int partitionOf(String id) {
      return batches.partitionOf(id);
    }
  }
}
