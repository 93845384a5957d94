package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.time.DedupClock;
import io.github.vertxdedup.time.ManualClock;
import io.github.vertxdedup.window.DedupWindow;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A partition's start builds its window once, on a worker: a presized table (up to 1.5 GiB) is allocated and zeroed
 * off the event loop, and no second table is built for the replay. A {@link DedupWindow} reads its clock once while
 * it is constructed, so the test's clock records each construction and the thread it ran on.
 */
@ExtendWith(VertxExtension.class)
class PartitionWindowBuildTest {

  private static final long T0 = 1_700_000_000_000L;

  @TempDir
  Path dir;

  private final WindowBuilds clock = new WindowBuilds(new ManualClock(T0));
  private Vertx vertx;

  @BeforeEach
  void setUp(Vertx vertx) {
    this.vertx = vertx;
  }

  private DedupOptions options() {
    return new DedupOptions().setWindowMs(600_000).setBucketMs(1_000).setExpectedIdsPerPartition(100_000)
        .setJournalDir(dir.toString()).setJournalSync(SyncPolicy.NONE).validate();
  }

  @Test
  void shouldBuildOneWindowOffTheEventLoopWhenAJournaledPartitionStartsAndRestarts() {
    Path journalDir = dir.resolve("dedup").resolve("0");
    LocalPartition first = await(LocalPartition.deployJournaled(vertx, options(), clock, journalDir, null));
    assertThat(await(first.check(new DedupEvent("a"))).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
    assertOneWindowBuiltOffTheEventLoop();
    await(first.undeploy());

    clock.builds.clear();
    LocalPartition second = await(LocalPartition.deployJournaled(vertx, options(), clock, journalDir, null));
    assertOneWindowBuiltOffTheEventLoop();
    // The one window built is the one the journal was replayed into, and the one that answers.
    assertThat(await(second.check(new DedupEvent("a"))).verdict()).isEqualTo(DedupVerdict.DUPLICATE);
    assertThat(await(second.heldEntries())).isEqualTo(1);
    assertThat(clock.builds).hasSize(1);
  }

  @Test
  void shouldBuildOneWindowOffTheEventLoopWhenAMemoryOnlyPartitionStarts() {
    LocalPartition partition = await(LocalPartition.deployInMemory(vertx, options(), clock, null));
    assertOneWindowBuiltOffTheEventLoop();
    assertThat(await(partition.check(new DedupEvent("a"))).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
    assertThat(await(partition.check(new DedupEvent("a"))).verdict()).isEqualTo(DedupVerdict.DUPLICATE);
    assertThat(clock.builds).hasSize(1);
  }

  private void assertOneWindowBuiltOffTheEventLoop() {
    assertThat(clock.builds).as("windows built by the start").hasSize(1);
    Build b = clock.builds.get(0);
    assertThat(b.onEventLoop()).as("built on %s", b.thread()).isFalse();
  }

  private static <T> T await(Future<T> f) {
    return TestFutures.await(f, 30);
  }

  /** A window construction seen by the clock: the thread it ran on, and whether that is an event loop. */
  private record Build(String thread, boolean onEventLoop) {
  }

  /** The test's clock, recording every read made by a {@link DedupWindow}'s constructor. Thread-safe. */
  private static final class WindowBuilds implements DedupClock {

    private static final StackWalker STACK = StackWalker.getInstance();

    final List<Build> builds = new CopyOnWriteArrayList<>();
    private final DedupClock source;

    WindowBuilds(DedupClock source) {
      this.source = source;
    }

    @Override
    public long nowMs() {
      boolean building = STACK.walk(frames -> frames.anyMatch(
          f -> f.getClassName().equals(DedupWindow.class.getName()) && f.getMethodName().equals("<init>")));
      if (building) {
        builds.add(new Build(Thread.currentThread().getName(), Context.isOnEventLoopThread()));
      }
      return source.nowMs();
    }
  }
}
