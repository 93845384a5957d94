package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.time.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * What a rebuild from the changelog takes as covered, and what it leaves to the source topic; and its reader's
 * retries, on a mock reader and an in-memory window.
 */
class ChangelogRebuildTest {

  private static long[] marks(long[]... marks) {
    long[] chain = {-1, -1};
    for (long[] m : marks) {
      chain = ChangelogRebuild.chain(chain[0], chain[1], m[0], m[1]);
    }
    return chain;
  }

  @Test
  void shouldChainMarksThatStartAtOrBeforeTheEndAndRestartAfterAGap() {
    assertThat(marks(new long[] {0, 100}, new long[] {100, 180}, new long[] {180, 200})).containsExactly(0, 200);
    // A rewound owner's mark starts inside the chain: it stays whole.
    assertThat(marks(new long[] {0, 200}, new long[] {50, 120})).containsExactly(0, 200);
    // Offsets 200..260 were committed without the changelog: only the chain after the gap counts.
    assertThat(marks(new long[] {0, 200}, new long[] {260, 300})).containsExactly(260, 300);
  }

  @Test
  void shouldLeaveToTheSourceTopicWhatTheChainDoesNotCover() {
    // No mark: the whole rebuild reads the source topic.
    assertThat(ChangelogRebuild.sourceRanges(-1, 300, -1, -1)).containsExactly(new long[] {-1, 300});
    // The chain covers 0..300 and the committed offset was rewound to 50: nothing needed from the source topic.
    List<long[]> rewound = ChangelogRebuild.sourceRanges(-1, 50, 0, 300);
    assertThat(rewound).allSatisfy(r -> assertThat(RebuildRule.needed(r[0], r[1])).isFalse());
    // Switched on at 120, committed up to 300, and 300..340 committed since without it: before and after the chain.
    List<long[]> both = ChangelogRebuild.sourceRanges(-1, 340, 120, 300);
    assertThat(both).containsExactly(new long[] {-1, 120}, new long[] {300, 340});
    // A journal that covers up to 200 leaves only the tail after the chain.
    List<long[]> journal = ChangelogRebuild.sourceRanges(200, 340, 120, 300);
    assertThat(RebuildRule.needed(journal.get(0)[0], journal.get(0)[1])).isFalse();
    assertThat(journal.get(1)).containsExactly(300, 340);
  }

  /**
   * The changelog's reader answers its first {@code offsetsForTimes} with Kafka's (retriable) {@code TimeoutException},
   * as while the broker is briefly unreachable: the call is made again after a backoff and the rebuild restores the
   * entry's id, one retry counted. The backoff's first wait (100 ms) is real: the rebuild's own.
   */
  @Test
  void shouldRetryTheChangelogReadersCallsThatFailWithARetriableException() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      ManualClock clock = new ManualClock(1_700_000_000_000L);
      long now = clock.nowMs();
      LocalPartition window = LocalPartition.deployInMemory(vertx, new DedupOptions().setAddress("test.changelog")
          .setPartitions(1).setWindow(Duration.ofMinutes(10)), clock, null)
          .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      TopicPartition changelog = new TopicPartition("g-orders-dedup-changelog", 0);
      AtomicInteger offsetsForTimes = new AtomicInteger();
      MockConsumer<byte[], byte[]> reader = new MockConsumer<>(OffsetResetStrategy.NONE) {
        @Override
        public synchronized Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(Map<TopicPartition, Long> times,
            Duration timeout) {
          if (offsetsForTimes.incrementAndGet() == 1) {
            throw new TimeoutException("the broker did not answer in time");
          }
          return Map.of(changelog, new OffsetAndTimestamp(0, now - 1_000));
        }
      };
      reader.updateEndOffsets(Map.of(changelog, 2L));
      ChangelogEntry a = ChangelogEntry.accepted("a", null, null, 10, now - 1_000, now + 60_000);
      ChangelogEntry mark = ChangelogEntry.commit(0, 11);
      reader.schedulePollTask(() -> {
        reader.addRecord(new ConsumerRecord<>(changelog.topic(), 0, 0, a.recordKey(), a.value()));
        reader.addRecord(new ConsumerRecord<>(changelog.topic(), 0, 1, mark.recordKey(), mark.value()));
      });
      ChangelogRebuild<String, String> rebuild = new ChangelogRebuild<>(new TopicPartition("orders", 0),
          changelog.topic(), Map.of(), window, r -> null, clock, 600_000, 0, -1, -1, 100,
          new KafkaMetrics(registry, "g", "orders", 0), config -> reader);
      rebuild.start();

      ChangelogRebuild.Outcome o = rebuild.done().get(30, TimeUnit.SECONDS);
      assertThat(offsetsForTimes).hasValue(2);
      assertThat(registry.get("dedup.kafka.rebuild.retries").counter().count()).isEqualTo(1);
      assertThat(o.idsRestored()).isEqualTo(1);
      assertThat(o.coveredTo()).isEqualTo(11);
      assertThat(window.check(new DedupEvent("a")).toCompletionStage().toCompletableFuture()
          .get(10, TimeUnit.SECONDS).verdict()).as("restored").isEqualTo(DedupVerdict.DUPLICATE);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
