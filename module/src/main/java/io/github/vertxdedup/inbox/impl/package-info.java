/**
 * The implementation of {@link io.github.vertxdedup.inbox.DedupInbox} on PostgreSQL through the Vert.x SQL client:
 * the statements, the schema check and the retention timer.
 *
 * <p>May use: {@code inbox}, {@code time}, Vert.x and its SQL client. Used only by {@code inbox}.
 */
package io.github.vertxdedup.inbox.impl;
