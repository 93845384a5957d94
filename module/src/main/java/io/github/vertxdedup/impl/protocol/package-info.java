/**
 * The wire contract shared by the service and its clients: how a request is decoded and validated
 * ({@code RequestDecoder} into {@code ParsedEvent}s, with its limits, over the fields of {@code EventField}, so
 * that a JSON body and a {@code DedupEvent} are checked alike), the local codec's requests and replies
 * ({@code LocalRequest}, {@code BatchReply}, {@code CommitBatchReply}, {@code Codecs}), failure codes
 * ({@code RequestFailure}), exact JSON numbers, and which partition owns an event ({@code PartitionRouting}: the
 * router, the partitions and the client all ask it, so they cannot disagree). Internal: not an API; its types are
 * public only because the service and the client packages share them.
 *
 * <p>May use: the service's API types, {@code window} (fingerprints), the persistence {@code journal}'s limits (the
 * claimer column), Vert.x. Must not use {@code impl.service}, {@code impl.client} or {@code impl.journal}, nor hold
 * any service state: everything here is stateless or a value confined to one request.
 */
package io.github.vertxdedup.impl.protocol;
