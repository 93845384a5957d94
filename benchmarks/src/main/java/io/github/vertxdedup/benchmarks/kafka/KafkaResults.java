package io.github.vertxdedup.benchmarks.kafka;

import io.github.vertxdedup.benchmarks.report.ResultsFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The results file of {@link KafkaConsumerThroughput}, read by {@link KafkaReport}: the workload, then each round's
 * scenarios in the order they ran. Written and read as JSON (Gson).
 *
 * @param date when the run started, ISO-8601 UTC
 * @param records records in the topic
 * @param partitions partitions of the topic
 * @param distinct distinct ids among the records (the rest are duplicates)
 * @param windowMs the dedup window W of the dedup consumer and of the Kafka Streams store, ms
 * @param streamsStore the Kafka Streams window store: {@code rocksdb} or {@code memory}
 * @param streamThreads stream threads of the Kafka Streams instance
 * @param availableProcessors {@link Runtime#availableProcessors()} of the harness's JVM
 * @param rounds the rounds in order
 * @param handlerDigests SHA-256 digests of the record's value each handler computes besides its ledger credit (its
 *     CPU work per record); 0 in files written before the option existed
 * @param journal the dedup consumer's journal: {@code none} (memory-only windows), {@code ASYNC} or {@code SYNC};
 *     {@code null} in files written before the option existed, which all ran memory-only
 * @param identity where the dedup consumer read the id: {@code header} ({@code message-id}) or {@code key};
 *     {@code null} in files written before the option existed, which all read the header
 */
public record KafkaResults(String date, int records, int partitions, int distinct, long windowMs, String streamsStore,
    int streamThreads, int availableProcessors, List<Round> rounds, int handlerDigests, String journal,
    String identity) {

  /** Scenario name of the plain Vert.x {@code KafkaConsumer}. */
  public static final String PLAIN = "plain-vertx";
  /** Scenario name of {@code DedupKafkaConsumer} in record-first mode. */
  public static final String RECORD_FIRST = "dedup-record-first";
  /** Scenario name of {@code DedupKafkaConsumer} in effect-first mode. */
  public static final String EFFECT_FIRST = "dedup-effect-first";
  /** Scenario name of the Kafka Streams window-store topology. */
  public static final String STREAMS = "kafka-streams";

  /**
   * One round: every scenario once, in turn.
   *
   * @param round 1-based
   * @param loadAverage the system's 1-minute load average when the round started (-1 where the OS does not say)
   * @param scenarios the scenarios in the order they ran
   */
  public record Round(int round, double loadAverage, List<Scenario> scenarios) {

    /**
     * The scenario of this name.
     *
     * @param name a scenario name
     * @return it, or {@code null} if it did not run in this round
     */
    public Scenario scenario(String name) {
      return scenarios.stream().filter(s -> s.name().equals(name)).findFirst().orElse(null);
    }
  }

  /**
   * One scenario's measurement.
   *
   * @param name the scenario
   * @param ns nanoseconds from subscribe (Kafka Streams: {@code start()}) until every record was through
   * @param firstRecordNs nanoseconds from the same start until the first record reached the consumer's code (the
   *     group join and first fetch)
   * @param recordsPerSec records over {@code ns}
   * @param cpu the CPU time the harness's JVM used over {@code ns}, by kind of thread; {@code null} where it was not
   *     measured: the Kafka Streams child (another JVM), a JVM without thread CPU time, and files written before the
   *     harness stored it
   */
  public record Scenario(String name, long ns, long firstRecordNs, double recordsPerSec, Cpu cpu) {}

  /**
   * CPU time of the harness's JVM by kind of thread over one scenario's timed interval (from subscribe until every
   * record was through), in nanoseconds summed over the threads of each kind; divide by {@link #records()} for the
   * figure per record. Kinds by thread name, as {@link ThreadCpu} sorts them. A thread that ended inside the
   * interval is not counted.
   *
   * @param pollNs the threads that call {@code KafkaConsumer.poll} ({@code vert.x-kafka-consumer-thread-*},
   *     {@code dedup-kafka-poll-*}), ns
   * @param eventLoopNs the Vert.x event loops ({@code vert.x-eventloop-thread-*}), ns
   * @param harnessNs the harness's {@code main} thread, ns
   * @param brokerNs every other thread: the in-process broker and the clients' background threads, ns
   */
  public record Cpu(long pollNs, long eventLoopNs, long harnessNs, long brokerNs) {

    /**
     * The consumer's CPU: its poll threads and the event loops, which run the consumer's code and the handler.
     *
     * @return {@code pollNs + eventLoopNs}, ns
     */
    public long consumerNs() {
      return pollNs + eventLoopNs;
    }
  }

  /**
   * Writes the results as indented JSON, creating parent directories.
   *
   * @param file the file (replaced if it exists)
   * @throws IOException if it cannot be written
   */
  public void write(Path file) throws IOException {
    ResultsFile.write(this, file);
  }

  /**
   * Reads a results file.
   *
   * @param file the file {@link #write} wrote
   * @return the results
   * @throws IOException if it cannot be read
   * @throws IllegalArgumentException if it holds no rounds
   */
  public static KafkaResults read(Path file) throws IOException {
    return ResultsFile.read(file, KafkaResults.class, KafkaResults::rounds, "round");
  }
}
