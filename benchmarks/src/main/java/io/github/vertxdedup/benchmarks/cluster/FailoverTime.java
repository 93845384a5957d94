package io.github.vertxdedup.benchmarks.cluster;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerticle;
import io.github.vertxdedup.examples.tools.Processes;
import io.github.vertxdedup.kafka.testkit.LoopbackCluster;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.commons.io.file.PathUtils;

/**
 * Failover time of the event-bus service in a Vert.x cluster: owner's member killed with SIGKILL → first answer from
 * the new owner, over {@code bench.kills} kills (10), with and without a journal, median and max.
 *
 * <p>Three members of a loopback Hazelcast cluster ({@link LoopbackCluster}: heartbeat 1 s, a member dead after 4 s
 * without one): this JVM only probes; two child JVMs (this class with the argument {@code member}) each deploy the
 * service (two partitions). One owns both partitions, the other stands by. Each kill: SIGKILL the owner's JVM, then
 * probe every partition with {@code stats} (a request with a 300 ms timeout, sent again 5 ms after each one
 * that fails) until each answers from the standby's deployment; the failover time of that kill is
 * the kill → the later partition's first answer. Then the killed member is started again as the next standby, and
 * the next kill takes the other one. With a journal both children use the same {@code journalDir} path (one machine
 * standing for block storage moved to the new member), so each new owner rebuilds its window from the journal it was
 * handed; the standby's first answer then includes that recovery. No load besides the probes: this measures the
 * failover itself (detection, lock poll, the lease waited out after an unclean loss, recovery).
 *
 * <p>System properties: {@code bench.kills} (10), {@code bench.leaseMs} (2000), {@code bench.checkMs} (500), {@code
 * bench.pollMs} (100), {@code bench.windowMs} (60000), {@code bench.preload} (ids accepted before each kill, 2000),
 * {@code bench.modes} (memory,journal). Prints the settings, the load average, one line per kill and a summary per
 * mode. Real time: a benchmark, not a test.
 */
public final class FailoverTime {

  private static final int KILLS = Integer.getInteger("bench.kills", 10);
  private static final long LEASE_MS = Long.getLong("bench.leaseMs", 2_000L);
  private static final long CHECK_MS = Long.getLong("bench.checkMs", 500L);
  private static final long POLL_MS = Long.getLong("bench.pollMs", 100L);
  private static final long WINDOW_MS = Long.getLong("bench.windowMs", 60_000L);
  private static final int PRELOAD = Integer.getInteger("bench.preload", 2_000);
  private static final List<String> MODES = Arrays.asList(System.getProperty("bench.modes", "memory,journal")
      .split(","));
  private static final String ADDRESS = "failover";
  private static final int PARTITIONS = 2;

  private FailoverTime() {}

  /**
   * Runs the harness, or (with first argument {@code member}) one member.
   *
   * @param args none for the harness; {@code member <cluster> <journalDir or ->} for a member
   * @throws Exception if a member or a deployment fails to start, or a failover takes longer than a minute
   */
  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("member")) {
      member(args[1], args[2]);
      return;
    }
    System.out.printf(Locale.ROOT, "%s: %d kills per mode, heartbeat %d s, member dead after %d s without one,"
            + " ownerLeaseMs %d, ownerCheckMs %d, ownerLockPollMs %d, windowMs %d, %d ids accepted before each kill,"
            + " %d cores; %s%n", Instant.now(), KILLS, LoopbackCluster.HEARTBEAT_SECONDS,
        LoopbackCluster.MAX_NO_HEARTBEAT_SECONDS, LEASE_MS, CHECK_MS, POLL_MS, WINDOW_MS, PRELOAD,
        Runtime.getRuntime().availableProcessors(), uptime());
    List<String> summary = new ArrayList<>();
    for (String mode : MODES) {
      long[] ms = run(mode.trim());
      long[] sorted = ms.clone();
      Arrays.sort(sorted);
      summary.add(String.format(Locale.ROOT, "%s: owner killed -> first answer of the new owner over %d kills:"
          + " median %d ms, min %d ms, max %d ms (%s)", mode.trim(), ms.length, median(sorted), sorted[0],
          sorted[sorted.length - 1], Arrays.toString(ms)));
    }
    System.out.println("summary, " + uptime());
    summary.forEach(System.out::println);
    System.exit(0);
  }

  private static DedupOptions options(String journalDir) {
    DedupOptions options = new DedupOptions().setAddress(ADDRESS).setPartitions(PARTITIONS).setWindowMs(WINDOW_MS)
        .setBucketMs(Math.max(1, WINDOW_MS / 100)).setOwnerLeaseMs(LEASE_MS).setOwnerCheckMs(CHECK_MS)
        .setOwnerLockPollMs(POLL_MS).setRequestTimeoutMs(5_000);
    if (!"-".equals(journalDir)) {
      options.setJournalDir(journalDir);
    }
    return options;
  }

  /** One mode: two members, {@link #KILLS} kills; returns the failover time of each kill, ms. */
  private static long[] run(String mode) throws Exception {
    Path scratch = Files.createTempDirectory("failover-time-");
    String journalDir = mode.equals("journal") ? scratch.resolve("journal").toString() : "-";
    String cluster = LoopbackCluster.newClusterName();
    Vertx prober = LoopbackCluster.member(cluster).await();
    Child[] children = new Child[2];
    long[] result = new long[KILLS];
    try {
      children[0] = Child.start(cluster, journalDir);
      String firstOwner = children[0].deployed.get(180, TimeUnit.SECONDS);
      children[1] = Child.start(cluster, journalDir);
      children[1].deployed.get(180, TimeUnit.SECONDS);
      for (int p = 0; p < PARTITIONS; p++) {
        awaitOwner(prober, p, firstOwner, System.nanoTime());
      }
      int owner = 0;
      long next = 0;
      for (int kill = 1; kill <= KILLS; kill++) {
        // Ids for the new owner to rebuild (journal) or not to know (memory), as a service under load would have.
        next = preload(prober, next);
        Child dead = children[owner];
        Child standby = children[1 - owner];
        long killedNanos = System.nanoTime();
        dead.process.destroyForcibly();
        long lastMs = 0;
        long[] perPartition = new long[PARTITIONS];
        for (int p = 0; p < PARTITIONS; p++) {
          perPartition[p] = awaitOwner(prober, p, standby.id(), killedNanos);
          lastMs = Math.max(lastMs, perPartition[p]);
        }
        result[kill - 1] = lastMs;
        System.out.printf(Locale.ROOT, "%s kill %d: owner killed -> first answer of the new owner %d ms"
            + " (partitions %s); load average %.2f%n", mode, kill, lastMs, Arrays.toString(perPartition),
            ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        dead.process.waitFor(30, TimeUnit.SECONDS);
        // The killed member comes back as the next standby; it is ready once its deployment has started.
        children[owner] = Child.start(cluster, journalDir);
        children[owner].deployed.get(180, TimeUnit.SECONDS);
        owner = 1 - owner;
      }
    } finally {
      for (Child c : children) {
        if (c != null) {
          c.process.destroyForcibly();
          c.process.waitFor(30, TimeUnit.SECONDS);
        }
      }
      prober.close().await();
      PathUtils.deleteDirectory(scratch);
    }
    return result;
  }

  /**
   * Accepts {@link #PRELOAD} new ids through the cluster; an id refused (a 503 while the owner's epoch confirmation
   * is held up, as when a member joins and Hazelcast migrates its partitions) is sent again after 100 ms.
   *
   * @return the next id's number
   * @throws IllegalStateException if ids are still refused after a minute
   */
  private static long preload(Vertx prober, long next) throws InterruptedException {
    DedupClient client = DedupClient.create(prober, options("-"));
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < PRELOAD; i++) {
      ids.add("id-" + next++);
    }
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    int refused = 0;
    while (!ids.isEmpty()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(ids.size() + " ids still refused after a minute");
      }
      List<Future<?>> sent = new ArrayList<>();
      for (String id : ids) {
        sent.add(client.check(id));
      }
      Future.join(sent).otherwiseEmpty().await();
      List<String> again = new ArrayList<>();
      for (int i = 0; i < ids.size(); i++) {
        if (sent.get(i).failed()) {
          again.add(ids.get(i));
        }
      }
      refused += again.size();
      ids = again;
      if (!ids.isEmpty()) {
        Thread.sleep(100);
      }
    }
    if (refused > 0) {
      System.out.printf(Locale.ROOT, "  preload: %d requests refused and sent again%n", refused);
    }
    return next;
  }

  /**
   * Probes partition {@code p} with {@code stats} until {@code owner} answers.
   *
   * @return ms from {@code sinceNanos} to that answer
   * @throws IllegalStateException if it has not answered within a minute
   */
  private static long awaitOwner(Vertx prober, int p, String owner, long sinceNanos) throws InterruptedException {
    DeliveryOptions stats = new DeliveryOptions().addHeader(DedupAction.HEADER, DedupAction.STATS.wireName())
        .setSendTimeout(300);
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (System.nanoTime() < deadline) {
      try {
        JsonObject s = (JsonObject) prober.eventBus().request(ADDRESS + "." + p, null, stats).await().body();
        if (owner.equals(s.getString("owner"))) {
          return (System.nanoTime() - sinceNanos) / 1_000_000;
        }
      } catch (ReplyException e) {
        // No handler (the dead member's registration is gone, the new owner's not there yet), a timeout (sent to the
        // dead member), or 503 (recovering): ask again.
      }
      Thread.sleep(5);
    }
    throw new IllegalStateException("partition " + p + " not answered by " + owner + " within a minute");
  }

  private static long median(long[] sorted) {
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  private static String uptime() {
    try {
      Process p = new ProcessBuilder("uptime").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      p.waitFor();
      return "uptime: " + out;
    } catch (Exception e) {
      return String.format(Locale.ROOT, "load average %.2f",
          ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
  }

  /** A member JVM: joins, deploys the service, prints {@code deployed <id>}, runs until killed or its input ends. */
  private static void member(String cluster, String journalDir) throws Exception {
    Vertx vertx = LoopbackCluster.member(cluster).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    String id = vertx.deployVerticle(new DedupVerticle(), new DeploymentOptions().setConfig(
        options(journalDir).toJson())).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    System.out.println("deployed " + id);
    System.out.flush();
    InputStream in = System.in;
    while (in.read() >= 0) {
      // wait for the harness to close our input
    }
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** A member child JVM and its deployment id, once it has printed it. */
  private record Child(Process process, CompletableFuture<String> deployed) {

    static Child start(String cluster, String journalDir) throws Exception {
      List<String> flags = new ArrayList<>(ManagementFactory.getRuntimeMXBean().getInputArguments());
      flags.removeIf(f -> f.startsWith("-Xm") || f.startsWith("-Dbench."));
      flags.add("-Xmx256m");
      flags.add("-Dchronicle.analytics.disable=true");
      List<String> cmd = Processes.javaCommand(flags, System.getProperty("java.class.path"),
          FailoverTime.class.getName(), List.of("member", cluster, journalDir));
      Process process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      CompletableFuture<String> deployed = new CompletableFuture<>();
      Thread reader = new Thread(() -> {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8))) {
          for (String line; (line = out.readLine()) != null; ) {
            if (line.startsWith("deployed ")) {
              deployed.complete(line.substring("deployed ".length()));
            }
          }
          deployed.completeExceptionally(new IllegalStateException("member ended before it deployed"));
        } catch (Exception e) {
          deployed.completeExceptionally(e);
        }
      });
      reader.setDaemon(true);
      reader.start();
      return new Child(process, deployed);
    }

    String id() {
      return deployed.join();
    }
  }
}
