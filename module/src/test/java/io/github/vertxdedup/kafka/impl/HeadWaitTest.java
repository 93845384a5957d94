package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.kafka.impl.HeadWait.State;
import io.vertx.core.Vertx;
import io.vertx.kafka.client.consumer.impl.KafkaConsumerRecordImpl;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the head of an owner's queue waits for: the pause signal to the poll thread and the backoffs a fence may end.
 * Backoffs here are an hour long: they are ended or cancelled, never waited for.
 */
class HeadWaitTest {

  private static final long HOUR_MS = TimeUnit.HOURS.toMillis(1);

  private Vertx vertx;
  private final AtomicInteger wakes = new AtomicInteger();
  private final AtomicInteger pumps = new AtomicInteger();
  private HeadWait head;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    head = new HeadWait(new OwnerLoop(vertx, vertx.getOrCreateContext()), wakes::incrementAndGet);
  }

  @AfterEach
  void tearDown() throws Exception {
    head.cancelTimer();
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static PendingRecord<String, String> decided(DedupVerdict verdict) {
    PendingRecord<String, String> r =
        new PendingRecord<>(new KafkaConsumerRecordImpl<>(new ConsumerRecord<>("t", 0, 0, "k", "v")));
    r.decision = DedupResult.of(verdict, 0);
    return r;
  }

  @Test
  void stopWaiting_wakesThePollThreadOnlyIfAPauseWasWanted() {
    head.stopWaiting();
    assertThat(wakes).hasValue(0);

    head.pauseWanted();
    assertThat(head.wantsPause()).isTrue();
    head.stopWaiting();
    head.stopWaiting();

    assertThat(head.wantsPause()).isFalse();
    assertThat(wakes).hasValue(1);
  }

  @Test
  void endBackoffToDecide_leavesTheHeadIdleAndUndecided() {
    PendingRecord<String, String> r = decided(DedupVerdict.IN_FLIGHT);
    head.backOff(HOUR_MS, State.BACKING_OFF_TO_DECIDE, r, pumps::incrementAndGet);
    assertThat(head.idle()).isFalse();

    assertThat(head.endBackoffToDecide(r, () -> true)).isTrue();

    assertThat(head.idle()).isTrue();
    assertThat(r.decision).isNull();
    assertThat(head.endBackoffToDecide(r, () -> true)).as("no backoff left").isFalse();
  }

  @Test
  void endBackoffToDecide_leavesAHandlerRetryAndARefusedEndAlone() {
    PendingRecord<String, String> r = decided(DedupVerdict.ACCEPTED);
    head.backOff(HOUR_MS, State.BACKING_OFF_TO_HANDLE, r, pumps::incrementAndGet);
    assertThat(head.endBackoffToDecide(r, () -> true)).as("record-first handler retry").isFalse();
    head.cancelTimer();

    head.backOff(HOUR_MS, State.BACKING_OFF_TO_DECIDE, r, pumps::incrementAndGet);
    assertThat(head.endBackoffToDecide(r, () -> false)).isFalse();

    assertThat(head.idle()).isFalse();
    assertThat(r.decision).isNotNull();
  }
}
