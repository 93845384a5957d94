package io.github.vertxdedup.kafka.impl;

import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * The rebuild of a newly assigned partition's window, as {@link Rebuilds} runs it: from the source topic
 * ({@link PartitionRebuild}), or from the changelog topic and then the source topic for what it does not cover
 * ({@link ChangelogRebuild}). Each runs on a thread of its own while the partition stays paused.
 *
 * <p>{@link #cancel}, {@link #done} and {@link #awaitEnd} from any thread; {@link #onDone} and {@link #start} once,
 * by the thread that created it.
 */
interface WindowRebuild {

  /** @return the partition rebuilt */
  TopicPartition partition();

  /**
   * Sets what runs after {@link #done()} completes, on the rebuild's thread. Before {@link #start}.
   *
   * @param onDone the action
   */
  void onDone(Runnable onDone);

  /** Starts the rebuild's thread. */
  void start();

  /** @return completes when the rebuild ended (cancelled included), or exceptionally with why it failed */
  CompletableFuture<?> done();

  /** Ends the rebuild early: nothing more is restored. Any thread. */
  void cancel();

  /**
   * Waits for the rebuild's thread to end.
   *
   * @param timeoutMs at most this long, milliseconds
   * @return true if it ended
   * @throws InterruptedException if interrupted while waiting
   */
  boolean awaitEnd(long timeoutMs) throws InterruptedException;
}
