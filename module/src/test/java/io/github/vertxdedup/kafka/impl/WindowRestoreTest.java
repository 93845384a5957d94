package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.time.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The checks both rebuilds put restored ids into the window with, against an in-memory window: a batch refused whole
 * with 400 checked one by one, a 503 (of the batch or of some ids) checked again after a backoff that doubles to its
 * cap, any other failure failing the restore, and nothing checked after a cancel. A wrapping window refuses what the
 * test says; the backoff's waits are recorded, and the retry runs at once on the window's context: nothing waits.
 */
class WindowRestoreTest {

  private final ManualClock clock = new ManualClock(1_700_000_000_000L);
  private final AtomicBoolean cancelled = new AtomicBoolean();
  /** The backoff's waits, milliseconds, in order. */
  private final List<Long> waitsMs = new CopyOnWriteArrayList<>();
  /** The size of each batch the window was asked to check. */
  private final List<Integer> checked = new CopyOnWriteArrayList<>();
  /** Calls of the batches' {@code events}. */
  private final AtomicInteger built = new AtomicInteger();
  /** Ids refused with 503 by the wrapping window, and how many more times each is. */
  private final Map<String, Integer> unavailable = new HashMap<>();
  /** Checks of a whole batch refused with 503 (or, where {@link #wholeCode} says, another code) still to come. */
  private final AtomicInteger wholeRefusals = new AtomicInteger();
  private int wholeCode = DedupFailure.UNAVAILABLE;
  /** An id the wrapping window answers 500 as an element of its batch, or null. */
  private String internalError;
  private Vertx vertx;
  private LocalPartition window;
  private KafkaMetrics metrics;

  @BeforeEach
  void setUp() throws Exception {
    vertx = Vertx.vertx();
    DedupOptions options = new DedupOptions().setAddress("test.restore").setPartitions(1)
        .setWindow(Duration.ofMinutes(10)).setMaxIdBytes(16);
    window = get(LocalPartition.deployInMemory(vertx, options, clock, null));
    metrics = new KafkaMetrics(new SimpleMeterRegistry(), "g", "orders", 0);
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** A restore of ids into the wrapping window, each remembered for a minute. */
  private WindowRestore<String> restore() {
    LocalPartition refusing = refusing(window);
    return new WindowRestore<>(refusing, ids -> {
      built.incrementAndGet();
      List<DedupEvent> events = new ArrayList<>();
      for (String id : ids) {
        events.add(new DedupEvent(id).setRememberUntilMs(clock.nowMs() + 60_000));
      }
      return events;
    }, cancelled::get, metrics, "restored", (delayMs, action) -> {
      waitsMs.add(delayMs);
      window.context().runOnContext(v -> action.run());
    });
  }

  @Test
  void shouldGatherAddedItemsIntoBatchesOfMaxBatchAndSendTheRestOnFlush() throws Exception {
    WindowRestore<String> r = restore();
    for (String id : List.of("a", "b", "c", "d", "e")) {
      r.add(id, 2);
    }
    r.flush();
    r.flush(); // nothing gathered: sends nothing
    r.drain();

    assertThat(checked).as("two full batches, then the rest").containsExactly(2, 2, 1);
    assertThat(r.restoredIds()).isEqualTo(5);
  }

  @Test
  void shouldCheckABatchRefusedWholeWith400OneByOneSkippingTheInvalidIds() throws Exception {
    WindowRestore<String> r = restore();
    r.send(List.of("a", "b", "an-id-far-too-long", "c"));
    r.drain();

    assertThat(checked).as("the batch, then each id alone").containsExactly(4, 1, 1, 1, 1);
    assertThat(r.restoredIds()).isEqualTo(3);
    assertThat(r.skippedIds()).isEqualTo(1);
    assertThat(metrics.rebuildIds.count()).isEqualTo(3);
    assertThat(metrics.rebuildNoIdentity.count()).isEqualTo(1);
    assertThat(verdict("b")).as("restored").isEqualTo(DedupVerdict.DUPLICATE);
  }

  @Test
  void shouldCheckTheIdsRefusedWith503AgainAfterABackoffDoublingToItsCap() throws Exception {
    unavailable.put("b", 8);
    WindowRestore<String> r = restore();
    r.send(List.of("a", "b", "c"));
    r.drain();

    assertThat(waitsMs).containsExactly(20L, 40L, 80L, 160L, 320L, 640L, 1_000L, 1_000L);
    assertThat(checked).as("the batch, then only the refused id").containsExactly(3, 1, 1, 1, 1, 1, 1, 1, 1);
    assertThat(r.restoredIds()).isEqualTo(3);
    assertThat(r.skippedIds()).isZero();
    assertThat(verdict("b")).isEqualTo(DedupVerdict.DUPLICATE);
  }

  @Test
  void shouldCheckABatchRefusedWholeWith503AgainAfterABackoff() throws Exception {
    wholeRefusals.set(3);
    WindowRestore<String> r = restore();
    r.send(List.of("a", "b"));
    r.drain();

    assertThat(waitsMs).containsExactly(20L, 40L, 80L);
    assertThat(checked).containsExactly(2, 2, 2, 2);
    assertThat(r.restoredIds()).isEqualTo(2);
  }

  @Test
  void shouldFailTheRestoreOnAnyOtherRefusal() throws Exception {
    internalError = "b";
    WindowRestore<String> r = restore();
    r.send(List.of("a", "b"));
    assertThatThrownBy(r::drain).isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(IllegalStateException.class).hasMessageContaining("the window refused a restored id");

    internalError = null;
    wholeRefusals.set(1);
    wholeCode = DedupFailure.INTERNAL_ERROR;
    WindowRestore<String> whole = restore();
    whole.send(List.of("c"));
    assertThatThrownBy(whole::drain).isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(ReplyException.class);
  }

  @Test
  void shouldBuildAndCheckNothingOnceCancelled() throws Exception {
    WindowRestore<String> r = restore();
    cancelled.set(true);
    r.send(List.of("a"));
    r.drain();

    assertThat(built).as("the batch's events were not built").hasValue(0);
    assertThat(checked).isEmpty();
    assertThat(r.restoredIds()).isZero();
    assertThat(verdict("a")).as("not restored: new to the window").isEqualTo(DedupVerdict.ACCEPTED);
  }

  private DedupVerdict verdict(String id) throws Exception {
    return get(window.check(new DedupEvent(id))).verdict();
  }

  private static <T> T get(Future<T> f) throws Exception {
    CompletableFuture<T> cf = f.toCompletionStage().toCompletableFuture();
    return cf.get(10, TimeUnit.SECONDS);
  }

  /**
   * The window, with its {@code checkBatch} recorded in {@link #checked} and refused as the test says: whole
   * ({@link #wholeRefusals}), or per id ({@link #unavailable}, {@link #internalError}); the other ids are checked by
   * the window.
   */
  @SuppressWarnings("unchecked")
  private LocalPartition refusing(LocalPartition window) {
    return (LocalPartition) Proxy.newProxyInstance(LocalPartition.class.getClassLoader(),
        new Class<?>[] {LocalPartition.class}, (proxy, method, args) -> {
          if (!method.getName().equals("checkBatch")) {
            return method.invoke(window, args);
          }
          List<DedupEvent> events = (List<DedupEvent>) args[0];
          checked.add(events.size());
          if (wholeRefusals.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            return Future.failedFuture(new ReplyException(ReplyFailure.RECIPIENT_FAILURE, wholeCode, "refused"));
          }
          DedupBatchResult[] out = new DedupBatchResult[events.size()];
          List<DedupEvent> passed = new ArrayList<>();
          List<Integer> at = new ArrayList<>();
          for (int i = 0; i < events.size(); i++) {
            String id = events.get(i).getId();
            if (unavailable.getOrDefault(id, 0) > 0) {
              unavailable.merge(id, -1, Integer::sum);
              out[i] = DedupBatchResult.failed(DedupFailure.UNAVAILABLE, "window full");
            } else if (id.equals(internalError)) {
              out[i] = DedupBatchResult.failed(DedupFailure.INTERNAL_ERROR, "a fault");
            } else {
              passed.add(events.get(i));
              at.add(i);
            }
          }
          Future<List<DedupBatchResult>> decided = passed.isEmpty() ? Future.succeededFuture(List.of())
              : window.checkBatch(passed);
          return decided.map(rs -> {
            for (int j = 0; j < rs.size(); j++) {
              out[at.get(j)] = rs.get(j);
            }
            return List.of(out);
          });
        });
  }
}
