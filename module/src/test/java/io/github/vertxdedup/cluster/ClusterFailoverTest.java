package io.github.vertxdedup.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupLookup;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.DedupVerticle;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.impl.protocol.PartitionRouting;
import io.github.vertxdedup.impl.service.PartitionOwnership;
import io.github.vertxdedup.kafka.testkit.LoopbackCluster;
import io.github.vertxdedup.time.DedupClock;
import io.github.vertxdedup.testing.ChildJvm;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * kill -9 of the owner's member under load. The owner of both partitions is a child JVM ({@link
 * FailoverMemberChild}, a member of a loopback Hazelcast cluster); this JVM is a second member that runs the standby
 * deployment of the same service and a {@link DedupClient} sending a stream of {@code check}s (about 300 a second,
 * one in ten a redelivery of an earlier id). The child is killed with SIGKILL while requests are in flight; the
 * cluster declares it dead (the test kit's 4 s without a heartbeat), the standby takes each partition's lock, waits
 * out one lease (the owner was lost without a clean release) and answers. Real time: a process boundary and the
 * cluster's failure detection. Every attempt is recorded with its send and reply instants and its answer.
 *
 * <p>Asserted in both modes: the new owner (the standby's deployment, epoch 2) answers within the bound of {@code
 * docs/partitioning.md} (detection 4 s + one 1 s heartbeat + lock poll + lease + recovery, with slack for a loaded
 * machine; printed as "owner killed -> first answer of the new owner"); its first answer comes at least one lease
 * after it logged the unclean takeover (the wait after a predecessor that did not release); the only failures are
 * 503 (no owner registered until the request's deadline: nothing was decided) and 504 (sent to the dead member:
 * outcome unknown).
 *
 * <p><b>With the journal handed over</b> (the standby uses the same {@code journalDir} path: one machine standing for
 * block storage moved to the new member): no id is answered ACCEPTED twice over the whole run, every id accepted
 * before the kill is a DUPLICATE when checked again after the takeover, and no answer is unvouched. A request that
 * failed with 504 may or may not have been decided by the dead owner; its effect is exactly what the caller cannot
 * know. The test does not guess it: it asks {@code lookup} for every id after the run and shows, for every id with a
 * 504 attempt, which it was. An id the journal knows with no ACCEPTED answer was accepted by the dead owner whose
 * answer was lost (the 504 attempt was the accept; later attempts are DUPLICATEs, so it is still accepted once); an
 * id it does not know was never decided. Asserted for every id: at most one ACCEPTED answer; an id answered
 * ACCEPTED is known; an id answered DUPLICATE was answered ACCEPTED or had a 504 attempt (the duplicate of an
 * accept whose answer was lost, never an invented one).
 *
 * <p><b>Without a journal</b> the new owner's window is empty: every ACCEPTED answer it gives before {@code
 * unvouchedUntilMs} ({@code stats}: takeover + {@code W}) is marked unvouched, every one it decides after that is not
 * (both sets non-empty, so the test sees both sides of the boundary), and an id accepted twice across the failover
 * was accepted the second time unvouched.
 *
 * <p>The default build runs one kill per mode; {@code -Dfailover.cycles=N} (or {@code -Pcrash}: 5) repeats each mode
 * on a new cluster.
 */
class ClusterFailoverTest {

  private static final int CYCLES = Integer.getInteger("failover.cycles", 1);
  private static final int PARTITIONS = 2;
  private static final long LEASE_MS = 2_000;
  private static final long CHECK_MS = 500;
  private static final long POLL_MS = 100;
  private static final long REQUEST_TIMEOUT_MS = 2_000;
  /** Window with a journal: longer than the run, so every id decided stays known to the end. */
  private static final long JOURNAL_WINDOW_MS = 120_000;
  /** Window without one: short, so the run sees the unvouched period end. */
  private static final long MEMORY_WINDOW_MS = 4_000;
  /** Room for timers, GC and JIT on a loaded machine. */
  private static final long SLACK_MS = 6_000;
  /**
   * The service's clock in this JVM (where the new owner runs): {@code unvouchedUntilMs} is on it, and it may stand
   * a few ms apart from {@link System#currentTimeMillis()}, which it reads once.
   */
  private static final DedupClock CLOCK = DedupClock.system();

  @TempDir
  static Path tmp;

  private static final List<Process> CHILDREN = new CopyOnWriteArrayList<>();
  private static final List<Vertx> MEMBERS = new CopyOnWriteArrayList<>();
  private static final TakeoverLog TAKEOVERS = new TakeoverLog();
  private static final AtomicInteger RUNS = new AtomicInteger();
  /** The first cycle of each mode, prepared at once: child JVMs start slowly on a loaded machine, so side by side. */
  private static CompletableFuture<Setup> journalSetup;
  private static CompletableFuture<Setup> memorySetup;

  @BeforeAll
  static void prepare() {
    Logger log = (Logger) LoggerFactory.getLogger(PartitionOwnership.class);
    TAKEOVERS.start();
    log.addAppender(TAKEOVERS);
    journalSetup = CompletableFuture.supplyAsync(() -> setUp("journal", true, JOURNAL_WINDOW_MS));
    memorySetup = CompletableFuture.supplyAsync(() -> setUp("memory", false, MEMORY_WINDOW_MS));
  }

  @AfterAll
  static void stop() {
    ((Logger) LoggerFactory.getLogger(PartitionOwnership.class)).detachAppender(TAKEOVERS);
    for (Process p : CHILDREN) {
      p.destroyForcibly();
    }
    for (Vertx m : MEMBERS) {
      try {
        TestFutures.await(m.close(), 60);
      } catch (RuntimeException e) {
        // Closing a member is best effort here; every run has its own cluster name.
      }
    }
  }

  @Test
  void shouldFailOverWithTheJournalHandedOverAndAcceptNoIdTwice() throws Exception {
    for (int cycle = 1; cycle <= CYCLES; cycle++) {
      Setup setup = cycle == 1 ? journalSetup.get(180, TimeUnit.SECONDS) : setUp("journal", true, JOURNAL_WINDOW_MS);
      killOwnerUnderLoad(setup, Run::assertJournalHandedOver);
    }
  }

  @Test
  void shouldFailOverWithoutAJournalAndMarkEveryAcceptUnvouchedUntilW() throws Exception {
    for (int cycle = 1; cycle <= CYCLES; cycle++) {
      Setup setup = cycle == 1 ? memorySetup.get(180, TimeUnit.SECONDS) : setUp("memory", false, MEMORY_WINDOW_MS);
      killOwnerUnderLoad(setup, Run::assertUnvouchedUntilW);
    }
  }

  // ---------------------------------------------------------------------------------------------------------------

  /** A cluster of its own: this JVM's member (no deployment yet) and the child that owns every partition. */
  record Setup(String mode, DedupOptions options, Vertx member, Process child, String oldOwner, String cluster) {}

  private static Setup setUp(String mode, boolean journal, long windowMs) {
    try {
      int run = RUNS.incrementAndGet();
      String cluster = LoopbackCluster.newClusterName();
      DedupOptions options = new DedupOptions().setAddress("failover-" + mode).setPartitions(PARTITIONS)
          .setWindowMs(windowMs).setBucketMs(100).setOwnerLeaseMs(LEASE_MS).setOwnerCheckMs(CHECK_MS)
          .setOwnerLockPollMs(POLL_MS).setRequestTimeoutMs(REQUEST_TIMEOUT_MS);
      if (journal) {
        options.setJournalDir(tmp.resolve("journal-" + run).toString());
      }
      Vertx member = TestFutures.await(LoopbackCluster.member(cluster), 120);
      MEMBERS.add(member);
      Process child = startChild(cluster, options, run);
      return new Setup(mode, options, member, child, awaitDeployed(child), cluster);
    } catch (Exception e) {
      throw new IllegalStateException("setting up the " + mode + " run failed", e);
    }
  }

  /**
   * Waits until Hazelcast holds a backup of every partition of the cluster's data on the surviving member: the test
   * kills one member, a single failure, which the cluster survives only once the partitions that moved when the child
   * joined have their backups (the epoch counter among them: lost, it makes the next owner a first owner).
   */
  private static void awaitClusterSafe(String cluster) throws InterruptedException {
    HazelcastInstance hz = Hazelcast.getAllHazelcastInstances().stream()
        .filter(i -> i.getConfig().getClusterName().equals(cluster)).findFirst().orElseThrow();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!hz.getPartitionService().isClusterSafe() && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(hz.getPartitionService().isClusterSafe()).as("the cluster's partitions have their backups").isTrue();
  }

  private void killOwnerUnderLoad(Setup setup, Consumer<Run> modeAssertions) throws Exception {
    DedupOptions options = setup.options();
    Vertx member = setup.member();
    String oldOwner = setup.oldOwner();
    String mode = setup.mode();
    boolean journal = options.getJournalDir() != null;
    DedupClient client = DedupClient.create(member, options);
    // The owner names its deployment and its JVM (pid@host); the epoch tells the owners apart in time.
    for (int p = 0; p < PARTITIONS; p++) {
      JsonObject s = awaitStats(client, p, 60);
      assertThat(s.getLong("epoch")).as("first owner's epoch").isEqualTo(1);
      assertThat(s.getString("owner")).startsWith(oldOwner + "@" + setup.child().pid() + "@");
    }
    TestFutures.await(member.deployVerticle(new DedupVerticle().setMeterRegistry(new SimpleMeterRegistry()),
        new DeploymentOptions().setConfig(options.toJson())), 60);
    for (int p = 0; p < PARTITIONS; p++) {
      assertThat(TestFutures.await(client.stats(p), 10).getLong("epoch")).as("epoch while the standby waits")
          .isEqualTo(1);
    }

    Run run = new Run(mode, options, client);
    Load load = new Load(member, client, run);
    load.start();
    Thread.sleep(1_500);
    assertThat(run.attempts.stream().filter(a -> a.result != null).count()).as("answers before the kill")
        .isPositive();
    awaitClusterSafe(setup.cluster());
    run.killedWall = System.currentTimeMillis();
    run.killedNanos = System.nanoTime();
    setup.child().destroyForcibly();
    assertThat(setup.child().waitFor(30, TimeUnit.SECONDS)).isTrue();

    // The first answer of each partition to a request sent after the kill comes from the new owner.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!run.answeredAfterKillOnEveryPartition() && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(run.answeredAfterKillOnEveryPartition()).as("every partition answered within 60 s of the kill")
        .isTrue();
    for (int p = 0; p < PARTITIONS; p++) {
      JsonObject s = TestFutures.await(client.stats(p), 10);
      // Epoch 2: the standby in this JVM, the only deployment left.
      assertThat(s.getLong("epoch")).as("partition %s's new owner", p).isEqualTo(2);
      assertThat(s.getString("role")).isEqualTo("OWNER");
      assertThat(s.getBoolean("journalHandedOver")).isEqualTo(journal);
      run.unvouchedUntilMs[p] = s.getLong("unvouchedUntilMs", Long.MIN_VALUE);
    }
    long tailUntil = journal ? CLOCK.nowMs() + 2_000
        : java.util.Arrays.stream(run.unvouchedUntilMs).max().orElseThrow() + 1_500;
    while (CLOCK.nowMs() < tailUntil) {
      Thread.sleep(50);
    }
    load.stopAndDrain();
    run.assertFailover(TAKEOVERS.byPartition(options.getAddress()));
    modeAssertions.accept(run);
    // Hazelcast's TCP-IP join on 127.0.0.1 tries only the first ports from 5701: members left running by earlier
    // runs would push the next run's two members beyond them, and they would not find each other.
    TestFutures.await(member.close(), 60);
    MEMBERS.remove(member);
  }

  private static Process startChild(String cluster, DedupOptions options, int run) throws Exception {
    ChildJvm jvm = ChildJvm.of(FailoverMemberChild.class, tmp.resolve("child-" + run));
    ProcessBuilder pb = jvm.command(List.of(), List.of(cluster, options.getAddress(),
        Integer.toString(options.getPartitions()), Long.toString(options.getWindowMs()),
        Long.toString(options.getOwnerLeaseMs()), Long.toString(options.getOwnerCheckMs()),
        Long.toString(options.getOwnerLockPollMs()),
        options.getJournalDir() == null ? "-" : options.getJournalDir()));
    List<String> cmd = pb.command();
    int cp = cmd.indexOf("-cp") + 1;
    cmd.set(cp, cmd.get(cp) + File.pathSeparator + String.join(File.pathSeparator, location(Hazelcast.class),
        location(HazelcastClusterManager.class), location(LoopbackCluster.class)));
    Path stderr = tmp.resolve("child-" + run + ".err");
    Process p = pb.redirectError(stderr.toFile()).start();
    CHILDREN.add(p);
    return p;
  }

  private static String awaitDeployed(Process child) throws Exception {
    BlockingQueue<String> lines = ChildLines.of(child);
    String line = lines.poll(120, TimeUnit.SECONDS);
    assertThat(line).as("the child deployed the service; its standard error: %s", (Object) childErrors())
        .startsWith("deployed ");
    return line.substring("deployed ".length());
  }

  /** @return the standard error of every child so far, for a failure's message */
  private static String childErrors() {
    try (var files = java.nio.file.Files.list(tmp)) {
      StringBuilder all = new StringBuilder();
      for (Path f : files.filter(f -> f.getFileName().toString().endsWith(".err")).sorted().toList()) {
        String text = java.nio.file.Files.readString(f);
        all.append(f.getFileName()).append(": ").append(text, Math.max(0, text.length() - 4000), text.length());
      }
      return all.toString();
    } catch (java.io.IOException e) {
      return "unreadable: " + e;
    }
  }

  /** Asks {@code stats} until an owner answers it (its registration has reached this member). */
  private static JsonObject awaitStats(DedupClient client, int p, int seconds) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    RuntimeException last = null;
    while (true) {
      try {
        return TestFutures.await(client.stats(p), 10);
      } catch (RuntimeException e) {
        last = e; // not registered yet
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("partition " + p + " has no owner within " + seconds + " s", last);
      }
      Thread.sleep(50);
    }
  }

  private static String location(Class<?> c) throws URISyntaxException {
    return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
  }

  // ---------------------------------------------------------------------------------------------------------------

  /** One check sent by the load: when, and what came back. Written on the client's event loop, read after. */
  static final class Attempt {
    final String id;
    final int partition;
    final long sentWall;
    final long sentClock;
    final long sentNanos;
    volatile long replyWall;
    volatile long replyClock;
    volatile DedupResult result;
    volatile int failureCode;

    Attempt(String id, int partition) {
      this.id = id;
      this.partition = partition;
      this.sentWall = System.currentTimeMillis();
      this.sentClock = CLOCK.nowMs();
      this.sentNanos = System.nanoTime();
    }

    boolean done() {
      return result != null || failureCode != 0;
    }

    boolean accepted() {
      return result != null && result.verdict() == DedupVerdict.ACCEPTED;
    }
  }

  /** What one kill produced, and its assertions. */
  final class Run {
    final String mode;
    final DedupOptions options;
    final DedupClient client;
    final PartitionRouting routing;
    final ConcurrentLinkedQueue<Attempt> attempts = new ConcurrentLinkedQueue<>();
    final long[] unvouchedUntilMs = new long[PARTITIONS];
    /** Partition to the wall instant the standby logged its takeover: answers after it are the new owner's. */
    final Map<Integer, Long> takeoverWall = new HashMap<>();
    volatile long killedWall;
    volatile long killedNanos;

    Run(String mode, DedupOptions options, DedupClient client) {
      this.mode = mode;
      this.options = options;
      this.client = client;
      this.routing = new PartitionRouting(options);
    }

    boolean answeredAfterKillOnEveryPartition() {
      boolean[] seen = new boolean[PARTITIONS];
      for (Attempt a : attempts) {
        if (a.result != null && a.sentNanos > killedNanos) {
          seen[a.partition] = true;
        }
      }
      for (boolean s : seen) {
        if (!s) {
          return false;
        }
      }
      return true;
    }

    /** The first answer (reply instant, wall ms) of partition {@code p} to a request sent after the kill. */
    long firstAnswerAfterKill(int p) {
      return attempts.stream().filter(a -> a.partition == p && a.result != null && a.sentNanos > killedNanos)
          .mapToLong(a -> a.replyWall).min().orElseThrow();
    }

    void assertFailover(Map<Integer, Long> uncleanTakeoverWall) {
      takeoverWall.putAll(uncleanTakeoverWall);
      List<Attempt> all = List.copyOf(attempts);
      assertThat(all).allMatch(Attempt::done);
      Map<Integer, Long> codes = all.stream().filter(a -> a.failureCode != 0)
          .collect(Collectors.groupingBy(a -> a.failureCode, Collectors.counting()));
      assertThat(codes.keySet()).as("failures: %s", codes)
          .isSubsetOf(DedupFailure.UNAVAILABLE, DedupFailure.OUTCOME_UNKNOWN);
      long bound = LoopbackCluster.MAX_NO_HEARTBEAT_SECONDS * 1000L + LoopbackCluster.HEARTBEAT_SECONDS * 1000L
          + POLL_MS + LEASE_MS + SLACK_MS;
      for (int p = 0; p < PARTITIONS; p++) {
        long first = firstAnswerAfterKill(p);
        Long takeover = uncleanTakeoverWall.get(p);
        assertThat(takeover).as("partition %s: the standby logged an unclean takeover (waiting out a lease)", p)
            .isNotNull();
        long failoverMs = first - killedWall;
        long waitedMs = first - takeover;
        System.out.printf("failover [%s] partition %d: owner killed -> first answer of the new owner %d ms;"
            + " unclean takeover logged %d ms after the kill, first answer %d ms after it (lease %d ms)%n",
            mode, p, failoverMs, takeover - killedWall, waitedMs, LEASE_MS);
        assertThat(failoverMs).as("failover of partition %s within the bound", p).isLessThan(bound);
        assertThat(waitedMs).as("partition %s: the new owner waited out one lease before answering", p)
            .isGreaterThanOrEqualTo(LEASE_MS);
      }
      System.out.printf("failover [%s]: %d requests, %d answered, failures by code %s%n", mode, all.size(),
          all.stream().filter(a -> a.result != null).count(), codes);
    }

    void assertJournalHandedOver() {
      List<Attempt> all = List.copyOf(attempts);
      assertThat(all).noneMatch(a -> a.result != null && a.result.unvouched());
      // Every id accepted before the kill, checked again now that the journal was handed over: a duplicate.
      List<String> acceptedBefore = all.stream().filter(a -> a.accepted() && a.replyWall < killedWall)
          .map(a -> a.id).distinct().toList();
      assertThat(acceptedBefore).isNotEmpty();
      List<Future<DedupResult>> again = acceptedBefore.stream().map(client::check).toList();
      TestFutures.await(Future.join(again), 30);
      for (int i = 0; i < again.size(); i++) {
        assertThat(again.get(i).result().verdict())
            .as("%s, accepted by the killed owner, checked after the takeover", acceptedBefore.get(i))
            .isEqualTo(DedupVerdict.DUPLICATE);
      }
      Map<String, List<Attempt>> byId = new HashMap<>();
      for (Attempt a : all) {
        byId.computeIfAbsent(a.id, k -> new ArrayList<>()).add(a);
      }
      Map<String, Future<DedupLookup>> lookups = new HashMap<>();
      byId.keySet().forEach(id -> lookups.put(id, client.lookup(new DedupEvent(id))));
      TestFutures.await(Future.join(List.copyOf(lookups.values())), 30);
      int lostAccepts = 0;
      int undecided = 0;
      int with504 = 0;
      for (Map.Entry<String, List<Attempt>> e : byId.entrySet()) {
        String id = e.getKey();
        List<Attempt> tries = e.getValue();
        tries.sort((x, y) -> Long.compare(x.sentNanos, y.sentNanos));
        long accepts = tries.stream().filter(Attempt::accepted).count();
        assertThat(accepts).as("ACCEPTED answers of %s: %s", id, describe(tries)).isLessThanOrEqualTo(1);
        DedupLookup known = lookups.get(id).result();
        if (accepts == 1) {
          assertThat(known.known()).as("%s was answered ACCEPTED", id).isTrue();
        }
        // A DUPLICATE answer needs an ACCEPTED answer of the id, or an attempt whose outcome is unknown (504), in the
        // run. Not ordered by sending: two attempts that found no owner are sent again by the client until it
        // registers, and the later-sent one may reach it first.
        boolean acceptedOrUnknown = tries.stream()
            .anyMatch(a -> a.accepted() || a.failureCode == DedupFailure.OUTCOME_UNKNOWN);
        if (tries.stream().anyMatch(a -> a.result != null && a.result.verdict() == DedupVerdict.DUPLICATE)) {
          assertThat(acceptedOrUnknown).as("%s answered DUPLICATE, never accepted: %s", id, describe(tries))
              .isTrue();
        }
        if (tries.stream().anyMatch(a -> a.failureCode == DedupFailure.OUTCOME_UNKNOWN)) {
          with504++;
          if (accepts == 0 && known.known()) {
            lostAccepts++;
          } else if (!known.known()) {
            undecided++;
          }
        }
      }
      System.out.printf("failover [%s]: %d ids, none answered ACCEPTED twice; %d ids had a 504 attempt: %d of them"
          + " accepted by the killed owner with the answer lost (the journal knows them, no ACCEPTED answer), %d"
          + " never decided (the journal does not know them), %d answered ACCEPTED by another attempt%n", mode,
          byId.size(), with504, lostAccepts, undecided, with504 - lostAccepts - undecided);
    }

    void assertUnvouchedUntilW() {
      List<Attempt> all = List.copyOf(attempts);
      int before = 0;
      int after = 0;
      for (Attempt a : all) {
        if (!a.accepted()) {
          continue;
        }
        if (a.replyWall < takeoverWall.get(a.partition)) {
          // The first owner's answer (it may reach this member just after the kill).
          assertThat(a.result.unvouched()).as("%s accepted by the first owner", a.id).isFalse();
          continue;
        }
        long until = unvouchedUntilMs[a.partition];
        if (a.replyClock < until) {
          before++;
          assertThat(a.result.unvouched()).as("%s accepted by the new owner %d ms before W ended", a.id,
              until - a.replyClock).isTrue();
        } else if (a.sentClock >= until) {
          after++;
          assertThat(a.result.unvouched()).as("%s accepted %d ms after W ended", a.id, a.sentClock - until)
              .isFalse();
        }
      }
      Map<String, List<Attempt>> accepts = all.stream().filter(Attempt::accepted)
          .collect(Collectors.groupingBy(a -> a.id));
      int twice = 0;
      for (List<Attempt> list : accepts.values()) {
        if (list.size() > 1) {
          twice++;
          list.sort((x, y) -> Long.compare(x.sentNanos, y.sentNanos));
          Attempt second = list.get(1);
          // An id accepted again once W has passed since its first accept is no longer in any window.
          if (second.replyClock < unvouchedUntilMs[second.partition]) {
            assertThat(second.result.unvouched()).as("second accept of %s", second.id).isTrue();
          }
        }
      }
      System.out.printf("failover [%s]: new owner's accepts before W ended %d (all unvouched), after %d (none);"
          + " ids accepted twice across the failover %d, each second accept unvouched%n", mode, before, after,
          twice);
      assertThat(before).as("accepts of the new owner within W").isPositive();
      assertThat(after).as("accepts of the new owner after W").isPositive();
    }

    private String describe(List<Attempt> tries) {
      return tries.stream().map(a -> (a.result != null ? a.result.verdict() + (a.result.unvouched() ? "(u)" : "")
          : "ERR" + a.failureCode) + "@" + (a.sentWall - killedWall) + "ms").collect(Collectors.joining(", "));
    }
  }

  /**
   * The stream of checks: every 10 ms, three requests, each a new id or (one in ten) an id sent before; at most
   * 2,000 outstanding. Runs on a timer of the client's member.
   */
  static final class Load {
    private final Vertx member;
    private final DedupClient client;
    private final Run run;
    private final Random random = new Random(18);
    private final List<String> sent = new ArrayList<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final List<Long> timers = new CopyOnWriteArrayList<>();
    private int next;

    Load(Vertx member, DedupClient client, Run run) {
      this.member = member;
      this.client = client;
      this.run = run;
    }

    void start() {
      timers.add(member.setPeriodic(10, t -> {
        for (int i = 0; i < 3 && inFlight.get() < 2_000; i++) {
          String id = !sent.isEmpty() && random.nextInt(10) == 0 ? sent.get(random.nextInt(sent.size()))
              : "id-" + next++;
          sent.add(id);
          Attempt a = new Attempt(id, run.routing.partitionOf(id, null));
          run.attempts.add(a);
          inFlight.incrementAndGet();
          Future<DedupResult> f = client.check(id);
          f.onComplete(ar -> {
            a.replyWall = System.currentTimeMillis();
            a.replyClock = CLOCK.nowMs();
            if (ar.succeeded()) {
              a.result = ar.result();
            } else {
              a.failureCode = ar.cause() instanceof ReplyException re ? re.failureCode() : -1;
            }
            inFlight.decrementAndGet();
          });
        }
      }));
    }

    void stopAndDrain() throws InterruptedException {
      for (long t : timers) {
        member.cancelTimer(t);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (inFlight.get() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(inFlight.get()).as("requests still outstanding 30 s after the load stopped").isZero();
    }
  }

  /** The log lines of {@link PartitionOwnership} that announce a takeover after an unclean loss, with their instant. */
  static final class TakeoverLog extends AppenderBase<ILoggingEvent> {
    private final List<ILoggingEvent> events = new CopyOnWriteArrayList<>();

    @Override
    protected void append(ILoggingEvent event) {
      if (event.getMessage().contains("waiting out its lease")) {
        events.add(event);
      }
    }

    /** @return partition number to the wall instant of the last unclean takeover logged for {@code address} */
    Map<Integer, Long> byPartition(String address) {
      Map<Integer, Long> out = new HashMap<>();
      for (ILoggingEvent e : events) {
        String name = String.valueOf(e.getArgumentArray()[0]);
        if (name.startsWith(address + ".")) {
          out.put(Integer.parseInt(name.substring(address.length() + 1)), e.getTimeStamp());
        }
      }
      return out;
    }
  }
}
