package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.JournalContents;
import io.github.vertxdedup.journal.JournalOptions;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.time.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The clean-up of the journal directories of partitions that left this machine: a directory goes once its journal
 * remembers nothing (W after its last accept, on the injected clock), never while its partition is assigned here,
 * held by this consumer's window store, or locked by another open journal.
 */
class JournalCleanupTest {

  private static final String GROUP = "billing";
  private static final long W = Duration.ofMinutes(10).toMillis();
  private static final TopicPartition LEFT = new TopicPartition("orders", 0);
  private static final TopicPartition HELD = new TopicPartition("orders", 1);
  private static final TopicPartition ASSIGNED = new TopicPartition("orders", 2);
  private static final TopicPartition LOCKED = new TopicPartition("orders", 3);

  @TempDir
  Path journalDir;

  private Vertx vertx;
  private final ManualClock clock = new ManualClock(1_700_000_000_000L);
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final Set<TopicPartition> assigned = new CopyOnWriteArraySet<>();
  private JournaledPartitionWindows store;
  private JournalCleanup cleanup;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    DedupOptions o = new DedupOptions().setAddress("test.cleanup").setWindowMs(W)
        .setJournalDir(journalDir.toString());
    store = new JournaledPartitionWindows(vertx, o, clock, null, 5_000);
    cleanup = new JournalCleanup(vertx, journalDir.resolve(GROUP), GROUP, W, clock, () -> assigned, store::inUse,
        registry, LoggerFactory.getLogger(JournalCleanupTest.class));
  }

  @AfterEach
  void tearDown() throws Exception {
    cleanup.stop();
    get(vertx.close());
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private Path dir(TopicPartition tp) {
    return journalDir.resolve(GROUP).resolve(tp.topic() + "-" + tp.partition());
  }

  /** Takes the partition's window, accepts one id now (remembered for W), and keeps it. */
  private PartitionWindows.Lease acceptOne(TopicPartition tp) throws Exception {
    PartitionWindows.Lease lease = get(store.acquire(GROUP, tp, "consumer-a"));
    assertThat(get(lease.partition().check(new DedupEvent("id-" + tp.partition()))).verdict())
        .isEqualTo(DedupVerdict.ACCEPTED);
    return lease;
  }

  private List<Path> sweep() throws Exception {
    return get(cleanup.sweep());
  }

  private double removed() {
    return registry.get("dedup.kafka.journal.directories.removed").tag("group", GROUP).counter().count();
  }

  @Test
  void shouldRemoveTheDirectoryOfAPartitionThatLeftOnlyOnceItsJournalRemembersNothing() throws Exception {
    get(store.release(acceptOne(LEFT)));

    assertThat(sweep()).isEmpty();
    clock.advanceMs(W - 1);
    assertThat(sweep()).isEmpty();
    assertThat(JournalContents.isJournalDirectory(dir(LEFT))).isTrue();

    clock.advanceMs(1); // the id accepted at the start is forgotten now: nothing in the journal is remembered
    assertThat(sweep()).containsExactly(dir(LEFT));
    assertThat(Files.exists(dir(LEFT))).isFalse();
    assertThat(removed()).isEqualTo(1);

    // The partition comes back: its window starts empty, as its journal would have rebuilt it.
    PartitionWindows.Lease back = get(store.acquire(GROUP, LEFT, "consumer-a"));
    assertThat(get(back.partition().check(new DedupEvent("id-0"))).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
    get(store.release(back));
  }

  @Test
  void shouldNeverRemoveTheDirectoryOfAPartitionAssignedOrHeldHere() throws Exception {
    assigned.add(ASSIGNED);
    get(store.release(acceptOne(ASSIGNED)));
    PartitionWindows.Lease held = acceptOne(HELD);

    clock.advanceMs(3 * W);
    assertThat(sweep()).isEmpty();
    assertThat(Files.exists(dir(ASSIGNED))).isTrue();
    assertThat(Files.exists(dir(HELD))).isTrue();

    // Once neither assigned nor held, they go.
    assigned.clear();
    get(store.release(held));
    assertThat(sweep()).containsExactlyInAnyOrder(dir(ASSIGNED), dir(HELD));
    assertThat(removed()).isEqualTo(2);
  }

  @Test
  void shouldLeaveADirectoryAnotherOpenJournalHolds() throws Exception {
    get(store.release(acceptOne(LOCKED)));
    clock.advanceMs(W);
    JournalOptions options = new JournalOptions().setClock(clock).setSyncPolicy(SyncPolicy.NONE)
        .setRollCycle(JournalOptions.rollCycleFor(Duration.ofMillis(W)));
    try (Journal other = Journal.open(dir(LOCKED), options)) {
      assertThat(other.directory()).isEqualTo(dir(LOCKED).toAbsolutePath().normalize());
      assertThat(sweep()).isEmpty();
      assertThat(JournalContents.isJournalDirectory(dir(LOCKED))).isTrue();
    }
    assertThat(sweep()).containsExactly(dir(LOCKED));
  }

  @Test
  void shouldLeaveWhatIsNotAPartitionsJournal() throws Exception {
    Path notAJournal = Files.createDirectories(journalDir.resolve(GROUP).resolve("orders-7"));
    Files.writeString(notAJournal.resolve("notes.txt"), "mine");
    Path otherName = Files.createDirectories(journalDir.resolve(GROUP).resolve("backup"));
    clock.advanceMs(3 * W);
    assertThat(sweep()).isEmpty();
    assertThat(notAJournal.resolve("notes.txt")).exists();
    assertThat(otherName).exists();
    assertThat(removed()).isZero();
  }
}
