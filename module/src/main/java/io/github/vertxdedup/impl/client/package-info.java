/**
 * The event-bus client ({@code DedupClientImpl}, built by {@code DedupClient.create}): computes each event's partition
 * and sends the request to that partition's address, with the local codec in this JVM and JSON across a cluster.
 * Internal: not an API.
 *
 * <p>May use: {@code impl.protocol}, the service's API types, Vert.x. Must not use {@code impl.service},
 * {@code impl.journal} or the persistence journal: a client knows the contract, not the service behind it.
 */
package io.github.vertxdedup.impl.client;
