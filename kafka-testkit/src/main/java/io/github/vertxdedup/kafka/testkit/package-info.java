/**
 * A one-node Kafka cluster inside the JVM for tests, examples and benchmarks ({@link
 * io.github.vertxdedup.kafka.testkit.LocalKafka}), and a JUnit 5 extension that starts one per test class
 * ({@link io.github.vertxdedup.kafka.testkit.LocalKafkaExtension}); a real PostgreSQL server in a private cluster
 * ({@link io.github.vertxdedup.kafka.testkit.LocalPostgres}), for the transactional inbox's tests, example and
 * benchmark; clustered Vert.x members on loopback with the Hazelcast cluster manager
 * ({@link io.github.vertxdedup.kafka.testkit.LoopbackCluster}), for the service across a cluster.
 *
 * <p>May use: Kafka's own test kit and clients, JUnit, the machine's PostgreSQL binaries (run as
 * processes), Vert.x core and its Hazelcast cluster manager. Must not use any other package of this project: it is a test
 * fixture, and the code under test must not depend on it.
 */
package io.github.vertxdedup.kafka.testkit;
