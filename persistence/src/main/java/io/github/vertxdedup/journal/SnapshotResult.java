package io.github.vertxdedup.journal;

import java.time.Duration;

/**
 * What {@link Journal#writeSnapshot} wrote.
 *
 * @param position the journal index of the last record the snapshot covers: a restart that loads it replays the
 *     records after it
 * @param entries live entries written (ids and keys)
 * @param claims open claims written
 * @param recordsRead journal records read after the base
 * @param baseIndex the position of the snapshot it was written from, or {@link Journal#NO_INDEX} if it was written
 *     from a replay of the whole journal
 * @param bytes the snapshot file's length
 * @param snapshotsDeleted older snapshots deleted after it was written
 * @param elapsed how long it took
 */
public record SnapshotResult(long position, long entries, long claims, long recordsRead, long baseIndex, long bytes,
    int snapshotsDeleted, Duration elapsed) {
}
