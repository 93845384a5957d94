package io.github.vertxdedup.benchmarks.streams;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * The Kafka Streams dedup topology the Kafka consumer benchmark measures {@code DedupKafkaConsumer} against: a
 * processor with a window store that remembers each id for the dedup window W and forwards only ids it has not seen
 * within W, followed by the handler work of the other scenarios: {@code bench.handlerDigests} SHA-256 digests of the
 * record's value, then a credit by id in a map (a {@code ConcurrentHashMap}, since a topology may run several stream
 * threads; the harness's Vert.x scenarios credit a {@code HashMap} per thread).
 *
 * <p>Topology: source (the benchmark topic, String key and value) → {@code dedup} (reads the id from the
 * {@code message-id} header, looks it up in the window store over [t - W, t], where t is the record's timestamp;
 * if absent, puts it at t and forwards the record; if present, drops it) → {@code handler} (the digests, then the
 * credit). The store is a window store with retention W and window size W, no duplicates retained, change-logged
 * (the default, so a restarted instance restores it), uncached; RocksDB or in-memory ({@code bench.store}).
 *
 * <p>Protocol: the benchmark harness starts this main in a child JVM (its classpath holds kafka-streams and
 * kafka-clients 4.x, which cannot share a classpath with vertx-kafka-client's 3.7.1), then writes one command per
 * line on standard input:
 * <ul>
 *   <li>{@code run <applicationId>}: starts a new {@link KafkaStreams} instance with that application id (so a new
 *       consumer group and new changelog topics) reading the topic from the start, waits until the dedup processor
 *       has seen {@code bench.records} records, stops the instance, deletes its local state, and prints one line
 *       {@code result <applicationId> <ns> <firstRecordNs> <records> <ledgerIds> <creditedMoreThanOnce> <digests>}:
 *       nanoseconds from {@code start()} until the last record was seen and until the first was, records seen,
 *       distinct ids the handler credited, ids it credited more than once (0 when the topology is right), and the
 *       SHA-256 digests its handler computed per record (so the harness can check they are the ones it asked for);</li>
 *   <li>{@code quit}: exits.</li>
 * </ul>
 * A failure prints {@code error <message>} and exits with status 1. Kafka's own logging goes to standard error
 * (slf4j-simple; level through {@code -Dorg.slf4j.simpleLogger.defaultLogLevel}).
 *
 * <p>System properties (all required but the last four): {@code bench.bootstrap} (bootstrap servers),
 * {@code bench.topic}, {@code bench.records} (records in the topic), {@code bench.windowMs} (W, ms, default
 * 600000, the dedup consumer's window in the harness), {@code bench.store} ({@code rocksdb}, the default, or
 * {@code memory}), {@code bench.streamThreads} (default 1), {@code bench.handlerDigests} (SHA-256 digests of the
 * value the handler computes per record besides its credit, 0..1000, default 0: the harness passes its own).
 *
 * <p>Not thread-safe; one run at a time, driven from {@code main}'s thread.
 */
public final class StreamsDedupBaseline {

  /** The header carrying the record's id, as in the harness's producer. */
  static final String ID_HEADER = "message-id";

  private static final String STORE = "dedup-ids";

  private final String bootstrap;
  private final String topic;
  private final long records;
  private final Duration window;
  private final boolean rocksDb;
  private final int streamThreads;
  private final Path stateRoot;
  private final int handlerDigests;

  private StreamsDedupBaseline(String bootstrap, String topic, long records, Duration window, boolean rocksDb,
      int streamThreads, Path stateRoot, int handlerDigests) {
    this.handlerDigests = handlerDigests;
    this.bootstrap = bootstrap;
    this.topic = topic;
    this.records = records;
    this.window = window;
    this.rocksDb = rocksDb;
    this.streamThreads = streamThreads;
    this.stateRoot = stateRoot;
  }

  /**
   * Reads the configuration from system properties and serves {@code run} commands from standard input until
   * {@code quit} or its end.
   *
   * @param args ignored
   * @throws IllegalArgumentException if a required property is missing or malformed
   */
  public static void main(String[] args) {
    PrintStream out = System.out;
    try {
      String store = System.getProperty("bench.store", "rocksdb");
      if (!store.equals("rocksdb") && !store.equals("memory")) {
        throw new IllegalArgumentException("bench.store must be rocksdb or memory but was " + store);
      }
      long windowMs = Long.getLong("bench.windowMs", 600_000L);
      if (windowMs <= 0) {
        throw new IllegalArgumentException("bench.windowMs must be > 0 but was " + windowMs);
      }
      int digests = intProperty("bench.handlerDigests", 0);
      if (digests < 0 || digests > 1000) {
        throw new IllegalArgumentException("bench.handlerDigests must be in 0..1000 but was " + digests);
      }
      int threads = intProperty("bench.streamThreads", 1);
      if (threads < 1) {
        throw new IllegalArgumentException("bench.streamThreads must be >= 1 but was " + threads);
      }
      long records = Long.parseLong(required("bench.records"));
      if (records < 1) {
        throw new IllegalArgumentException("bench.records must be >= 1 but was " + records);
      }
      Path stateRoot = Files.createTempDirectory(
          Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir"))), "streams-baseline");
      StreamsDedupBaseline baseline = new StreamsDedupBaseline(required("bench.bootstrap"), required("bench.topic"),
          records, Duration.ofMillis(windowMs), store.equals("rocksdb"), threads, stateRoot, digests);
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line = in.readLine(); line != null && !line.equals("quit"); line = in.readLine()) {
        String[] words = line.trim().split("\\s+");
        if (words.length != 2 || !words[0].equals("run")) {
          throw new IllegalArgumentException("command must be 'run <applicationId>' or 'quit' but was " + line);
        }
        out.println(baseline.run(words[1]));
        out.flush();
      }
      baseline.deleteState();
    } catch (Exception e) {
      out.println("error " + e);
      out.flush();
      e.printStackTrace();
      System.exit(1);
    }
  }

  /** An integer system property, or {@code absent} if unset; a malformed value is an error naming the property. */
  private static int intProperty(String name, int absent) {
    String v = System.getProperty(name);
    if (v == null) {
      return absent;
    }
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be an integer but was '" + v + "'", e);
    }
  }

  private static String required(String name) {
    String v = System.getProperty(name);
    if (v == null || v.isBlank()) {
      throw new IllegalArgumentException("system property " + name + " is required");
    }
    return v;
  }

  /**
   * Builds the topology: source → dedup (window store) → handler.
   *
   * @param seen counts every record the dedup processor receives
   * @param first set to {@link System#nanoTime()} when the first record arrives
   * @param ledger the handler's credits per id
   * @return the topology
   */
  Topology topology(LongAdder seen, AtomicLong first, Map<String, Long> ledger) {
    WindowBytesStoreSupplier supplier = rocksDb
        ? Stores.persistentWindowStore(STORE, window, window, false)
        : Stores.inMemoryWindowStore(STORE, window, window, false);
    StoreBuilder<WindowStore<String, Long>> store =
        Stores.windowStoreBuilder(supplier, Serdes.String(), Serdes.Long());
    Topology t = new Topology();
    t.addSource("source", new StringDeserializer(), new StringDeserializer(), topic);
    t.addProcessor("dedup", () -> new DedupProcessor(window.toMillis(), seen, first), "source");
    t.addStateStore(store, "dedup");
    t.addProcessor("handler", () -> new HandlerProcessor(ledger, handlerDigests), "dedup");
    return t;
  }

  private String run(String applicationId) throws InterruptedException, IOException {
    LongAdder seen = new LongAdder();
    AtomicLong first = new AtomicLong();
    // Room for every id up front, as the harness's ledgers have (its table is still allocated at the first credit).
    Map<String, Long> ledger = new ConcurrentHashMap<>((int) Math.min(Integer.MAX_VALUE, records));
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(StreamsConfig.STATE_DIR_CONFIG, stateRoot.toString());
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, streamThreads);
    // One broker: the changelog topics of the window store must have one replica.
    p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
    p.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
    p.put(StreamsConfig.consumerPrefix("max.poll.records"), 1000);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    KafkaStreams streams = new KafkaStreams(topology(seen, first, ledger), p);
    streams.setUncaughtExceptionHandler(e -> {
      failure.compareAndSet(null, e);
      return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    });
    long start = System.nanoTime();
    streams.start();
    long deadline = start + TimeUnit.SECONDS.toNanos(600);
    long ns;
    try {
      while (seen.sum() < records) {
        if (failure.get() != null) {
          throw new IllegalStateException(applicationId + " failed", failure.get());
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(applicationId + " saw " + seen.sum() + " of " + records + " records");
        }
        Thread.sleep(1);
      }
      ns = System.nanoTime() - start;
    } finally {
      streams.close(Duration.ofSeconds(60));
      streams.cleanUp();
    }
    long twice = ledger.values().stream().filter(v -> v != 1L).count();
    return "result " + applicationId + " " + ns + " " + (first.get() - start) + " " + seen.sum() + " " + ledger.size()
        + " " + twice + " " + handlerDigests;
  }

  /** Deletes the state directory of every run (each run's own is already cleaned up by Kafka Streams). */
  private void deleteState() throws IOException {
    try (Stream<Path> paths = Files.walk(stateRoot)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  /**
   * Forwards a record only if its id is not in the window store within W before the record's timestamp, and then
   * remembers it at that timestamp. A record without the id header is dropped (and counted as seen).
   */
  static final class DedupProcessor implements Processor<String, String, String, String> {

    private final long windowMs;
    private final LongAdder seen;
    private final AtomicLong first;
    private ProcessorContext<String, String> context;
    private WindowStore<String, Long> store;

    DedupProcessor(long windowMs, LongAdder seen, AtomicLong first) {
      this.windowMs = windowMs;
      this.seen = seen;
      this.first = first;
    }

    @Override
    public void init(ProcessorContext<String, String> context) {
      this.context = context;
      this.store = context.getStateStore(STORE);
    }

    @Override
    public void process(Record<String, String> record) {
      if (first.get() == 0) {
        first.compareAndSet(0, System.nanoTime());
      }
      try {
        Header h = record.headers().lastHeader(ID_HEADER);
        if (h == null) {
          return;
        }
        String id = new String(h.value(), StandardCharsets.UTF_8);
        long t = record.timestamp();
        boolean known;
        try (WindowStoreIterator<Long> it = store.fetch(id, t - windowMs, t)) {
          known = it.hasNext();
        }
        if (!known) {
          store.put(id, t, t);
          context.forward(record.withKey(id));
        }
      } finally {
        seen.increment();
      }
    }
  }

  /**
   * The handler work of every scenario of the benchmark: {@code digests} SHA-256 digests of the record's value (as
   * the harness's handlers compute them), then one credit per handled record in a concurrent map.
   */
  static final class HandlerProcessor implements Processor<String, String, Void, Void> {

    private final Map<String, Long> ledger;
    private final int digests;
    private final MessageDigest sha256;
    /** Sums a byte of every digest (a computation the handler's result depends on, kept for symmetry with the harness). */
    private long sink;

    HandlerProcessor(Map<String, Long> ledger, int digests) {
      this.ledger = ledger;
      this.digests = digests;
      try {
        this.sha256 = MessageDigest.getInstance("SHA-256");
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException(e);
      }
    }

    @Override
    public void process(Record<String, String> record) {
      if (digests > 0) {
        byte[] bytes = record.value().getBytes(StandardCharsets.UTF_8);
        long acc = 0;
        for (int i = 0; i < digests; i++) {
          sha256.update(bytes);
          acc += sha256.digest()[0];
        }
        sink += acc;
      }
      ledger.merge(record.key(), 1L, Long::sum);
    }

  }
}
