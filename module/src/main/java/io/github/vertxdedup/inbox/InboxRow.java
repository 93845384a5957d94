package io.github.vertxdedup.inbox;

/**
 * A live row of the inbox table, as {@link DedupInbox#liveRows} reads it (to rebuild a window).
 *
 * @param id the event id
 * @param businessKey the business key, or null
 * @param payloadHash the payload hash, or null
 * @param firstSeenMs when it was first seen, epoch milliseconds on the inbox's clock
 * @param rememberUntilMs from when it counts as absent, epoch milliseconds on the inbox's clock
 */
public record InboxRow(String id, String businessKey, String payloadHash, long firstSeenMs, long rememberUntilMs) {
}
