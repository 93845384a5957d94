package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.impl.journal.ChroniclePartitionJournal;
import io.github.vertxdedup.impl.journal.NoJournal;
import io.github.vertxdedup.impl.journal.PartitionJournal;
import io.github.vertxdedup.time.DedupClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * One partition of the dedup service deployed in this JVM and called directly, without the event bus: what the Kafka
 * consumer needs of the window of one topic-partition. Its decisions are the partition's own: the same validation,
 * verdicts, journal writes, {@code maxPending} bound and failures as a request sent to the partition's address, and
 * a reply only after its journal write (and every earlier one) has completed, in decision order. What it saves per
 * call: the event bus's reply registration, timeout timer and codec, and two thread hops when the caller runs on the
 * partition's context. The partition still listens on {@code <address>.0}, so a
 * {@link io.github.vertxdedup.DedupClient} elsewhere in the JVM can look at it ({@code lookup}, {@code stats}).
 *
 * <h2>Failures</h2>
 * The futures of the decisions fail with a {@link io.vertx.core.eventbus.ReplyException} of type
 * {@code RECIPIENT_FAILURE} whose {@code failureCode()} is one of {@link DedupFailure}, exactly when a request over
 * the event bus would: {@link DedupFailure#BAD_REQUEST} for an invalid event (the message names the field and its
 * limit; in a batch, any invalid event or more than {@code maxBatch} events fails the whole batch),
 * {@link DedupFailure#STATE_CONFLICT} for a commit or release without a live claim of that token,
 * {@link DedupFailure#UNAVAILABLE} while the partition is not {@link PartitionState#READY}, when {@code maxPending}
 * replies wait for their journal write, when the journal write of the decision failed, or for a new event the full
 * window refuses, and {@link DedupFailure#INTERNAL_ERROR} for a fault of the partition. A batch answers each event
 * on its own: a refused event is that element's failure, the others are decided.
 *
 * <h2>Threads</h2>
 * Thread-safe. Called on the partition's {@link #context()}, a decision is made before the method returns, and its
 * future is already complete unless its reply waits for a journal write; from another thread it is handed to that
 * context first. The futures complete on the partition's context (not the caller's): a handler set on one runs on
 * the partition's event loop, or on the caller's thread if the future was already complete. There is no request
 * timeout: the partition always answers, at once, after its journal write, or with a 503 when it stops. Do not
 * change a {@link DedupEvent} until the future of the call carrying it has completed.
 */
public interface LocalPartition {

  /**
   * Deploys partition 0 of the service {@code options} describe, listening on {@code <address>.0}, on a journal.
   * This is how every partition outside {@link io.github.vertxdedup.DedupVerticle} is deployed. Its owner logs its
   * readiness: the partition's own line is at DEBUG.
   *
   * @param vertx the Vert.x instance to deploy on
   * @param options validated options
   * @param clock the clock of the window and the leases
   * @param journal the partition's journal
   * @param meters where to register the partition's meters and their tags, or null for none
   * @return completes with the partition once it answers, or while another owner holds its journal (it is then
   *     {@link PartitionState#RECOVERING} and retries with a backoff); fails if its first recovery failed for any
   *     other reason
   */
  static Future<LocalPartition> deploy(Vertx vertx, DedupOptions options, DedupClock clock, PartitionJournal journal,
      Meters meters) {
    return PartitionRequests.deploy(vertx,
        new PartitionVerticle(options, 0, clock, journal, meters == null ? null : meters.registry())
            .meterTags(meters == null ? null : meters.tags()).ownerLogsReadiness());
  }

  /**
   * Deploys a memory-only partition ({@link #deploy} on {@link NoJournal}): it forgets everything when undeployed.
   *
   * @param vertx the Vert.x instance to deploy on
   * @param options validated options
   * @param clock the clock of the window and the leases
   * @param meters where to register the partition's meters and their tags, or null for none
   * @return completes with the partition once it answers
   */
  static Future<LocalPartition> deployInMemory(Vertx vertx, DedupOptions options, DedupClock clock,
      Meters meters) {
    return deploy(vertx, options, clock, NoJournal.INSTANCE, meters);
  }

  /**
   * Deploys a partition over the Chronicle Queue journal in {@code dir} ({@link #deploy} on a
   * {@link ChroniclePartitionJournal} with the options' {@code windowMs} and {@code journalSync}); the directory's
   * lock fences it from any other owner of the journal.
   *
   * @param vertx the Vert.x instance to deploy on
   * @param options validated options
   * @param clock the clock of the window and the leases; the journal records its instants
   * @param dir the journal directory
   * @param meters where to register the partition's meters and their tags, or null for none
   * @return as {@link #deploy}
   */
  static Future<LocalPartition> deployJournaled(Vertx vertx, DedupOptions options, DedupClock clock, Path dir,
      Meters meters) {
    return deploy(vertx, options, clock,
        new ChroniclePartitionJournal(vertx, dir, options.getWindowMs(), options.getJournalSync(), clock,
            options.getJournalSnapshotEntries()), meters);
  }

  /** @return the event-bus address the partition also listens on, {@code <address>.0} */
  String address();

  /** @return the context the partition runs on: call it from there to save the thread hops */
  Context context();

  /** @return the partition's state now; any thread */
  PartitionState state();

  /** @return why the partition is {@link PartitionState#FAILED} or recovering again, or "" */
  String failure();

  /**
   * {@code check}: a first sighting is recorded and answered ACCEPTED, a repeat DUPLICATE (see
   * {@link io.github.vertxdedup.DedupClient#check}).
   *
   * @param event the event
   * @return its result, once journaled; fails as the type says
   */
  Future<DedupResult> check(DedupEvent event);

  /**
   * {@code claim}: holds a new id under a lease and answers ACCEPTED with a claim token (see
   * {@link io.github.vertxdedup.DedupClient#claim}).
   *
   * @param event the event; its {@code claimer} names the claiming process, if set
   * @return its result, once journaled; fails as the type says
   */
  Future<DedupResult> claim(DedupEvent event);

  /**
   * {@code commit}: the claim of the event's token enters the window, answered COMMITTED.
   *
   * @param event the event, with its claim token
   * @return its result, once journaled; fails with 409 without a live claim of that token
   */
  Future<DedupResult> commit(DedupEvent event);

  /**
   * {@code release}: the claim of the event's token is forgotten, answered RELEASED.
   *
   * @param event the event, with its claim token
   * @return its result, once journaled; fails with 409 without a live claim of that token
   */
  Future<DedupResult> release(DedupEvent event);

  /**
   * {@code checkBatch}: {@link #check} of each event in order, with the window's cache misses overlapped.
   *
   * @param events at most {@code maxBatch} events
   * @return one element per event, in order: its result or its own failure; once journaled
   */
  Future<List<DedupBatchResult>> checkBatch(List<DedupEvent> events);

  /**
   * {@code claimBatch}: {@link #claim} of each event in order.
   *
   * @param events at most {@code maxBatch} events
   * @return one element per event, in order: its result or its own failure; once journaled
   */
  Future<List<DedupBatchResult>> claimBatch(List<DedupEvent> events);

  /**
   * {@code commitBatch}: {@link #commit} of each event in order, each answered on its own.
   *
   * @param events at most {@code maxBatch} events, each with its claim token
   * @return one result per event, in order (a commit without a live claim is that element's 409); once journaled
   */
  Future<List<DedupCommitResult>> commitBatch(List<DedupEvent> events);

  /**
   * Journals a committed consumer offset of {@code topic}/{@code topicPartition}: a restart restores the highest
   * offset recorded per topic-partition ({@link #committedOffset}).
   *
   * @param topic the topic; not empty, at most 255 bytes in UTF-8
   * @param topicPartition the topic's partition, {@code >= 0}
   * @param offset the committed offset (the next offset to consume), {@code >= 0}
   * @return completes once the offset is durable under the journal's policy; fails with
   *     {@link IllegalArgumentException} for an invalid argument, {@link IllegalStateException} while the partition
   *     is not ready, or the journal's failure (the partition then reopens its journal)
   */
  Future<Void> commitOffset(String topic, int topicPartition, long offset);

  /**
   * @param topic the topic
   * @param topicPartition the topic's partition
   * @return the highest committed offset recorded for the topic-partition (journaled before and recovered at start,
   *     or committed since), or -1 if none was recorded
   */
  Future<Long> committedOffset(String topic, int topicPartition);

  /**
   * @return the entries (ids and business keys) the window holds now, for its owner's log line; fails with
   *     {@link IllegalStateException} while the partition is not ready
   */
  Future<Long> heldEntries();

  /**
   * Sets the instant from which the partition covers event times: an event older than it whose id is not remembered
   * is answered as one the partition does not cover ({@code uncoveredPolicy}), a newer one as usual. A window starts
   * out covering from when its journal was first opened (or from its own start, in memory), which after a rebuild
   * from another source is too late: the rebuild that put every id of its window from {@code fromMs} on into the
   * window (journaled like any accept) says so here, and the earlier instant is journaled first, so a restart on
   * this machine keeps it. It may also be later than what the partition claimed: a rebuild whose source lost
   * records the journal lacks sets the instant after which nothing was lost. The window's own memory still limits
   * the coverage ({@code now - W} at bucket precision, or later after an early eviction).
   *
   * @param fromMs the instant, epoch milliseconds, {@code 0 <= fromMs <= now}
   * @return the earliest event time the partition covers now, epoch milliseconds, once {@code fromMs} is durable;
   *     fails with {@link IllegalArgumentException} for {@code fromMs} outside its range, with
   *     {@link IllegalStateException} while the partition is not ready, or with the journal's I/O error (the
   *     coverage is then unchanged)
   */
  Future<Long> coverFrom(long fromMs);

  /**
   * Releases every live claim held by {@code claimer}, journaled: a consumer that takes a partition over calls it
   * with its own instance id before it claims anything, so the claims its previous run left open when it was killed
   * are released at once rather than after their leases. Claims of other claimers, and claims that name nobody,
   * keep their leases.
   *
   * @param claimer the claimer (a consumer's instance id); not null
   * @return the number of claims released, once their releases are durable under the journal's policy; fails with
   *     {@link IllegalStateException} while the partition is not ready, or the journal's failure (the partition then
   *     reopens its journal, and the claims come back from it)
   */
  Future<Integer> releaseClaimsOf(String claimer);

  /**
   * Undeploys the partition: new calls are answered 503 at once, the journal is flushed and closed, and the replies
   * that waited for it are sent (or failed with 503 if their write did not complete).
   *
   * @return completes once undeployed
   */
  Future<Void> undeploy();

  /**
   * Where a partition deployed through {@link LocalPartition} registers its meters, and the tags that name it there:
   * its identity, stable across restarts ({@link #windowTags}: the Kafka consumer's window of a
   * topic-partition is tagged with the {@code group}, {@code topic} and {@code partition} the consumer's own meters of
   * the partition carry).
   *
   * @param registry the registry
   * @param tags the partition's identity
   */
  record Meters(MeterRegistry registry, Tags tags) {

    /**
     * @throws NullPointerException if either is null
     */
    public Meters {
      Objects.requireNonNull(registry, "registry");
      Objects.requireNonNull(tags, "tags");
    }

    /**
     * The meters of the Kafka consumer's window of a topic-partition.
     *
     * @param registry the registry
     * @param address the consumer's dedup address ({@code dedup.address})
     * @param groupId the consumer group
     * @param topic the topic
     * @param partition the Kafka partition
     * @return tagged {@code address}, {@code group}, {@code topic} and {@code partition}
     *     ({@link #windowTags})
     */
    public static Meters kafkaWindow(MeterRegistry registry, String address, String groupId, String topic,
        int partition) {
      return new Meters(registry, windowTags(address, groupId, topic, partition));
    }

    /**
     * The identity of a window: the four tags every window meter carries.
     *
     * @param address the service's address, or the Kafka consumer's dedup address
     * @param group the consumer group, or "" for a partition of the service
     * @param topic the topic, or "" for a partition of the service
     * @param partition the partition's number (the Kafka partition for the consumer's window)
     * @return the tags
     */
    public static Tags windowTags(String address, String group, String topic, int partition) {
      return Tags.of("address", address, "group", group, "topic", topic, "partition", Integer.toString(partition));
    }
  }
}
