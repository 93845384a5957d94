package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Puts the ids a rebuild restored into its partition's window: the part both rebuilds share, from the source topic
 * ({@link PartitionRebuild}, whose batches are records) and from the changelog ({@link ChangelogRebuild}, whose
 * batches are entries). The rebuild's thread {@link #send}s batches; each is handed to the partition's context, where
 * {@code events} turns it into checks (each with its explicit {@code rememberUntilMs}; the source rebuild identifies
 * its records there, as for a delivered record) and {@link LocalPartition#checkBatch} puts them into the window and
 * its journal, as any accept. At most {@value #IN_FLIGHT} batches are in flight at a time: {@link #send} waits for the
 * oldest before it hands over another.
 *
 * <p>What the window answers:
 * <ul>
 *   <li>an id new to it (ACCEPTED) counts as restored ({@link #restoredIds()}, {@code dedup.kafka.rebuild.ids}); one
 *   it remembers already counts nothing;</li>
 *   <li>a batch refused whole with 400 (one invalid id or key) is checked again one event at a time; an event refused
 *   with 400, so, is skipped and counted ({@link #skippedIds()}, {@code dedup.kafka.rebuild.no.identity}, which also
 *   counts what {@link #skip} is told of);</li>
 *   <li>a 503, of the whole batch or of some of its events (the window full, too many replies waiting for the
 *   journal), is checked again after a backoff: {@value #BACKOFF_INITIAL_MS} ms, doubling to
 *   {@value #BACKOFF_MAX_MS} ms, for as long as it lasts;</li>
 *   <li>any other failure fails the batch: {@link #send} or {@link #drain} throws it, wrapped in an
 *   {@link ExecutionException}, and the rebuild fails.</li>
 * </ul>
 *
 * <p>Once the rebuild is {@code cancelled}, a batch queued for the partition's context finds it so and builds and
 * checks nothing (the source rebuild's extractor is not called, so a revocation's drain does not wait for it), a retry
 * checks nothing more, and the waits of the rebuild's thread return within {@value #AWAIT_SLICE_MS} ms without the
 * batches' answers: once the rebuild's thread ended, no id of it reaches the window.
 *
 * <p>{@link #send}, {@link #drain} and {@link #await} on the rebuild's thread only; {@code events}, the checks and
 * {@link #skip} on the partition's context; the counts from any thread.
 *
 * @param <T> what a batch holds: records, or changelog entries
 */
final class WindowRestore<T> {

  /** Check batches in flight at a time. */
  static final int IN_FLIGHT = 4;
  /** The first wait before events refused with 503 are checked again, in milliseconds. */
  static final long BACKOFF_INITIAL_MS = 20;
  /** The longest wait before events refused with 503 are checked again, in milliseconds. */
  static final long BACKOFF_MAX_MS = 1_000;
  /** Longest single wait of the rebuild's thread between looks at {@code cancelled}, in milliseconds. */
  static final long AWAIT_SLICE_MS = 100;

  /** Runs an action later on the partition's context; the production one is a Vert.x timer set there. */
  interface Delay {
    /**
     * @param delayMs how long from now, milliseconds
     * @param action what to run then, on the partition's context
     */
    void after(long delayMs, Runnable action);
  }

  private final LocalPartition partition;
  private final Function<List<T>, List<DedupEvent>> events;
  private final BooleanSupplier cancelled;
  private final KafkaMetrics metrics;
  private final String idsName;
  private final Delay delay;
  private final ArrayDeque<Future<Void>> inFlight = new ArrayDeque<>();
  private final AtomicLong restoredIds = new AtomicLong();
  private final AtomicLong skippedIds = new AtomicLong();
  /** The batch {@link #add} gathers; the rebuild's thread. */
  private List<T> gathering = new ArrayList<>();

  /**
   * @param partition the partition's window, ready
   * @param events the checks of a batch's ids, each with its {@code rememberUntilMs}; called on the partition's
   *     context, it leaves out what is not to be restored (and calls {@link #skip} for what is skipped)
   * @param cancelled true once the rebuild is cancelled; any thread
   * @param metrics the partition's meters: {@code rebuildIds} and {@code rebuildNoIdentity} count here
   * @param idsName what the failure of an event calls its id ("rebuilt", "restored")
   */
  WindowRestore(LocalPartition partition, Function<List<T>, List<DedupEvent>> events, BooleanSupplier cancelled,
      KafkaMetrics metrics, String idsName) {
    this(partition, events, cancelled, metrics, idsName,
        (delayMs, action) -> partition.context().owner().setTimer(delayMs, t -> action.run()));
  }

  /**
   * As the other constructor, with how the retries of events refused with 503 wait.
   *
   * @param delay runs a retry later on the partition's context
   */
  WindowRestore(LocalPartition partition, Function<List<T>, List<DedupEvent>> events, BooleanSupplier cancelled,
      KafkaMetrics metrics, String idsName, Delay delay) {
    this.partition = partition;
    this.events = events;
    this.cancelled = cancelled;
    this.metrics = metrics;
    this.idsName = idsName;
    this.delay = delay;
  }

  /** @return ids new to the window so far; any thread */
  long restoredIds() {
    return restoredIds.get();
  }

  /** @return events skipped so far: refused with 400, or told of with {@link #skip}; any thread */
  long skippedIds() {
    return skippedIds.get();
  }

  /** Counts one skipped event (a record without identity); the partition's context. */
  void skip() {
    skippedIds.incrementAndGet();
    metrics.rebuildNoIdentity.increment();
  }

  /**
   * Hands a batch to the partition's context to be checked, after waiting for the oldest batch in flight if
   * {@value #IN_FLIGHT} are. The rebuild's thread.
   *
   * @param batch the batch; not changed after
   * @throws ExecutionException if a batch waited for failed (its cause: what the window answered)
   * @throws InterruptedException if interrupted while waiting
   */
  void send(List<T> batch) throws InterruptedException, ExecutionException {
    while (inFlight.size() >= IN_FLIGHT) {
      await(inFlight.poll());
    }
    Promise<Void> checked = Promise.promise();
    partition.context().runOnContext(v -> {
      if (cancelled.getAsBoolean()) {
        // Queued before a cancel: build nothing, so the revocation's drain does not wait for the extractor.
        checked.tryComplete();
        return;
      }
      check(events.apply(batch), BACKOFF_INITIAL_MS, checked);
    });
    inFlight.add(checked.future());
  }

  /**
   * Adds an item to the batch being gathered, and {@link #send sends} it once it holds {@code maxBatch}. The rebuild's
   * thread.
   *
   * @param item a record or entry read
   * @param maxBatch items per batch ({@code dedup.maxBatch})
   * @throws ExecutionException if a batch waited for failed (its cause: what the window answered)
   * @throws InterruptedException if interrupted while waiting
   */
  void add(T item, int maxBatch) throws InterruptedException, ExecutionException {
    gathering.add(item);
    if (gathering.size() >= maxBatch) {
      flush();
    }
  }

  /**
   * {@link #send Sends} the batch gathered by {@link #add}, if it holds anything. The rebuild's thread.
   *
   * @throws ExecutionException if a batch waited for failed (its cause: what the window answered)
   * @throws InterruptedException if interrupted while waiting
   */
  void flush() throws InterruptedException, ExecutionException {
    if (!gathering.isEmpty()) {
      List<T> batch = gathering;
      gathering = new ArrayList<>();
      send(batch);
    }
  }

  /**
   * Waits for every batch in flight (or the cancel). The rebuild's thread.
   *
   * @throws ExecutionException if a batch failed
   * @throws InterruptedException if interrupted while waiting
   */
  void drain() throws InterruptedException, ExecutionException {
    while (!inFlight.isEmpty()) {
      await(inFlight.poll());
    }
  }

  /**
   * Waits for {@code f} to complete, or for the rebuild to be cancelled (looked at every {@value #AWAIT_SLICE_MS}
   * ms). The rebuild's thread.
   *
   * @param f the future, completed on another thread
   * @throws ExecutionException if it failed
   * @throws InterruptedException if interrupted while waiting
   */
  void await(Future<?> f) throws InterruptedException, ExecutionException {
    CompletableFuture<?> cf = f.toCompletionStage().toCompletableFuture();
    while (true) {
      try {
        cf.get(AWAIT_SLICE_MS, TimeUnit.MILLISECONDS);
        return;
      } catch (TimeoutException e) {
        if (cancelled.getAsBoolean()) {
          return;
        }
      }
    }
  }

  /** Checks the events, as the type says. Partition context. */
  private void check(List<DedupEvent> batch, long backoffMs, Promise<Void> checked) {
    if (batch.isEmpty() || cancelled.getAsBoolean()) {
      checked.tryComplete();
      return;
    }
    partition.checkBatch(batch).onComplete(ar -> {
      if (ar.failed()) {
        int code = ar.cause() instanceof ReplyException re ? re.failureCode() : -1;
        if (code == DedupFailure.BAD_REQUEST && batch.size() > 1) {
          checkSingly(batch, 0, checked);
        } else if (code == DedupFailure.BAD_REQUEST) {
          skip();
          checked.tryComplete();
        } else if (code == DedupFailure.UNAVAILABLE) {
          retryLater(batch, backoffMs, checked);
        } else {
          checked.tryFail(ar.cause());
        }
        return;
      }
      List<DedupEvent> again = new ArrayList<>();
      List<DedupBatchResult> results = ar.result();
      for (int i = 0; i < results.size(); i++) {
        DedupBatchResult r = results.get(i);
        if (r.succeeded()) {
          if (r.result().verdict() == DedupVerdict.ACCEPTED) {
            restoredIds.incrementAndGet();
            metrics.rebuildIds.increment();
          }
        } else if (r.failureCode() == DedupFailure.UNAVAILABLE) {
          again.add(batch.get(i));
        } else if (r.failureCode() == DedupFailure.BAD_REQUEST) {
          skip();
        } else {
          checked.tryFail(new IllegalStateException("the window refused a " + idsName + " id: " + r.message()));
          return;
        }
      }
      if (again.isEmpty()) {
        checked.tryComplete();
      } else {
        retryLater(again, backoffMs, checked);
      }
    });
  }

  /** Checks {@code batch[i..]} one event at a time, in order. Partition context. */
  private void checkSingly(List<DedupEvent> batch, int i, Promise<Void> checked) {
    if (i == batch.size()) {
      checked.tryComplete();
      return;
    }
    Promise<Void> one = Promise.promise();
    check(List.of(batch.get(i)), BACKOFF_INITIAL_MS, one);
    one.future().onComplete(ar -> {
      if (ar.failed()) {
        checked.tryFail(ar.cause());
      } else {
        checkSingly(batch, i + 1, checked);
      }
    });
  }

  private void retryLater(List<DedupEvent> batch, long backoffMs, Promise<Void> checked) {
    delay.after(backoffMs, () -> check(batch, Math.min(backoffMs * 2, BACKOFF_MAX_MS), checked));
  }
}
