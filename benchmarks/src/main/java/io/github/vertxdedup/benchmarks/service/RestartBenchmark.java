package io.github.vertxdedup.benchmarks.service;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerticle;
import io.github.vertxdedup.examples.tools.Processes;
import io.github.vertxdedup.journal.AcceptBatch;
import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.JournalOptions;
import io.github.vertxdedup.journal.JournalVisitor;
import io.github.vertxdedup.journal.SnapshotResult;
import io.github.vertxdedup.journal.internal.Recovery;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.window.Fingerprinter;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.commons.io.FileUtils;

/**
 * Time to first answer of a journaled partition that holds many live ids: in process (journal open to first
 * answer), and for the whole process (kill -9, new JVM, first answer). Real time: a benchmark, not a test.
 *
 * <p>Commands:
 * <ul>
 *   <li>{@code build DIR IDS PER_RECORD [snapshot]}: writes the journal of partition 0 of address {@code bench}
 *       under journal directory {@code DIR}: {@code IDS} live accepts of ids {@code evt-0 .. evt-(IDS-1)},
 *       {@code PER_RECORD} per record, remembered for 10 minutes; with {@code snapshot}, then writes the window
 *       snapshot a running partition would have written (as the service does: {@code Recovery.compaction}), and
 *       appends more ids after it, a tail as a restart finds one: the last 1 % of {@code IDS} (or
 *       {@code -Dbench.tailPerMille} thousandths of them, 1 to 999); without it, the service is then run with
 *       {@code journalSnapshotEntries} 0 on this directory (the whole journal replayed at every restart).</li>
 *   <li>{@code first-answer DIR}: in this JVM, after a warm-up deployment on another directory, deploys the service
 *       on {@code DIR} and checks {@code evt-0} (must be {@code DUPLICATE}); prints deploy to first answer. Twice (a
 *       second restart in the same JVM).</li>
 *   <li>{@code kill-restart DIR N}: N times: starts a child JVM ({@code serve}) on {@code DIR}, waits for its first
 *       answer, kills it with SIGKILL, starts another and measures kill to its first answer.</li>
 *   <li>{@code ratios N DIR_EMPTY DIR...}: one child per directory; N rounds, each killing every child in turn and
 *       measuring kill -9 to its successor's first answer; prints each directory's median divided by that of
 *       {@code DIR_EMPTY} (a journal of one id). The child JVMs get this JVM's flags (set {@code -Xmx} for the
 *       largest window).</li>
 *   <li>{@code serve DIR}: the child: deploys the service on {@code DIR}, checks {@code evt-0}, prints
 *       {@code first-answer VERDICT processMs=P deployMs=D}, then waits to be killed.</li>
 * </ul>
 * The service runs with {@code windowMs} 600000 (or {@code -Dbench.windowMs}, given to every command), one
 * partition, no payload hashes, {@code expectedIdsPerPartition}
 * sized for the journal (so the window never rehashes while it is rebuilt), or {@code -Dbench.expectedIds} given to
 * {@code build} (an empty window served with the configuration of a large one: the same table to allocate).
 */
public final class RestartBenchmark {

  /** The service's window: 10 minutes, or {@code -Dbench.windowMs} (a large journal takes minutes to build). */
  private static final long WINDOW_MS = Long.getLong("bench.windowMs", 600_000);
  /** Thousandths of a snapshot journal's ids appended after its snapshot: 10 (1 %), or {@code -Dbench.tailPerMille}. */
  private static final int TAIL_PER_MILLE = Integer.getInteger("bench.tailPerMille", 10);
  private static final String ADDRESS = "bench";

  private RestartBenchmark() {
  }

  /**
   * Runs a command.
   *
   * @param args see the class documentation
   * @throws Exception on any failure
   */
  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "build" -> build(Path.of(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]),
          args.length > 4 && args[4].equals("snapshot"));
      case "ratios" -> ratios(Integer.parseInt(args[1]), java.util.Arrays.stream(args, 2, args.length)
          .map(Path::of).toList());
      case "first-answer" -> firstAnswer(Path.of(args[1]));
      case "kill-restart" -> killRestart(Path.of(args[1]), Integer.parseInt(args[2]));
      case "serve" -> serve(Path.of(args[1]));
      default -> throw new IllegalArgumentException("unknown command " + args[0]);
    }
  }

  private static DedupOptions options(Path journalDir, int expectedIds) {
    // A journal built without a snapshot is served without snapshots too (journalSnapshotEntries 0): the service
    // would otherwise write one after its first start, and the restarts after it would load that.
    boolean snapshots = !Files.exists(journalDir.resolve(ADDRESS).resolve("no-snapshots"));
    return new DedupOptions().setJournalSnapshotEntries(snapshots ? DedupOptions.DEFAULT_JOURNAL_SNAPSHOT_ENTRIES : 0).setAddress(ADDRESS).setWindowMs(WINDOW_MS).setPayloadHashes(false)
        .setMaxIdsPerPartition(Math.max(DedupOptions.DEFAULT_MAX_IDS_PER_PARTITION, expectedIds))
        .setExpectedIdsPerPartition(expectedIds).setJournalDir(journalDir.toString());
  }

  /** @return the service's {@code expectedIdsPerPartition} for the journal: {@code -Dbench.expectedIds} at build, else its ids */
  private static int expectedIds(Path journalDir) throws java.io.IOException {
    Path presized = journalDir.resolve(ADDRESS).resolve("expected-ids");
    return Files.exists(presized) ? Integer.parseInt(Files.readString(presized).trim()) : ids(journalDir);
  }

  /** @return the live ids the journal was built with */
  private static int ids(Path journalDir) throws java.io.IOException {
    Path file = journalDir.resolve(ADDRESS).resolve("ids");
    return Files.exists(file) ? Integer.parseInt(Files.readString(file).trim()) : 0;
  }

  private static void build(Path journalDir, int ids, int perRecord, boolean snapshot) throws Exception {
    if (TAIL_PER_MILLE < 1 || TAIL_PER_MILLE > 999) {
      throw new IllegalArgumentException("bench.tailPerMille must be in [1, 999] but was " + TAIL_PER_MILLE);
    }
    Integer presized = Integer.getInteger("bench.expectedIds");
    if (presized != null && presized < 0) {
      throw new IllegalArgumentException("bench.expectedIds must be >= 0 but was " + presized);
    }
    Path dir = journalDir.resolve(ADDRESS).resolve("0");
    Files.createDirectories(dir);
    Files.writeString(journalDir.resolve(ADDRESS).resolve("partitions"), "1\n");
    Files.writeString(journalDir.resolve(ADDRESS).resolve("ids"), ids + "\n");
    if (presized != null) {
      Files.writeString(journalDir.resolve(ADDRESS).resolve("expected-ids"), presized + "\n");
    }
    if (!snapshot) {
      Files.writeString(journalDir.resolve(ADDRESS).resolve("no-snapshots"), "");
    }
    Fingerprinter fp = Fingerprinter.forScope(ADDRESS + "/id");
    long now = System.currentTimeMillis();
    JournalOptions jo = new JournalOptions().setSyncPolicy(SyncPolicy.NONE)
        .setRollCycle(JournalOptions.rollCycleFor(Duration.ofMillis(WINDOW_MS)));
    long t0 = System.nanoTime();
    try (Journal j = Journal.open(dir, jo)) {
      j.replay(new JournalVisitor() {
      });
      AcceptBatch batch = new AcceptBatch(perRecord);
      int beforeSnapshot = snapshot ? (int) (ids - (long) ids * TAIL_PER_MILLE / 1000) : ids;
      for (int i = 0; i < ids; i++) {
        if (i == beforeSnapshot && i > 0) {
          if (!batch.isEmpty()) {
            j.appendAccepts(batch);
            batch.clear();
          }
          long s0 = System.nanoTime();
          SnapshotResult r = j.writeSnapshot(WINDOW_MS, out -> Recovery.compaction(now, WINDOW_MS, out));
          System.out.printf(Locale.ROOT, "snapshot of %,d entries, %,d bytes, in %d ms%n", r.entries(), r.bytes(),
              (System.nanoTime() - s0) / 1_000_000);
        }
        long f = fp.fingerprint("evt-" + i);
        if (perRecord == 1) {
          j.appendAccept(f, 0, 0, now, now + WINDOW_MS);
        } else {
          batch.add(f, 0, 0, now, now + WINDOW_MS);
          if (batch.size() == perRecord) {
            j.appendAccepts(batch);
            batch.clear();
          }
        }
      }
      if (!batch.isEmpty()) {
        j.appendAccepts(batch);
      }
      j.sync();
    }
    System.out.printf(Locale.ROOT, "built %,d ids (%d per record) in %s in %d ms%n", ids, perRecord, dir,
        (System.nanoTime() - t0) / 1_000_000);
  }

  private static String check(Vertx vertx, String id) throws Exception {
    return ((JsonObject) vertx.eventBus().request(ADDRESS, new JsonObject().put("id", id),
        new DeliveryOptions().addHeader(DedupAction.HEADER, "check")).toCompletionStage().toCompletableFuture()
        .get(60, TimeUnit.SECONDS).body()).getString("verdict");
  }

  private static void firstAnswer(Path journalDir) throws Exception {
    int expected = expectedIds(journalDir);
    Vertx vertx = Vertx.vertx();
    // Warm-up: load Vert.x, Chronicle and the service's classes on a throwaway journal, deleted at the end.
    Path warm = Files.createTempDirectory("restart-warm-up");
    try {
      String d = vertx.deployVerticle(new DedupVerticle(), new DeploymentOptions()
          .setConfig(options(warm, 0).toJson())).await();
      check(vertx, "warm-up");
      vertx.undeploy(d).await();
      for (int round = 1; round <= 2; round++) {
        long t0 = System.nanoTime();
        String deployment = vertx.deployVerticle(new DedupVerticle(), new DeploymentOptions()
            .setConfig(options(journalDir, expected).toJson())).await();
        long deployed = System.nanoTime();
        String verdict = check(vertx, "evt-0");
        long answered = System.nanoTime();
        System.out.printf(Locale.ROOT, "round %d: deploy (journal open, replay, rebuild) %d ms, first answer %s "
            + "%d ms after the deployment began%n", round, (deployed - t0) / 1_000_000, verdict,
            (answered - t0) / 1_000_000);
        vertx.undeploy(deployment).await();
      }
    } finally {
      vertx.close().await();
      FileUtils.deleteDirectory(warm.toFile());
    }
  }

  private static void serve(Path journalDir) throws Exception {
    long jvmStartMs = ManagementFactory.getRuntimeMXBean().getStartTime();
    Vertx vertx = Vertx.vertx();
    long t0 = System.nanoTime();
    vertx.deployVerticle(new DedupVerticle(), new DeploymentOptions()
        .setConfig(options(journalDir, expectedIds(journalDir)).toJson())).await();
    long deployMs = (System.nanoTime() - t0) / 1_000_000;
    String verdict = check(vertx, "evt-0");
    long answered = System.nanoTime();
    System.out.println("first-answer " + verdict + " processMs=" + (System.currentTimeMillis() - jvmStartMs)
        + " deployMs=" + deployMs);
    System.out.flush();
    // Then until the partition's own table holds its ids (a window snapshot restored in place answers from the
    // mapped file until the table built beside it is installed): 12-byte slots, at most 3/4 full.
    while (true) {
      JsonObject stats = (JsonObject) vertx.eventBus().request(ADDRESS + ".0", null,
          new DeliveryOptions().addHeader(DedupAction.HEADER, "stats")).toCompletionStage().toCompletableFuture()
          .get(60, TimeUnit.SECONDS).body();
      if (stats.getLong("tableBytes") / 12 * 3 / 4 >= stats.getLong("held")) {
        break;
      }
      Thread.sleep(10);
    }
    System.out.println("settled afterFirstAnswerMs=" + (System.nanoTime() - answered) / 1_000_000);
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }

  /*
   * Round robin, so that a change in the machine's load during the run weighs on every directory alike: one child
   * per directory stays up between rounds; each round kills each child in turn and measures its successor.
   */
  private static void ratios(int rounds, List<Path> dirs) throws Exception {
    List<String> flags = ManagementFactory.getRuntimeMXBean().getInputArguments();
    Process[] children = new Process[dirs.size()];
    long[][] ms = new long[dirs.size()][rounds];
    try {
      for (int d = 0; d < dirs.size(); d++) {
        children[d] = serveChild(flags, dirs.get(d));
        System.out.println(dirs.get(d) + " first start: " + firstLine(children[d]) + "; "
            + line(children[d], "settled"));
      }
      for (int r = 0; r < rounds; r++) {
        for (int d = 0; d < dirs.size(); d++) {
          children[d].destroyForcibly();
          long killed = System.nanoTime();
          children[d].waitFor();
          children[d] = serveChild(flags, dirs.get(d));
          String line = firstLine(children[d]);
          ms[d][r] = (System.nanoTime() - killed) / 1_000_000;
          // The next restart is timed once this one has settled: no table of this one is built meanwhile.
          String settled = line(children[d], "settled");
          System.out.printf(Locale.ROOT, "round %d %s: kill -9 -> new JVM -> first answer %d ms (%s; %s)%n", r + 1,
              dirs.get(d), ms[d][r], line, settled);
        }
      }
    } finally {
      for (Process p : children) {
        if (p != null) {
          p.destroyForcibly();
        }
      }
    }
    long[] medians = new long[dirs.size()];
    for (int d = 0; d < dirs.size(); d++) {
      long[] sorted = ms[d].clone();
      java.util.Arrays.sort(sorted);
      medians[d] = sorted[sorted.length / 2];
    }
    for (int d = 0; d < dirs.size(); d++) {
      System.out.printf(Locale.ROOT,
          "%s: %,d ids (expectedIdsPerPartition %,d), median kill -9 -> first answer %d ms, %.2fx the first; all %s%n",
          dirs.get(d), ids(dirs.get(d)), expectedIds(dirs.get(d)), medians[d], (double) medians[d] / medians[0],
          java.util.Arrays.toString(ms[d]));
    }
  }

  private static Process serveChild(List<String> flags, Path journalDir) throws Exception {
    List<String> cmd = Processes.javaCommand(flags, System.getProperty("java.class.path"),
        RestartBenchmark.class.getName(), List.of("serve", journalDir.toString()));
    return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
  }

  private static long[] killRestart(Path journalDir, int times) throws Exception {
    long[] result = new long[times];
    // The flags this JVM was started with (Chronicle's add-opens among them), then the same classpath.
    List<String> cmd = Processes.javaCommand(ManagementFactory.getRuntimeMXBean().getInputArguments(),
        System.getProperty("java.class.path"), RestartBenchmark.class.getName(), List.of("serve",
            journalDir.toString()));
    Process child = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String first = firstLine(child);
    System.out.println("first start: " + first);
    for (int i = 1; i <= times; i++) {
      child.destroyForcibly();
      long killed = System.nanoTime();
      child.waitFor();
      child = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      String line = firstLine(child);
      result[i - 1] = (System.nanoTime() - killed) / 1_000_000;
      System.out.printf(Locale.ROOT, "restart %d: kill -9 -> new JVM -> first answer %d ms (%s)%n", i,
          result[i - 1], line);
    }
    child.destroyForcibly();
    child.waitFor();
    return result;
  }

  private static String firstLine(Process child) throws Exception {
    return line(child, "first-answer");
  }

  /** One reader per child, so that a line read ahead by one call is not lost to the next. */
  private static final java.util.Map<Process, BufferedReader> READERS = new java.util.HashMap<>();

  /** The child's next line that starts with {@code prefix}; the lines before it are skipped. */
  private static String line(Process child, String prefix) throws Exception {
    BufferedReader r = READERS.computeIfAbsent(child,
        c -> new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.UTF_8)));
    String line;
    while ((line = r.readLine()) != null) {
      if (line.startsWith(prefix)) {
        return line;
      }
    }
    throw new IllegalStateException("the child ended before a line starting with " + prefix);
  }
}
