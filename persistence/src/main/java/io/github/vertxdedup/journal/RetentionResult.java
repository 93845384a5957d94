package io.github.vertxdedup.journal;

/**
 * What {@link Journal#deleteExpiredCycles} did.
 *
 * @param deletedCycles cycle files deleted by this call
 * @param oldestKeptCycle the oldest cycle still on disk (where the next replay starts or earlier), or -1 if none
 * @param keptCycles cycle files still on disk
 */
public record RetentionResult(int deletedCycles, int oldestKeptCycle, int keptCycles) {
}
