package io.github.vertxdedup.benchmarks.kafka;

import static io.github.vertxdedup.benchmarks.kafka.KafkaConsumerThroughput.intProperty;
import static io.github.vertxdedup.benchmarks.kafka.KafkaConsumerThroughput.orderOf;

import io.github.vertxdedup.examples.demo.BillingConsumer;
import io.github.vertxdedup.examples.demo.Payment;
import io.github.vertxdedup.examples.tools.Processes;
import io.github.vertxdedup.kafka.testkit.LocalKafka;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.commons.io.FileUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The Kafka consumer's restart: from a SIGKILL to the first record the restarted consumer settles (a duplicate dropped
 * or an effect applied), for several configurations of the consumer's JVM side by side in one run, on one in-process
 * KRaft broker.
 *
 * <p>The consumer is the demo's {@link BillingConsumer} in a JVM of its own (the project's JVM flags, 256 MB heap):
 * effect-first, a Chronicle journal per partition, static group membership and a 6 s session timeout. A producer
 * publishes payments to a 4-partition topic at {@code bench.rate} a second (default 200) for the whole run, so a
 * restarted consumer always has records to settle. For each configuration and round: a new group whose offsets start
 * at the topic's end, a new work directory; run 1 starts and settles its first record, is killed with SIGKILL
 * {@code bench.killAfterMs} (default 1,000) later, run 2 starts at once on the same journal and group, and is timed
 * from the kill to: its JVM in {@code main}, subscribed, partitions assigned with their windows rebuilt from the
 * journal, and its first settled record (the lines {@link BillingConsumer} prints); then it is stopped. Rounds run the
 * configurations in turn, the order rotating ({@link KafkaConsumerThroughput#orderOf}); the summary takes medians
 * and the median over rounds of each configuration's ratio to the first in the same round.
 *
 * <p>Configurations (extra JVM options of the consumer): {@code no-archive} (none), and {@code appcds}: a dynamic
 * class-data sharing archive of the consumer's classes ({@code -XX:SharedArchiveFile}), which the harness makes before
 * the first round from one consumer run with {@code -XX:ArchiveClassesAtExit} that settles a record and stops
 * normally. {@code -Dbench.extraJvmOptions} (space-separated) adds a third, {@code extra}: those options, no archive.
 *
 * <p>Run: {@code java <project JVM flags> -cp benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)
 * io.github.vertxdedup.benchmarks.kafka.ConsumerRestartBenchmark} with {@code -Dbench.rounds=N} (default 3).
 */
public final class ConsumerRestartBenchmark {

  private static final String TOPIC = "payment.succeeded";
  private static final int PARTITIONS = 4;
  private static final long WAIT_MS = 180_000;

  private ConsumerRestartBenchmark() {}

  /**
   * Runs the benchmark and prints each round's figures and the summary.
   *
   * @param args none
   * @throws Exception if the broker, a consumer JVM or a wait fails
   */
  public static void main(String[] args) throws Exception {
    int rounds = intProperty("bench.rounds", 3);
    if (rounds < 1) {
      throw new IllegalArgumentException("bench.rounds must be >= 1 but was " + rounds);
    }
    int rate = intProperty("bench.rate", 200);
    long killAfterMs = intProperty("bench.killAfterMs", 1_000);
    String extra = System.getProperty("bench.extraJvmOptions", "").trim();
    Path root = Files.createTempDirectory("consumer-restart-");
    Map<String, List<String>> configs = new LinkedHashMap<>();
    configs.put("no-archive", List.of());
    try (LocalKafka kafka = LocalKafka.start(PARTITIONS)) {
      String bootstrap = kafka.bootstrapServers();
      LocalKafka.createTopic(bootstrap, TOPIC, PARTITIONS);
      AtomicBoolean producing = new AtomicBoolean(true);
      Thread producer = new Thread(() -> produce(bootstrap, rate, producing), "payments");
      producer.start();
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        Path archive = root.resolve("consumer.jsa");
        makeArchive(admin, bootstrap, root.resolve("archive"), archive);
        configs.put("appcds", List.of("-XX:SharedArchiveFile=" + archive, "-Xlog:cds=off"));
        if (!extra.isEmpty()) {
          configs.put("extra", List.of(extra.split("\\s+")));
        }
        List<String> names = new ArrayList<>(configs.keySet());
        Map<String, List<long[]>> results = new HashMap<>();
        for (int r = 1; r <= rounds; r++) {
          for (String name : orderOf(names, r)) {
            Path dir = root.resolve(name + "-" + r);
            long[] t = restart(admin, bootstrap, dir, "restart-" + name + "-" + r, configs.get(name), killAfterMs);
            results.computeIfAbsent(name, k -> new ArrayList<>()).add(t);
            System.out.printf(Locale.ROOT, "round %d %-15s kill to: main %,6d ms, subscribed %,6d ms, assigned %,6d ms,"
                + " first settled record %,6d ms%n", r, name, t[0], t[1], t[2], t[3]);
            FileUtils.deleteQuietly(dir.toFile());
          }
        }
        report(names, results);
      } finally {
        producing.set(false);
        producer.join();
      }
    } finally {
      FileUtils.deleteQuietly(root.toFile());
    }
  }

  /** Prints the medians per configuration and the median over rounds of its ratio to the first in the same round. */
  private static void report(List<String> names, Map<String, List<long[]>> results) {
    String[] phases = {"main", "subscribed", "assigned", "first settled record"};
    System.out.println();
    System.out.println("| configuration | kill to main (ms) | kill to subscribed | kill to assigned |"
        + " kill to first settled record | vs " + names.get(0) + " |");
    System.out.println("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (String name : names) {
      List<long[]> rs = results.get(name);
      StringBuilder row = new StringBuilder("| " + name + " |");
      for (int p = 0; p < phases.length; p++) {
        row.append(String.format(Locale.ROOT, " %,.0f |", median(rs, p)));
      }
      List<long[]> ratios = new ArrayList<>();
      List<long[]> first = results.get(names.get(0));
      for (int r = 0; r < rs.size(); r++) {
        // Per round, in parts per thousand: the ratio of this configuration to the first in the same round.
        ratios.add(new long[] {Math.round(1000.0 * rs.get(r)[3] / first.get(r)[3])});
      }
      row.append(String.format(Locale.ROOT, " %.2fx |", median(ratios, 0) / 1000));
      System.out.println(row);
    }
  }

  private static double median(List<long[]> rs, int phase) {
    long[] v = rs.stream().mapToLong(t -> t[phase]).sorted().toArray();
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2.0;
  }

  /**
   * One kill and restart in a new group and work directory.
   *
   * @return milliseconds from the kill to the restarted run's main, subscribe, assignment and first settled record
   */
  private static long[] restart(Admin admin, String bootstrap, Path dir, String group, List<String> jvmOptions,
      long killAfterMs) throws Exception {
    Files.createDirectories(dir);
    startAtEnd(admin, group);
    Child first = Child.start(bootstrap, dir, group, 1, jvmOptions);
    first.await(() -> first.firstAnswerAtMs > 0, "run 1 settles a record");
    Thread.sleep(killAfterMs); // let run 1 journal some ids and commit some offsets, as a live consumer has
    long killedAt = System.currentTimeMillis();
    first.process.destroyForcibly();
    first.process.waitFor(30, TimeUnit.SECONDS);
    Child second = Child.start(bootstrap, dir, group, 2, jvmOptions);
    second.await(() -> second.firstAnswerAtMs > 0, "run 2 settles a record");
    second.stop();
    return new long[] {second.startedAtMs - killedAt, second.subscribedAtMs - killedAt,
        second.assignedAtMs - killedAt, second.firstAnswerAtMs - killedAt};
  }

  /** Makes the dynamic CDS archive from one consumer run that settles a record and stops normally. */
  private static void makeArchive(Admin admin, String bootstrap, Path dir, Path archive) throws Exception {
    Files.createDirectories(dir);
    startAtEnd(admin, "restart-archive");
    Child c = Child.start(bootstrap, dir, "restart-archive", 1, List.of("-XX:ArchiveClassesAtExit=" + archive,
        "-Xlog:cds=off"));
    c.await(() -> c.firstAnswerAtMs > 0, "the archiving run settles a record");
    c.stop();
    if (!Files.isRegularFile(archive)) {
      throw new IllegalStateException("the JVM (exit code " + c.process.exitValue() + ") wrote no CDS archive at "
          + archive + "; its standard error:\n" + Files.readString(c.err));
    }
    System.out.printf(Locale.ROOT, "CDS archive %s: %,d KiB%n", archive, Files.size(archive) / 1024);
  }

  /** Commits the group's offsets at the topic's end, so a run reads only what is published from now on. */
  private static void startAtEnd(Admin admin, String group) throws Exception {
    Map<TopicPartition, OffsetSpec> request = new HashMap<>();
    for (int p = 0; p < PARTITIONS; p++) {
      request.put(new TopicPartition(TOPIC, p), OffsetSpec.latest());
    }
    Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
    admin.listOffsets(request).all().get(30, TimeUnit.SECONDS)
        .forEach((tp, info) -> commit.put(tp, new OffsetAndMetadata(info.offset())));
    admin.alterConsumerGroupOffsets(group, commit).all().get(30, TimeUnit.SECONDS);
  }

  /** Publishes payments (one in ten twice, as a producer retry) at {@code rate} a second until told to stop. */
  private static void produce(String bootstrap, int rate, AtomicBoolean producing) {
    try (KafkaProducer<String, String> producer = KafkaConsumerThroughput.producer(bootstrap)) {
      long next = System.nanoTime();
      long periodNs = TimeUnit.SECONDS.toNanos(1) / rate;
      for (long i = 0; producing.get(); i++) {
        String id = "pay-" + i;
        ProducerRecord<String, String> r = new ProducerRecord<>(TOPIC, id,
            new Payment(id, "acct-" + (i % 100), 100 + i % 900).toJson());
        r.headers().add("message-id", id.getBytes(StandardCharsets.UTF_8));
        producer.send(r);
        if (i % 10 == 0) {
          producer.send(r);
        }
        next += periodNs;
        long waitNs = next - System.nanoTime();
        if (waitNs > 0) {
          TimeUnit.NANOSECONDS.sleep(waitNs);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** A {@link BillingConsumer} JVM and the instants it reported (epoch ms). */
  private static final class Child {
    final Process process;
    final Path err;
    volatile long startedAtMs = -1;
    volatile long subscribedAtMs = -1;
    volatile long assignedAtMs = -1;
    volatile long firstAnswerAtMs = -1;

    private Child(Process process, Path err) {
      this.process = process;
      this.err = err;
    }

    static Child start(String bootstrap, Path dir, String group, int run, List<String> jvmOptions)
        throws IOException {
      List<String> jvm = new ArrayList<>(Processes.jvmFlags());
      jvm.add("-Xmx256m");
      jvm.addAll(jvmOptions);
      List<String> args = List.of("--bootstrap-servers", bootstrap, "--topic", TOPIC, "--group", group,
          "--work-dir", dir.toString(), "--run", Integer.toString(run), "--mode", "EFFECT_FIRST",
          "--window-ms", "600000");
      List<String> cmd = Processes.javaCommand(jvm, jarsOnly(System.getProperty("java.class.path")),
          BillingConsumer.class.getName(), args);
      Path err = dir.resolve("consumer-" + run + ".err");
      Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
      Child c = new Child(p, err);
      Thread reader = new Thread(c::read, "consumer-" + run + "-out");
      reader.setDaemon(true);
      reader.start();
      return c;
    }

    /**
     * The jars of a class path, without its directories: a class-data sharing archive covers classes from jars only
     * (the JVM refuses to archive with a non-empty directory on the class path), and the consumer needs no class of
     * the benchmarks' own.
     */
    static String jarsOnly(String classpath) {
      List<String> jars = new ArrayList<>();
      for (String e : classpath.split(java.io.File.pathSeparator)) {
        if (!Files.isDirectory(Path.of(e))) {
          jars.add(e);
        }
      }
      return String.join(java.io.File.pathSeparator, jars);
    }

    void await(java.util.function.BooleanSupplier done, String what) throws InterruptedException {
      long deadline = System.currentTimeMillis() + WAIT_MS;
      while (!done.getAsBoolean()) {
        if (!process.isAlive() || System.currentTimeMillis() > deadline) {
          process.destroyForcibly();
          String stderr;
          try {
            stderr = Files.readString(err);
          } catch (IOException e) {
            stderr = e.toString();
          }
          throw new IllegalStateException("waiting until " + what + ": the consumer "
              + (process.isAlive() ? "took longer than " + WAIT_MS + " ms" : "exited") + "; its standard error:\n"
              + stderr);
        }
        Thread.sleep(1);
      }
    }

    void stop() throws InterruptedException {
      try (OutputStream in = process.getOutputStream()) {
        in.write("stop\n".getBytes(StandardCharsets.UTF_8));
      } catch (IOException e) {
        // gone already
      }
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
      }
    }

    private void read() {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          String[] f = line.split(" ");
          switch (f[0]) {
            case "started" -> startedAtMs = Long.parseLong(f[1]);
            case "subscribed" -> subscribedAtMs = Long.parseLong(f[1]);
            case "assigned" -> assignedAtMs = Long.parseLong(f[1]);
            case "first-answer" -> firstAnswerAtMs = Long.parseLong(f[1]);
            case "status" -> { }
            default -> System.out.println("  consumer: " + line);
          }
        }
      } catch (IOException e) {
        // the process is gone
      }
    }
  }
}
