package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.window.WindowStats;
import io.vertx.core.json.JsonObject;
import java.util.function.LongConsumer;

/**
 * The counters of one partition: verdicts, claims, refusals and journal reopens, counted by its decisions
 * ({@link PartitionCore}, {@link Claims}) and its request handling ({@link PartitionRequests}), read for the
 * {@code stats} reply and the meters ({@link PartitionMetrics.Snapshot}). One object per partition for its whole
 * deployment: the window and claims rebuilt from the journal after a failed write count into the same object, so a
 * counter never runs backwards.
 *
 * <p>Plain fields, no atomics: confined to the partition's event loop (not thread-safe); the meters read the
 * snapshot the partition publishes, never these fields.
 */
final class PartitionCounters {

  /** Accepted verdicts (claims included). */
  long accepted;
  /** Duplicate verdicts. */
  long duplicates;
  /** Conflict verdicts (same id, other payload hash). */
  long conflicts;
  /** In-flight verdicts (a live claim holds the id or key). */
  long inFlight;
  /** Unknown verdicts (older than the partition covers, under {@code UncoveredPolicy.UNKNOWN}). */
  long unknown;
  /** Accepts of events older than the partition covers. */
  long uncovered;
  /** Accepts of new ids within the window after a takeover without the previous owner's journal. */
  long unvouched;
  /** Events whose event time is older than now minus the window. */
  long lateDeliveries;
  /** Claims made. */
  long claims;
  /** Claims committed. */
  long commits;
  /** Claims released (one by one, or all of a restarted claimer's). */
  long releases;
  /** Claims forgotten because their lease ran out. */
  long expiredLeases;
  /** New events refused because the window, with the entries claims reserve, was full under REJECT. */
  long capacityRejects;
  /** Keys not remembered because the window's table could not grow (their ids were). */
  long keysNotRecorded;
  /** Requests (or batch elements) refused with 400. */
  long badRequests;
  /** Requests (or batch elements) refused with 409. */
  long stateConflicts;
  /** Requests (or batch elements) refused with 503. */
  long unavailable;
  /** Requests refused with 500. */
  long internalErrors;
  /** Times the journal was closed and reopened after a failed write. */
  long journalReopens;

  private LongConsumer duplicateAges = age -> { };

  /** @param sink receives the age in ms of every duplicate (the duplicate-age histogram) */
  void duplicateAges(LongConsumer sink) {
    this.duplicateAges = sink;
  }

  /**
   * Counts a duplicate verdict and hands its age to the duplicate-age sink.
   *
   * @param ageMs time since the first sighting, ms
   */
  void duplicate(long ageMs) {
    duplicates++;
    duplicateAges.accept(ageMs);
  }

  /**
   * Counts the failure of one request, or one element of a batch, by its failure code.
   *
   * @param code a {@link io.github.vertxdedup.DedupFailure} code: 409 and 400 have their counters, any other non-zero
   *     code counts as unavailable; 0 (no failure) counts nothing
   */
  void failure(int code) {
    if (code == io.github.vertxdedup.DedupFailure.STATE_CONFLICT) {
      stateConflicts++;
    } else if (code == io.github.vertxdedup.DedupFailure.BAD_REQUEST) {
      badRequests++;
    } else if (code != 0) {
      unavailable++;
    }
  }

  /**
   * The decision counters of the {@code stats} reply, with the window's figures beside them.
   *
   * @param partition the partition's number
   * @param w the window's counters now
   * @param claimsHeld live claims held now
   * @param coveredFromMs the earliest event time the partition covers now, clock ms
   * @param windowMs the window's length, ms
   * @param bucketMs the window's bucket width, ms
   * @return a new JSON object
   */
  JsonObject decisionsJson(int partition, WindowStats w, int claimsHeld, long coveredFromMs, long windowMs,
      long bucketMs) {
    return new JsonObject()
        .put("partition", partition)
        .put("accepted", accepted)
        .put("duplicates", duplicates)
        .put("conflicts", conflicts)
        .put("inFlight", inFlight)
        .put("unknown", unknown)
        .put("uncovered", uncovered)
        .put("unvouched", unvouched)
        .put("lateDeliveries", lateDeliveries)
        .put("claims", claims)
        .put("commits", commits)
        .put("releases", releases)
        .put("expiredLeases", expiredLeases)
        .put("claimsHeld", claimsHeld)
        .put("held", w.held())
        .put("expired", w.expired())
        .put("earlyEvictions", w.earlyEvictions())
        .put("rejected", w.rejected() + capacityRejects)
        .put("keysNotRecorded", keysNotRecorded)
        .put("tableBytes", w.tableBytes())
        .put("bytesPerHeldId", w.bytesPerHeldId())
        .put("coveredFromMs", coveredFromMs)
        .put("windowMs", windowMs)
        .put("bucketMs", bucketMs);
  }

  /**
   * What the meters read now.
   *
   * @param w the window's counters now
   * @param claimsHeld live claims held now
   * @param pending replies waiting for their journal write
   * @param ready whether the partition answers
   * @return the snapshot to publish
   */
  PartitionMetrics.Snapshot snapshot(WindowStats w, int claimsHeld, int pending, boolean ready) {
    return new PartitionMetrics.Snapshot(accepted, duplicates, conflicts, inFlight, unknown, uncovered, unvouched,
        lateDeliveries, expiredLeases, w.earlyEvictions(), w.rejected() + capacityRejects, w.held(), claimsHeld,
        w.bytesPerHeldId(), pending, ready);
  }
}
