package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.time.ManualClock;
import io.vertx.kafka.client.consumer.impl.KafkaConsumerRecordImpl;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/** The rule that every effect-first handler starts with at least half a lease ahead. */
class ClaimLeasesTest {

  private final ManualClock clock = new ManualClock(1_700_000_000_000L);

  private static PendingRecord<String, String> record(long offset) {
    return new PendingRecord<>(new KafkaConsumerRecordImpl<>(new ConsumerRecord<>("t", 0, offset, "k", "v")));
  }

  @Test
  void claiming_stampsEveryRecordOfTheRunWithNowPlusTheLease() {
    ClaimLeases leases = new ClaimLeases(clock, 1_000);
    List<PendingRecord<String, String>> run = List.of(record(0), record(1));

    leases.claiming(run);

    assertThat(run).allSatisfy(r -> assertThat(r.leaseEndMs).isEqualTo(clock.nowMs() + 1_000));
  }

  @Test
  void lessThanHalfLeft_countsHalfAnOddLeaseRoundedUp() {
    ClaimLeases leases = new ClaimLeases(clock, 1_001);
    long now = clock.nowMs();

    assertThat(leases.lessThanHalfLeft(now + 501, now)).isFalse();
    assertThat(leases.lessThanHalfLeft(now + 500, now)).isTrue();
    assertThat(leases.lessThanHalfLeft(Long.MAX_VALUE, now)).as("no claim").isFalse();
  }

  @Test
  void mustClaimAgain_onceHalfTheLeaseHasPassedAndOncePerHandlerCall() {
    ClaimLeases leases = new ClaimLeases(clock, 1_000);
    PendingRecord<String, String> head = record(0);
    leases.claiming(List.of(head));

    clock.advanceMs(500);
    assertThat(leases.mustClaimAgain(head, clock.nowMs())).as("exactly half left").isFalse();

    clock.advanceMs(1);
    assertThat(leases.mustClaimAgain(head, clock.nowMs())).isTrue();
    assertThat(leases.mustClaimAgain(head, clock.nowMs()))
        .as("claimed again already: its handler runs on the claim it has").isFalse();

    leases.handlerStarts(head);
    assertThat(leases.mustClaimAgain(head, clock.nowMs())).as("a new handler call").isTrue();
  }
}
