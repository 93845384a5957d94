package io.github.vertxdedup.inbox;

/**
 * The outcome of one {@link DedupInbox#execute}.
 *
 * @param verdict what the inbox decided
 * @param value what the work returned ({@link InboxVerdict#APPLIED}), else null
 * @param storedPayloadHash the payload hash of the row that decided a {@link InboxVerdict#DUPLICATE} or
 *     {@link InboxVerdict#CONFLICT} (null if it has none), else null
 * @param firstSeenMs when the deciding row was first seen, epoch milliseconds on the inbox's clock (the new row's for
 *     {@link InboxVerdict#APPLIED})
 * @param rememberUntilMs until when the deciding row is remembered, epoch milliseconds on the inbox's clock
 * @param <T> the type of the work's result
 */
public record InboxResult<T>(InboxVerdict verdict, T value, String storedPayloadHash, long firstSeenMs,
    long rememberUntilMs) {
}
