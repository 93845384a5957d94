/**
 * The JSON form of the options classes ({@code DedupOptions}, {@code DedupKafkaOptions},
 * {@code DedupKafkaVerticleOptions}): {@code OptionSchema}, the one reader that checks every key of an options object
 * against its known keys and their JSON types, and names the key and the expected type in every error.
 * Internal: not an API; public only because the options classes live in different API packages.
 *
 * <p>May use: Vert.x JSON types and {@code impl.protocol}'s exact-integer rule ({@code JsonNumbers}), so that options
 * and wire fields read numbers alike. Must not use the service, the client, the journal or the Kafka integration.
 */
package io.github.vertxdedup.impl.options;
