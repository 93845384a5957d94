package io.github.vertxdedup.kafka.impl;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetCommitCallback;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The {@link GroupCommitter} of a consumer with the changelog on: each offset commit is one transaction of its
 * {@link ChangelogWriter} that holds, per source partition committed, the changelog entries of the ids accepted below
 * the committed offset ({@link ChangelogBuffer#below}) and a commit mark, then the offsets
 * ({@code sendOffsetsToTransaction(offsets, consumer.groupMetadata())}). The changelog partition {@code p} of
 * {@code <group.id>-<topic>-dedup-changelog} receives the entries of source partition {@code p}
 * ({@link ChangelogTopics}). A committed transaction removes its entries from the buffers.
 *
 * <p>The transactions run on the writer's thread; their outcomes come back to the poll thread through a queue that
 * {@link #runCallbacks} drains (the poll loop calls it before every commit it considers, and {@code wakePoll} makes
 * it look soon). So the callbacks run on the poll thread, in the order the commits were sent. One async transaction
 * is in flight at a time; the commits asked for meanwhile wait and go as one transaction when it ends (their
 * offsets merged, the highest per partition), so a writer slower than {@code commitIntervalMs} makes fewer, larger
 * transactions rather than a queue of them. A sync commit waits for the one in flight and takes the waiting ones
 * with it.
 *
 * <p>Poll thread only, as the consumer it takes the group metadata from.
 */
final class ChangelogCommitter implements GroupCommitter {

  private final ChangelogWriter writer;
  private final Consumer<?, ?> consumer;
  private final String groupId;
  /** An assigned partition's changelog buffer and committed offset, or null if it is not assigned any more. */
  private final Function<TopicPartition, Partition> assigned;

  /**
   * What a commit needs of an assigned partition.
   *
   * @param buffer the accepted ids its owner captured and no committed transaction holds yet
   * @param committed the offset last committed for it, or -1
   */
  record Partition(ChangelogBuffer buffer, long committed) {}
  private final Runnable wakePoll;
  private final Queue<Runnable> answered = new ConcurrentLinkedQueue<>();
  /** Async commits not sent yet, in the order they came; poll thread. */
  private final List<Request> pending = new ArrayList<>();
  /** The async transaction in flight, or null; poll thread. */
  private CompletableFuture<Void> inFlight;
  /** Closed: nothing more is sent; poll thread. */
  private boolean closed;

  /** An async commit and its callback. */
  private record Request(Map<TopicPartition, OffsetAndMetadata> offsets, OffsetCommitCallback callback) {}

  /**
   * @param writer the transactional producer
   * @param consumer the consumer whose group the offsets are committed for (its group metadata)
   * @param groupId the consumer group (the changelog topics' names)
   * @param assigned an assigned partition's changelog buffer and committed offset, or null; poll thread
   * @param wakePoll wakes the poll thread when a transaction ended; any thread
   */
  ChangelogCommitter(ChangelogWriter writer, Consumer<?, ?> consumer, String groupId,
      Function<TopicPartition, Partition> assigned, Runnable wakePoll) {
    this.writer = writer;
    this.consumer = consumer;
    this.groupId = groupId;
    this.assigned = assigned;
    this.wakePoll = wakePoll;
  }

  @Override
  public void commitAsync(Map<TopicPartition, OffsetAndMetadata> offsets, OffsetCommitCallback callback) {
    runCallbacks();
    pending.add(new Request(offsets, callback));
    sendPending();
  }

  @Override
  public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
    // The transaction in flight ends first, and the async commits still waiting go with this one: none may commit
    // an older offset after it.
    awaitInFlight();
    // Its answer only: sending the waiting async commits now would put the same entries in two transactions.
    runAnswered();
    List<Request> waiting = new ArrayList<>(pending);
    pending.clear();
    Map<TopicPartition, OffsetAndMetadata> merged = merge(waiting);
    merge(merged, offsets);
    Map<TopicPartition, ChangelogBuffer> sent = new HashMap<>();
    Exception failure = null;
    try {
      send(merged, sent).get();
      confirm(merged, sent);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failure = new org.apache.kafka.common.errors.InterruptException(e);
    } catch (ExecutionException e) {
      failure = unwrap(e.getCause());
    }
    for (Request r : waiting) {
      r.callback.onComplete(r.offsets, failure);
    }
    if (failure != null) {
      throw failure instanceof RuntimeException re ? re : new IllegalStateException(failure);
    }
  }

  @Override
  public void runCallbacks() {
    runAnswered();
    RuntimeException fatal = writer.fatal();
    if (fatal != null) {
      // No offset can be committed any more: the poll loop ends on it and the consumer stops, reporting it to the
      // exception handler, as for a window that cannot be opened (docs/kafka.md, "Changelog topic").
      throw fatal;
    }
    sendPending();
  }

  /** Runs the answers of the transactions that ended: their entries leave the buffers, their callbacks run. */
  private void runAnswered() {
    Runnable r;
    while ((r = answered.poll()) != null) {
      r.run();
    }
  }

  /**
   * Sends the async commits that wait as one transaction, unless one is in flight: at most one transaction is in
   * flight, so the entries of a commit are sent once unless it fails, and the commits that come meanwhile are merged
   * (the latest offset per partition) into the next one. Poll thread.
   */
  private void sendPending() {
    if (inFlight != null || pending.isEmpty() || closed) {
      return;
    }
    List<Request> requests = new ArrayList<>(pending);
    pending.clear();
    Map<TopicPartition, OffsetAndMetadata> merged = merge(requests);
    Map<TopicPartition, ChangelogBuffer> sent = new HashMap<>();
    // inFlight is the stage after the answer was queued, so that commitSync, once it ended, finds the answer (and
    // confirms its entries) before it sends entries of its own.
    inFlight = send(merged, sent).whenComplete((v, e) -> {
      answered.add(() -> {
        inFlight = null;
        Exception failure = e == null ? null : unwrap(e);
        if (failure == null) {
          confirm(merged, sent);
        }
        for (Request r : requests) {
          r.callback.onComplete(r.offsets, failure);
        }
      });
      wakePoll.run();
    });
  }

  private void awaitInFlight() {
    CompletableFuture<Void> f = inFlight;
    if (f == null) {
      return;
    }
    try {
      f.handle((v, e) -> null).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new org.apache.kafka.common.errors.InterruptException(e);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e); // handle() completes normally
    }
  }

  private static Map<TopicPartition, OffsetAndMetadata> merge(List<Request> requests) {
    Map<TopicPartition, OffsetAndMetadata> merged = new HashMap<>();
    for (Request r : requests) {
      merge(merged, r.offsets);
    }
    return merged;
  }

  /** Puts each offset into {@code into}, keeping the higher one per partition. */
  private static void merge(Map<TopicPartition, OffsetAndMetadata> into, Map<TopicPartition, OffsetAndMetadata> from) {
    from.forEach((tp, o) -> into.merge(tp, o, (a, b) -> a.offset() >= b.offset() ? a : b));
  }

  /** Closes the producer after the transactions sent before. */
  void close() {
    closed = true;
    writer.close();
    runAnswered();
  }

  private CompletableFuture<Void> send(Map<TopicPartition, OffsetAndMetadata> offsets,
      Map<TopicPartition, ChangelogBuffer> sent) {
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
      TopicPartition tp = e.getKey();
      Partition o = assigned.apply(tp);
      if (o == null) {
        continue;
      }
      ChangelogBuffer buffer = o.buffer();
      sent.put(tp, buffer);
      String topic = ChangelogTopics.name(groupId, tp.topic());
      for (ChangelogEntry entry : buffer.below(e.getValue().offset(), o.committed())) {
        records.add(new ProducerRecord<>(topic, tp.partition(), entry.recordKey(), entry.value()));
      }
    }
    return writer.commit(records, offsets, consumer.groupMetadata());
  }

  private static void confirm(Map<TopicPartition, OffsetAndMetadata> offsets,
      Map<TopicPartition, ChangelogBuffer> sent) {
    sent.forEach((tp, buffer) -> buffer.committed(offsets.get(tp).offset()));
  }

  private static Exception unwrap(Throwable e) {
    Throwable t = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
    return t instanceof Exception ex ? ex : new IllegalStateException(t);
  }
}
