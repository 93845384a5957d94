package io.github.vertxdedup.journal;

import java.time.Duration;

/**
 * Where a replay stands; reported about once per {@link JournalOptions#getProgressInterval()} and once at the end.
 *
 * @param entriesRead entries delivered to the visitor so far (an accept batch counts one per id)
 * @param recordsRead records (queue excerpts) read so far
 * @param liveIds accepts read so far whose {@code expiresAtMs} is after the replay's start time (duplicates counted;
 *     claims and commits are not accepts, so a journal written by effect-first reports 0)
 * @param percent share of the records to replay that have been read, {@code 0..100}
 * @param entriesPerSecond entries read per second of elapsed time
 * @param elapsed time since the replay started
 */
public record ReplayProgress(long entriesRead, long recordsRead, long liveIds, double percent,
    double entriesPerSecond, Duration elapsed) {
}
