package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.impl.journal.NoJournal;
import io.github.vertxdedup.window.CapacityPolicy;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A partition called in-process ({@link LocalPartition}) against the event-bus client of the same partition: the
 * same verdicts on the same window, the same failure codes and messages, and no event-bus message.
 */
class LocalPartitionTest {

  private static final String ADDRESS = "test.inprocess";

  private Vertx vertx;
  private final ManualClock clock = new ManualClock(1_700_000_000_000L);
  private LocalPartition inProcess;
  private DedupClient bus;
  private final AtomicInteger busMessages = new AtomicInteger();

  @BeforeEach
  void setUp() throws Exception {
    vertx = Vertx.vertx();
    DedupOptions o = new DedupOptions().setAddress(ADDRESS).setPartitions(1).setWindow(Duration.ofMinutes(10))
        .setLease(Duration.ofSeconds(30)).setMaxBatch(4);
    inProcess = get(LocalPartition.deployInMemory(vertx, o, clock, null));
    bus = DedupClient.create(vertx, o);
    vertx.eventBus().addInboundInterceptor(ctx -> {
      if (ctx.message().address().startsWith(ADDRESS)) {
        busMessages.incrementAndGet();
      }
      ctx.next();
    });
  }

  @AfterEach
  void tearDown() throws Exception {
    get(vertx.close());
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** Runs {@code call} on the partition's context and waits for the future it returns. */
  private <T> T onPartition(java.util.function.Supplier<Future<T>> call) throws Exception {
    Promise<T> p = Promise.promise();
    inProcess.context().runOnContext(v -> call.get().onComplete(p));
    return get(p.future());
  }

  @Test
  void shouldShareTheWindowWithTheEventBusClientAndSendNoMessage() throws Exception {
    assertThat(get(inProcess.check(new DedupEvent("a"))).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
    assertThat(get(bus.check(new DedupEvent("a"))).verdict()).isEqualTo(DedupVerdict.DUPLICATE);
    int sent = busMessages.get();
    assertThat(sent).as("the event-bus client's one request").isEqualTo(1);

    assertThat(get(bus.check(new DedupEvent("b"))).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
    assertThat(get(inProcess.check(new DedupEvent("b"))).verdict()).isEqualTo(DedupVerdict.DUPLICATE);
    List<DedupBatchResult> batch = get(inProcess.checkBatch(List.of(new DedupEvent("a"), new DedupEvent("c"))));
    assertThat(batch).extracting(r -> r.result().verdict())
        .containsExactly(DedupVerdict.DUPLICATE, DedupVerdict.ACCEPTED);
    assertThat(busMessages.get()).as("only the event-bus client's requests").isEqualTo(2);
    assertThat(get(bus.lookup(new DedupEvent("c"))).state()).isEqualTo(io.github.vertxdedup.EntryState.REMEMBERED);
    assertThat(get(bus.stats(0)).getLong("accepted")).isEqualTo(3);
  }

  @Test
  void shouldClaimCommitAndReleaseAsTheServiceDoes() throws Exception {
    List<DedupResult> claims = onPartition(() -> inProcess.claimBatch(
        List.of(new DedupEvent("x"), new DedupEvent("y"), new DedupEvent("z"))))
        .stream().map(DedupBatchResult::result).toList();
    assertThat(claims).extracting(DedupResult::verdict).containsOnly(DedupVerdict.ACCEPTED);
    assertThat(get(bus.claim(new DedupEvent("x"))).verdict()).isEqualTo(DedupVerdict.IN_FLIGHT);

    List<DedupCommitResult> commits = onPartition(() -> inProcess.commitBatch(List.of(
        new DedupEvent("x").setClaimToken(claims.get(0).claimToken()),
        new DedupEvent("y").setClaimToken("not-the-token"))));
    assertThat(commits.get(0).committed()).isTrue();
    assertThat(commits.get(1).failureCode()).isEqualTo(DedupFailure.STATE_CONFLICT);
    assertThat(get(inProcess.release(new DedupEvent("z").setClaimToken(claims.get(2).claimToken()))).verdict())
        .isEqualTo(DedupVerdict.RELEASED);

    assertThat(get(bus.check(new DedupEvent("x"))).verdict()).isEqualTo(DedupVerdict.DUPLICATE);
    assertThat(get(bus.claim(new DedupEvent("y"))).verdict()).isEqualTo(DedupVerdict.IN_FLIGHT);
    assertThat(get(bus.claim(new DedupEvent("z"))).verdict()).as("released").isEqualTo(DedupVerdict.ACCEPTED);
  }

  /**
   * A partition at capacity under {@code REJECT} (maxIds 3: two ids and a claim), in-process and through the event
   * bus: a batch answers each remembered id its verdict and each new id its own 503, in input order.
   */
  @Test
  void shouldAnswerEachItemOfABatchOnAFullWindowAsTheEventBusDoes() throws Exception {
    DedupOptions o = new DedupOptions().setAddress(ADDRESS + ".full").setPartitions(1)
        .setWindow(Duration.ofMinutes(10)).setMaxIdsPerPartition(3).setCapacityPolicy(CapacityPolicy.REJECT);
    LocalPartition fullInProcess = get(LocalPartition.deployInMemory(vertx, o, clock, null));
    DedupClient fullBus = DedupClient.create(vertx, o);
    get(fullInProcess.check(new DedupEvent("a")));
    get(fullInProcess.check(new DedupEvent("b")));
    get(fullInProcess.claim(new DedupEvent("held")));

    List<List<DedupBatchResult>> answers = new ArrayList<>();
    List<Function<List<DedupEvent>, Future<List<DedupBatchResult>>>> checkBatches =
        List.of(fullInProcess::checkBatch, fullBus::checkBatch);
    List<Function<List<DedupEvent>, Future<List<DedupBatchResult>>>> claimBatches =
        List.of(fullInProcess::claimBatch, fullBus::claimBatch);
    for (int way = 0; way < 2; way++) {
      List<DedupBatchResult> duplicates = get(checkBatches.get(way).apply(List.of(new DedupEvent("a"),
          new DedupEvent("b"))));
      assertThat(duplicates).extracting(r -> r.result().verdict())
          .containsExactly(DedupVerdict.DUPLICATE, DedupVerdict.DUPLICATE);
      List<DedupBatchResult> mixed = get(claimBatches.get(way).apply(List.of(new DedupEvent("b"),
          new DedupEvent("new"), new DedupEvent("held"))));
      assertThat(mixed).extracting(DedupBatchResult::succeeded).containsExactly(true, false, true);
      assertThat(mixed.get(0).result().verdict()).isEqualTo(DedupVerdict.DUPLICATE);
      assertThat(mixed.get(1).failureCode()).isEqualTo(DedupFailure.UNAVAILABLE);
      assertThat(mixed.get(1).cause().failureCode()).isEqualTo(DedupFailure.UNAVAILABLE);
      assertThat(mixed.get(1).message()).contains("window full", "reserved by claims");
      assertThat(mixed.get(2).result().verdict()).isEqualTo(DedupVerdict.IN_FLIGHT);
      answers.add(mixed);
    }
    assertThat(answers.get(0).get(1)).as("the same failure in-process and over the bus")
        .isEqualTo(answers.get(1).get(1));
    assertThat(get(fullBus.lookup(new DedupEvent("new"))).state())
        .isEqualTo(io.github.vertxdedup.EntryState.ABSENT);
    assertThat(get(fullBus.stats(0)).getLong("unavailable")).isEqualTo(2);
  }

  @Test
  void shouldDecideOnTheCallersContextBeforeReturning() throws Exception {
    Promise<Boolean> completeOnReturn = Promise.promise();
    inProcess.context().runOnContext(v ->
        completeOnReturn.complete(inProcess.check(new DedupEvent("now")).isComplete()));
    assertThat(get(completeOnReturn.future())).isTrue();
  }

  @Test
  void shouldFailBadInputWithTheSameCodeAndMessageAsTheEventBus() throws Exception {
    List<DedupEvent> tooMany = List.of(new DedupEvent("1"), new DedupEvent("2"), new DedupEvent("3"),
        new DedupEvent("4"), new DedupEvent("5"));
    ReplyException viaBus = failure(bus.checkBatch(tooMany));
    ReplyException inProc = failure(inProcess.checkBatch(tooMany));
    assertThat(inProc.failureCode()).isEqualTo(DedupFailure.BAD_REQUEST).isEqualTo(viaBus.failureCode());
    assertThat(inProc.getMessage()).isEqualTo(viaBus.getMessage()).contains("maxBatch");

    ReplyException noId = failure(inProcess.check(new DedupEvent()));
    assertThat(noId.failureCode()).isEqualTo(DedupFailure.BAD_REQUEST);
    assertThat(noId.getMessage()).contains("id");
    assertThat(get(inProcess.check(new DedupEvent("still-serving"))).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
  }

  @Test
  void shouldAnswer503OnceThePartitionIsStopped() throws Exception {
    get(inProcess.undeploy());
    ReplyException e = failure(inProcess.check(new DedupEvent("late")));
    assertThat(e.failureCode()).isEqualTo(DedupFailure.UNAVAILABLE);
    assertThat(e.getMessage()).contains("stopping");
  }

  /** A partition not deployed yet: a 503, on a Vert.x thread or not, rather than an exception. */
  @Test
  void shouldAnswer503BeforeThePartitionIsDeployed() throws Exception {
    LocalPartition client = new PartitionVerticle(new DedupOptions().setAddress("test.not-deployed")
        .setPartitions(1), 0, clock, NoJournal.INSTANCE, null).local();
    ReplyException fromThisThread = failure(client.check(new DedupEvent("a")));
    assertThat(fromThisThread.failureCode()).isEqualTo(DedupFailure.UNAVAILABLE);
    assertThat(fromThisThread.getMessage()).contains("not deployed");
    Promise<Future<DedupResult>> fromEventLoop = Promise.promise();
    vertx.runOnContext(v -> fromEventLoop.complete(client.check(new DedupEvent("a"))));
    ReplyException onLoop = failure(get(fromEventLoop.future()));
    assertThat(onLoop.failureCode()).isEqualTo(DedupFailure.UNAVAILABLE);
    assertThat(onLoop.getMessage()).isEqualTo(fromThisThread.getMessage());
  }

  private static ReplyException failure(Future<?> f) throws Exception {
    try {
      get(f);
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(ReplyException.class);
      return (ReplyException) e.getCause();
    }
    throw new AssertionError("the request succeeded");
  }
}
