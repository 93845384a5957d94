package io.github.vertxdedup.journal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The preload of Chronicle's classes: every root it names exists in the Chronicle version we build against. */
class JournalPreloadTest {

  @Test
  void shouldInitialiseEveryChronicleRootItNames() {
    // A root renamed or moved by a Chronicle upgrade would be skipped silently and its classes load on the first open
    // again: the count says so.
    assertThat(JournalPreload.load(JournalPreload.class.getClassLoader())).isEqualTo(JournalPreload.ROOTS.size());
  }

  @Test
  void shouldRunOnceAndCompleteEveryCallersStage() throws Exception {
    CompletionStage<Void> first = JournalPreload.start();
    CompletionStage<Void> second = JournalPreload.start();

    assertThat(second).isSameAs(first);
    first.toCompletableFuture().get(60, TimeUnit.SECONDS);
    assertThat(first.toCompletableFuture()).isCompleted();
  }
}
