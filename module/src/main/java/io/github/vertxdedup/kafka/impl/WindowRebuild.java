package io.github.vertxdedup.kafka.impl;

import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * The rebuild of a newly assigned partition's window, as {@link Rebuilds} runs it: from the source topic
 * ({@link PartitionRebuild}), or from the changelog topic and then the source topic for what it does not cover
 * ({@link ChangelogRebuild}). Each runs on a thread of its own while the partition stays paused, reading with a
 * consumer of its own that {@link #cancel} wakes; this class is that life (the thread, the cancel, the outcome and
 * what runs after it), the subclass its {@link #run work}.
 *
 * <p>{@link #cancel}, {@link #done} and {@link #awaitEnd} from any thread; {@link #onDone} and {@link #start} once,
 * by the thread that created it.
 *
 * @param <O> the outcome
 */
abstract class WindowRebuild<O> {

  /** The partition rebuilt. */
  final TopicPartition tp;
  /** Completes with the outcome, or exceptionally with what made the rebuild fail; completed by {@link #run}. */
  final CompletableFuture<O> done = new CompletableFuture<>();
  private final Thread thread;
  private volatile Runnable onDone = () -> { };
  private volatile boolean cancelled;
  private volatile Consumer<?, ?> reader;

  /**
   * @param tp the partition
   * @param threadName the rebuild thread's name
   */
  WindowRebuild(TopicPartition tp, String threadName) {
    this.tp = tp;
    this.thread = new Thread(this::runThenSignal, threadName);
    this.thread.setDaemon(true);
  }

  /** @return the partition rebuilt */
  final TopicPartition partition() {
    return tp;
  }

  /**
   * Sets what runs after {@link #done()} completes, on the rebuild's thread. Before {@link #start}.
   *
   * @param onDone the action
   */
  final void onDone(Runnable onDone) {
    this.onDone = onDone;
  }

  /** Starts the rebuild's thread. */
  final void start() {
    thread.start();
  }

  /** @return completes when the rebuild ended (cancelled included), or exceptionally with why it failed */
  final CompletableFuture<O> done() {
    return done;
  }

  /** Ends the rebuild early: the reading consumer is woken, nothing more is restored. Any thread. */
  void cancel() {
    cancelled = true;
    Consumer<?, ?> r = reader;
    if (r != null) {
      r.wakeup();
    }
  }

  /** @return true once {@link #cancel} was called; any thread */
  final boolean cancelled() {
    return cancelled;
  }

  /**
   * Makes {@code c} the consumer {@link #cancel} wakes. The rebuild's thread, before it checks {@link #cancelled}
   * and reads: a cancel that came first is then seen, one that comes after wakes the consumer.
   *
   * @param c the reading consumer
   */
  final void reading(Consumer<?, ?> c) {
    reader = c;
  }

  /**
   * Waits for the rebuild's thread to end.
   *
   * @param timeoutMs at most this long, milliseconds
   * @return true if it ended
   * @throws InterruptedException if interrupted while waiting
   */
  final boolean awaitEnd(long timeoutMs) throws InterruptedException {
    thread.join(timeoutMs);
    return !thread.isAlive();
  }

  /** The rebuild's work, on its thread: completes {@link #done} whatever happens. */
  abstract void run();

  private void runThenSignal() {
    try {
      run();
    } finally {
      onDone.run();
    }
  }
}
