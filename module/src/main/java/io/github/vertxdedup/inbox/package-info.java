/**
 * The transactional inbox on the Vert.x SQL client: an event's identity is inserted into an inbox table in the same
 * database transaction as its effect, so the effect and the record of the id commit together or not at all
 * ({@link io.github.vertxdedup.inbox.DedupInbox}, configured by {@link io.github.vertxdedup.inbox.DedupInboxOptions};
 * an event's identity in the table is an {@link io.github.vertxdedup.inbox.InboxEntry}, the answer an
 * {@link io.github.vertxdedup.inbox.InboxResult}). The Kafka consumer uses it in
 * {@link io.github.vertxdedup.kafka.AtomicityMode#INBOX}, with its window in front as a filter; any other source
 * calls {@link io.github.vertxdedup.inbox.DedupInbox#execute} itself, or
 * {@link io.github.vertxdedup.inbox.DedupInbox#process} to put the event-bus service's window in front.
 *
 * <p>May use: the service's API ({@code io.github.vertxdedup}, for {@code process}), {@code time}, Vert.x and its SQL
 * client ({@code io.vertx.sqlclient}, an optional dependency: an application that uses the inbox declares a driver,
 * {@code vertx-pg-client}). Its factory reaches {@code inbox.impl}, and only it. Must not use {@code kafka} or the
 * service's implementation.
 */
package io.github.vertxdedup.inbox;
