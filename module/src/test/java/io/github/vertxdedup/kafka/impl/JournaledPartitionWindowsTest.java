package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The journaled window store alone: its directory, the lock as the fence between owners, the journaled offset. */
class JournaledPartitionWindowsTest {

  private static final TopicPartition TP = new TopicPartition("orders", 3);

  @TempDir
  Path journalDir;

  private Vertx vertx;
  private final ManualClock clock = new ManualClock(1_700_000_000_000L);

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void tearDown() throws Exception {
    get(vertx.close());
  }

  private JournaledPartitionWindows store(long acquireTimeoutMs) {
    return store(vertx, acquireTimeoutMs);
  }

  private JournaledPartitionWindows store(Vertx vertx, long acquireTimeoutMs) {
    DedupOptions o = new DedupOptions().setAddress("test.store").setWindow(Duration.ofMinutes(10))
        .setJournalDir(journalDir.toString());
    return new JournaledPartitionWindows(vertx, o, clock, null, acquireTimeoutMs);
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  @Test
  void shouldIgnoreTheServicesRoutingSettingsInEveryTopicPartitionsWindow() throws Exception {
    // The Kafka partition is the routing: a window takes keyless and keyed records whatever partitions and
    // routeByKey say, in both stores.
    DedupOptions o = new DedupOptions().setAddress("test.routing").setWindow(Duration.ofMinutes(10))
        .setPartitions(4).setRouteByKey(true);
    for (PartitionWindows store : new PartitionWindows[] {
        PartitionWindows.create(vertx, o, clock, null, 5_000),
        PartitionWindows.create(vertx, new DedupOptions(o).setJournalDir(journalDir.toString()), clock, null, 5_000)}) {
      PartitionWindows.Lease lease = get(store.acquire("billing", TP, "a"));
      LocalPartition client = lease.partition();
      assertThat(get(client.check(new DedupEvent("no-key"))).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
      assertThat(get(client.check(new DedupEvent("keyed").setKey("order-1"))).verdict())
          .isEqualTo(DedupVerdict.ACCEPTED);
      assertThat(get(client.check(new DedupEvent("other").setKey("order-1"))).verdict())
          .isEqualTo(DedupVerdict.DUPLICATE);
      get(store.release(lease));
    }
  }

  @Test
  void shouldJournalCommittedOffsetsAndReportTheHighestAsResumeOffsetToTheNextOwner() throws Exception {
    JournaledPartitionWindows store = store(5_000);
    PartitionWindows.Lease first = get(store.acquire("billing", TP, "a"));
    assertThat(first.resumeOffset()).isEqualTo(-1);
    assertThat(journalDir.resolve("billing").resolve("orders-3")).isDirectory();
    store.offsetsCommitted(first, 17);
    store.offsetsCommitted(first, 42);
    get(store.release(first));

    PartitionWindows.Lease second = get(store.acquire("billing", TP, "b"));
    assertThat(second.resumeOffset()).isEqualTo(42);
    // The address scopes the id fingerprints in the journal: every owner uses the same one.
    assertThat(second.partition().address()).isEqualTo(first.partition().address());
    get(store.release(second));
  }

  @Test
  void shouldReleaseTheTakersOwnOrphanedClaimsAndLeaveOtherClaimersToTheirLeases() throws Exception {
    JournaledPartitionWindows store = store(5_000);
    PartitionWindows.Lease first = get(store.acquire("billing", TP, "consumer-a"));
    // The window's address: <dedup.address>.<group.id>.<topic>-<partition>.
    DedupClient client = DedupClient.create(vertx, new DedupOptions().setAddress("test.store.billing.orders-3")
        .setPartitions(1));
    for (String id : new String[] {"x", "y"}) {
      assertThat(get(client.claim(new DedupEvent(id).setClaimer("consumer-a"))).verdict())
          .isEqualTo(DedupVerdict.ACCEPTED);
    }
    assertThat(get(client.claim(new DedupEvent("z").setClaimer("consumer-b"))).verdict())
        .isEqualTo(DedupVerdict.ACCEPTED);
    get(store.release(first)); // the claims stay open in the journal, as a killed consumer leaves them

    PartitionWindows.Lease byOther = get(store.acquire("billing", TP, "consumer-c"));
    assertThat(byOther.releasedClaims()).as("another instance id releases nothing").isZero();
    get(store.release(byOther));

    PartitionWindows.Lease again = get(store.acquire("billing", TP, "consumer-a"));
    assertThat(again.releasedClaims()).isEqualTo(2);
    assertThat(get(client.claim(new DedupEvent("x").setClaimer("consumer-a"))).verdict())
        .isEqualTo(DedupVerdict.ACCEPTED);
    assertThat(get(client.claim(new DedupEvent("z").setClaimer("consumer-a"))).verdict())
        .as("consumer-b's claim waits out its lease").isEqualTo(DedupVerdict.IN_FLIGHT);
    get(store.release(again));
  }

  @Test
  void shouldKeepAWindowPerConsumerGroup() throws Exception {
    JournaledPartitionWindows store = store(5_000);
    PartitionWindows.Lease a = get(store.acquire("billing", TP, "a"));
    store.offsetsCommitted(a, 9);
    // Another group takes the same topic-partition at the same time: a journal of its own, not locked by the first.
    PartitionWindows.Lease other = get(store.acquire("audit", TP, "x"));
    assertThat(other.resumeOffset()).isEqualTo(-1);
    get(store.release(other));
    get(store.release(a));
  }

  @Test
  void shouldMakeATakerInThisVertxWaitUntilTheHolderReleasesTheWindow() throws Exception {
    JournaledPartitionWindows store = store(10_000);
    PartitionWindows.Lease holder = get(store.acquire("billing", TP, "a"));
    store.offsetsCommitted(holder, 5);
    Future<PartitionWindows.Lease> taker = store.acquire("billing", TP, "b");
    Thread.sleep(200); // real time: the taker retries on real timers; it must still be waiting
    assertThat(taker.isComplete()).isFalse();
    get(store.release(holder));
    assertThat(get(taker).resumeOffset()).isEqualTo(5);
    get(store.release(get(taker)));
  }

  @Test
  void shouldMakeATakerElsewhereWaitOnTheJournalLockUntilTheHolderReleasesIt() throws Exception {
    Vertx elsewhere = Vertx.vertx();
    try {
      JournaledPartitionWindows store = store(10_000);
      PartitionWindows.Lease holder = get(store.acquire("billing", TP, "a"));
      store.offsetsCommitted(holder, 5);
      // Another Vert.x instance (as another process would): its partition verticle finds the directory locked.
      Future<PartitionWindows.Lease> taker = store(elsewhere, 10_000).acquire("billing", TP, "b");
      Thread.sleep(300); // real time: the lock is retried on real timers; it must still be waiting
      assertThat(taker.isComplete()).isFalse();
      get(store.release(holder));
      assertThat(get(taker).resumeOffset()).isEqualTo(5);
    } finally {
      get(elsewhere.close());
    }
  }

  @Test
  void shouldFailTheAcquisitionWhenTheHolderKeepsTheJournalPastTheTimeout() throws Exception {
    Vertx elsewhere = Vertx.vertx();
    try {
      JournaledPartitionWindows store = store(10_000);
      PartitionWindows.Lease holder = get(store.acquire("billing", TP, "a"));
      JournaledPartitionWindows other = store(elsewhere, 300);
      assertThatThrownBy(() -> get(other.acquire("billing", TP, "b")))
          .isInstanceOf(ExecutionException.class)
          .hasMessageContaining("assignmentTimeoutMs=300")
          .hasMessageContaining("locked");
      // The failed taker let go of everything: the holder hands the window on, and the other instance takes it.
      get(store.release(holder));
      get(other.release(get(other.acquire("billing", TP, "c"))));
    } finally {
      get(elsewhere.close());
    }
  }

  @Test
  void shouldFailTheAcquisitionWhenAnOwnerInThisVertxKeepsTheWindowPastTheTimeout() throws Exception {
    JournaledPartitionWindows store = store(200);
    PartitionWindows.Lease holder = get(store.acquire("billing", TP, "a"));
    assertThatThrownBy(() -> get(store.acquire("billing", TP, "b")))
        .isInstanceOf(ExecutionException.class)
        .hasMessageContaining("assignmentTimeoutMs=200");
    get(store.release(holder));
    get(store.release(get(store.acquire("billing", TP, "c"))));
  }

  @Test
  void shouldRefuseAGroupIdThatIsNotOneDirectoryName() {
    assertThatThrownBy(() -> JournaledPartitionWindows.directory(journalDir, "../escape", TP))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("group.id");
    assertThatThrownBy(() -> JournaledPartitionWindows.directory(journalDir, "..", TP))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(JournaledPartitionWindows.directory(journalDir, "billing", TP))
        .isEqualTo(journalDir.resolve("billing").resolve("orders-3"));
  }
}
