package io.github.vertxdedup.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.TestDeployments;
import io.github.vertxdedup.journal.ClaimEntry;
import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.JournalOptions;
import io.github.vertxdedup.journal.JournalVisitor;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.window.Fingerprinter;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The inspector's commands over a journal the service wrote (checks, a keyed event, an open claim, a committed
 * claim) plus an offset commit, judged at chosen instants.
 */
class JournalInspectorTest {

  private static final long T0 = 1_700_000_000_000L;
  private static final String WINDOW = "60000";

  @TempDir
  static Path journalDir;

  static Path partitionDir;

  @BeforeAll
  static void writeJournal() throws Exception {
    ManualClock clock = new ManualClock(T0);
    Vertx vertx = Vertx.vertx();
    try {
      DedupOptions options = new DedupOptions().setWindowMs(60_000).setBucketMs(1_000)
          .setJournalDir(journalDir.toString());
      String deployment = TestDeployments.deployService(vertx, clock, options);
      request(vertx, "check", new JsonObject().put("id", "a"));
      request(vertx, "check", new JsonObject().put("id", "b").put("key", "invoice-1").put("payloadHash", "h"));
      request(vertx, "claim", new JsonObject().put("id", "c").put("leaseMs", 10_000).put("claimer", "worker-1"));
      String token = request(vertx, "claim", new JsonObject().put("id", "d")).getString("claimToken");
      request(vertx, "commit", new JsonObject().put("id", "d").put("claimToken", token));
      await(vertx.undeploy(deployment));
    } finally {
      await(vertx.close());
    }
    partitionDir = journalDir.resolve("dedup").resolve("0");
    JournalOptions jo = new JournalOptions().setRollCycle(JournalOptions.rollCycleFor(Duration.ofMinutes(1)))
        .setSyncPolicy(SyncPolicy.NONE).setClock(() -> T0 + 2_000);
    try (Journal j = Journal.open(partitionDir, jo)) {
      j.replay(new JournalVisitor() {
      });
      j.appendOffsetCommit("orders", 0, 42);
      j.appendOffsetCommit("orders", 0, 40);
    }
  }

  @Test
  void shouldDumpEveryEntryWithItsRecordAndLiveness() {
    Result r = run("dump", partitionDir.toString(), "--window-ms", WINDOW, "--now-ms", Long.toString(T0 + 5_000));
    assertThat(r.code).isZero();
    assertThat(r.out).contains("ACCEPT fp=" + hex(idFp("a")) + " key=- payload=- acceptedAt=2023-11-14T22:13:20Z "
        + "expiresAt=2023-11-14T22:14:20Z live");
    assertThat(r.out).contains("ACCEPT fp=" + hex(idFp("b")) + " key=" + hex(keyFp("invoice-1")));
    assertThat(r.out).containsPattern("CLAIM fp=" + hex(idFp("c")) + " key=- token=[0-9a-f]{16} claimedAt="
        + "2023-11-14T22:13:20Z payload=- rememberUntil=default claimer=worker-1 leaseEnd=2023-11-14T22:13:30Z\n");
    assertThat(r.out).contains("COMMIT fp=" + hex(idFp("d")));
    assertThat(r.out).contains("OFFSET topic=orders partition=0 offset=42", "OFFSET topic=orders partition=0 offset=40");
    assertThat(r.out).containsPattern("# \\d+ records, 7 entries \\(7 printed\\), 0 torn");
    // c is open; d's claim, committed, is not (its lease has not ended either)
    assertThat(r.out).containsPattern("# open claims at 2023-11-14T22:13:25Z: 1 \\(neither committed nor released,"
        + " lease not ended\\)\n#   [0-9a-f]+ CLAIM fp=" + hex(idFp("c")) + " token=[0-9a-f]{16} "
        + "leaseEnd=2023-11-14T22:13:30Z\n");

    Result limited = run("dump", partitionDir.toString(), "--window-ms", WINDOW, "--limit", "1");
    assertThat(limited.out.lines().filter(l -> !l.startsWith("#"))).hasSize(1);
  }

  /**
   * dump and summary judge claims by one definition, the journal's recovery: open means neither committed nor
   * released (by fingerprint, the latest claim), not replaced by a later claim, lease not ended. Here five claims whose
   * leases all run at the instant judged, of which two are open, and one whose lease ended.
   */
  @Test
  void shouldCallTheSameClaimsOpenInDumpAsInSummary(@TempDir Path dir) {
    JournalOptions jo = new JournalOptions().setRollCycle(JournalOptions.rollCycleFor(Duration.ofMinutes(1)))
        .setSyncPolicy(SyncPolicy.NONE).setClock(() -> T0);
    long lease = T0 + 30_000;
    try (Journal j = Journal.open(dir, jo)) {
      j.replay(new JournalVisitor() {
      });
      j.appendClaim(ClaimEntry.of(idFp("committed"), 0, 0, 1, T0, lease, ClaimEntry.NOT_RECORDED, "w"));
      j.appendCommit(idFp("committed"), 1, T0 + 60_000);
      j.appendClaim(ClaimEntry.of(idFp("released"), 0, 0, 2, T0, lease, ClaimEntry.NOT_RECORDED, "w"));
      j.appendRelease(idFp("released"), 2);
      j.appendClaim(ClaimEntry.of(idFp("open"), 0, 0, 3, T0, lease, ClaimEntry.NOT_RECORDED, "w"));
      j.appendClaim(ClaimEntry.of(idFp("ended"), 0, 0, 4, T0, T0 + 1_000, ClaimEntry.NOT_RECORDED, "w"));
      j.appendClaim(ClaimEntry.of(idFp("replaced"), 0, 0, 5, T0, lease, ClaimEntry.NOT_RECORDED, "w"));
      j.appendClaim(ClaimEntry.of(idFp("replaced"), 0, 0, 6, T0, lease, ClaimEntry.NOT_RECORDED, "w"));
    }
    String now = Long.toString(T0 + 5_000);

    Result summary = run("summary", dir.toString(), "--window-ms", WINDOW, "--now-ms", now);
    Result dump = run("dump", dir.toString(), "--window-ms", WINDOW, "--now-ms", now);

    assertThat(summary.out).contains("open claims: 2");
    assertThat(dump.out).contains("# open claims at 2023-11-14T22:13:25Z: 2 ");
    List<String> listed = dump.out.lines().filter(l -> l.startsWith("#   ")).toList();
    assertThat(listed).hasSize(2);
    assertThat(listed.get(0)).contains("CLAIM fp=" + hex(idFp("open")) + " token=" + hex(3));
    assertThat(listed.get(1)).contains("CLAIM fp=" + hex(idFp("replaced")) + " token=" + hex(6));
    // each listed index is the index of that CLAIM record's line
    for (String l : listed) {
      String index = l.substring(4, l.indexOf(' ', 4));
      String claim = l.substring(l.indexOf("CLAIM fp="), l.indexOf(" leaseEnd="));
      assertThat(dump.out.lines()).anySatisfy(line -> assertThat(line).startsWith(index + " " + claim.substring(0,
          claim.indexOf(" token="))).contains(claim.substring(claim.indexOf(" token="))));
    }
    assertThat(dump.out.lines().filter(l -> l.contains(" CLAIM ") && !l.startsWith("#")))
        .as("a CLAIM line gives its lease end, not a state a later record may change").hasSize(6)
        .noneMatch(l -> l.endsWith(" open") || l.endsWith(" ended"));
  }

  @Test
  void shouldPrintTheBuildsVersionAndTheJournalFormatItReads() {
    String expected = System.getProperty("project.version");
    assertThat(expected).as("project.version (set by the pom)").isNotBlank();

    Result r = run("--version");

    assertThat(r.code).isZero();
    assertThat(r.out).isEqualTo("journal-inspector " + expected + " (vertx-dedup)" + System.lineSeparator()
        + "journal record format: version " + ClaimEntry.CURRENT_FORMAT + " (the newest it reads)"
        + System.lineSeparator());
  }

  /**
   * A Kafka consumer's window journal ({@code <journalDir>/<group.id>/<topic>-<partition>}, scope
   * {@code <dedup.address>.<group.id>.<topic>-<partition>}): find with another address is refused, naming the option
   * and the address the journal has, instead of a verdict of ABSENT in the wrong scope.
   */
  @Test
  void shouldRefuseAnAddressThatIsNotTheKafkaWindowsJournal(@TempDir Path root) {
    Path dir = root.resolve("payments-group").resolve("orders-3");
    String scope = "dedup.payments-group.orders-3";
    JournalOptions jo = new JournalOptions().setRollCycle(JournalOptions.rollCycleFor(Duration.ofMinutes(1)))
        .setSyncPolicy(SyncPolicy.NONE).setClock(() -> T0);
    try (Journal j = Journal.open(dir, jo)) {
      j.replay(new JournalVisitor() {
      });
      j.appendAccept(Fingerprinter.forScope(scope + "/id").fingerprint("order-1"), 0, 0, T0, T0 + 60_000);
      j.appendOffsetCommit("orders", 3, 1);
    }
    String now = Long.toString(T0 + 5_000);

    for (String wrong : new String[] {"dedup", "dedup.orders-3", "dedup.other-group.orders-3", "payments-group.orders-3"}) {
      Result r = run("find", dir.toString(), "--window-ms", WINDOW, "--now-ms", now, "--address", wrong,
          "--id", "order-1");
      assertThat(r.code).as("--address %s", wrong).isEqualTo(2);
      assertThat(r.out).as("no verdict").doesNotContain("ABSENT").doesNotContain("state at");
      assertThat(r.err).contains("--address '" + wrong + "': no journal of that address here",
          "topic-partition orders-3 (its offset records name it) of consumer group 'payments-group'",
          "--address dedup.payments-group.orders-3 with the default dedup.address");
    }

    Result right = run("find", dir.toString(), "--window-ms", WINDOW, "--now-ms", now, "--address", scope,
        "--id", "order-1");
    assertThat(right.code).as(right.err).isZero();
    assertThat(right.out).contains("REMEMBERED until 2023-11-14T22:14:20Z");
    Result otherDedupAddress = run("find", dir.toString(), "--window-ms", WINDOW, "--now-ms", now, "--address",
        "payments.payments-group.orders-3", "--id", "order-1");
    assertThat(otherDedupAddress.code).as("another dedup.address of the same window: a verdict").isEqualTo(1);
    assertThat(otherDedupAddress.out).contains("ABSENT: not in the cycles");
  }

  @Test
  void shouldFindAnIdAndSayWhetherItIsStillRemembered() {
    String now = Long.toString(T0 + 5_000);
    Result a = run("find", partitionDir.toString(), "--window-ms", WINDOW, "--now-ms", now, "--id", "a");
    assertThat(a.code).isZero();
    assertThat(a.out).contains("id 'a' (scope dedup/id): fingerprint " + hex(idFp("a")),
        "ACCEPT as id at 2023-11-14T22:13:20Z", "REMEMBERED until 2023-11-14T22:14:20Z");

    Result key = run("find", partitionDir.toString(), "--window-ms", WINDOW, "--now-ms", now, "--key", "invoice-1");
    assertThat(key.out).contains("ACCEPT as key", "REMEMBERED until");
    Result claim = run("find", partitionDir.toString(), "--window-ms", WINDOW, "--now-ms", now, "--id", "c");
    assertThat(claim.out).contains("CLAIM token", " by worker-1, lease until", "IN_FLIGHT until 2023-11-14T22:13:30Z");
    Result committed = run("find", partitionDir.toString(), "--window-ms", WINDOW, "--now-ms", now, "--fingerprint",
        hex(idFp("d")));
    assertThat(committed.out).contains("COMMIT token", "REMEMBERED until");

    Result later = run("find", partitionDir.toString(), "--window-ms", WINDOW, "--now-ms",
        Long.toString(T0 + 120_000), "--id", "a");
    assertThat(later.out).contains("ABSENT: seen, but no longer remembered");
    Result never = run("find", partitionDir.toString(), "--window-ms", WINDOW, "--id", "never-sent");
    assertThat(never.code).isEqualTo(1);
    assertThat(never.out).contains("ABSENT: not in the cycles");
  }

  @Test
  void shouldSummarizeLiveEntriesBytesAndOffsets() {
    Result r = run("summary", partitionDir.toString(), "--window-ms", WINDOW, "--now-ms", Long.toString(T0 + 5_000));
    assertThat(r.code).isZero();
    // a, b, the key invoice-1, the committed d; c is claimed, not remembered
    assertThat(r.out).contains("live entries (ids and keys remembered now): 4, open claims: 1");
    assertThat(r.out).contains("oldest live: 2023-11-14T22:13:20Z");
    assertThat(r.out).containsPattern("record bytes read: \\d+ \\(\\d+\\.\\d bytes per live entry");
    assertThat(r.out).contains("offset orders/0: 42");
  }

  @Test
  void shouldJudgeAKeyAndItsFirstSeenAsARestartWouldAfterItsClaimWasCommitted(@TempDir Path dir) {
    long id = idFp("e");
    long rememberUntil = T0 + 600_000; // explicit, beyond the window
    JournalOptions jo = new JournalOptions().setRollCycle(JournalOptions.rollCycleFor(Duration.ofMinutes(1)))
        .setSyncPolicy(SyncPolicy.NONE).setClock(() -> T0);
    try (Journal j = Journal.open(dir, jo)) {
      j.replay(new JournalVisitor() {
      });
      j.appendClaim(ClaimEntry.of(id, keyFp("invoice-9"), 0, 77, T0, T0 + 30_000, rememberUntil, "worker-2"));
      j.appendCommit(id, 77, rememberUntil);
    }
    String now = Long.toString(T0 + 5_000);

    // The commit settled the claim that carried the key: the key is remembered, not in flight.
    Result key = run("find", dir.toString(), "--window-ms", WINDOW, "--now-ms", now, "--key", "invoice-9");
    assertThat(key.out).contains("CLAIM token", "REMEMBERED until 2023-11-14T22:23:20Z").doesNotContain("IN_FLIGHT");

    // A restart takes the claim time as first seen when the claim named its own remember-until.
    Result summary = run("summary", dir.toString(), "--window-ms", WINDOW, "--now-ms", now);
    assertThat(summary.out).contains("live entries (ids and keys remembered now): 2, open claims: 0",
        "oldest live: 2023-11-14T22:13:20Z, newest live: 2023-11-14T22:13:20Z");
  }

  @Test
  void shouldReadTheJournalOfARunningPartitionWithoutItsLock(@TempDir Path runningDir) throws Exception {
    ManualClock clock = new ManualClock(T0);
    Vertx vertx = Vertx.vertx();
    try {
      DedupOptions options = new DedupOptions().setWindowMs(60_000).setBucketMs(1_000)
          .setJournalDir(runningDir.toString());
      TestDeployments.deployService(vertx, clock, options);
      request(vertx, "check", new JsonObject().put("id", "running-1"));
      Path dir = runningDir.resolve("dedup").resolve("0");
      String now = Long.toString(T0 + 5_000);

      // The partition holds the journal's lock and keeps appending; the inspector reads beside it.
      Result first = run("find", dir.toString(), "--window-ms", WINDOW, "--now-ms", now, "--id", "running-1");
      assertThat(first.err).isEmpty();
      assertThat(first.code).isZero();
      assertThat(first.out).contains("REMEMBERED until 2023-11-14T22:14:20Z");

      request(vertx, "check", new JsonObject().put("id", "running-2"));
      Result later = run("summary", dir.toString(), "--window-ms", WINDOW, "--now-ms", now);
      assertThat(later.code).isZero();
      assertThat(later.out).contains("live entries (ids and keys remembered now): 2, open claims: 0");

      // The partition was not disturbed: it still answers and journals.
      assertThat(request(vertx, "check", new JsonObject().put("id", "running-1")).getString("verdict"))
          .isEqualTo("DUPLICATE");
    } finally {
      await(vertx.close());
    }
  }

  @Test
  void shouldRefuseFingerprintZeroWhichMeansNoKey() {
    Result r = run("find", partitionDir.toString(), "--window-ms", WINDOW, "--fingerprint", "0");
    assertThat(r.code).isEqualTo(2);
    assertThat(r.err).contains("--fingerprint must be non-zero");
  }

  @Test
  void shouldRefuseNumericOptionsOutOfRangeAsUsageErrors() {
    String dir = partitionDir.toString();
    Result negativeLimit = run("dump", dir, "--window-ms", WINDOW, "--limit", "-1");
    assertThat(negativeLimit.code).isEqualTo(2);
    assertThat(negativeLimit.err).contains("--limit must be >= 0 (0 prints only the totals) but was -1");
    assertThat(negativeLimit.out).doesNotContain("printed");

    Result zeroLimit = run("dump", dir, "--window-ms", WINDOW, "--limit", "0");
    assertThat(zeroLimit.code).isZero();
    assertThat(zeroLimit.out.lines().filter(l -> !l.startsWith("#"))).isEmpty();
    assertThat(zeroLimit.out).contains("(0 printed)");

    for (String command : new String[] {"dump", "summary"}) {
      for (String window : new String[] {"0", "-5", Long.toString(DedupOptions.MAX_WINDOW_MS + 1)}) {
        Result r = run(command, dir, "--window-ms", window);
        assertThat(r.code).as("%s --window-ms %s", command, window).isEqualTo(2);
        assertThat(r.err).contains("--window-ms must be 1 .. " + DedupOptions.MAX_WINDOW_MS
            + " (366 days, the longest windowMs a service takes) but was " + window);
      }
      Result negativeNow = run(command, dir, "--window-ms", WINDOW, "--now-ms", "-1");
      assertThat(negativeNow.code).isEqualTo(2);
      assertThat(negativeNow.err).contains("--now-ms must be >= 0 (epoch milliseconds) but was -1");
    }
    Result findNow = run("find", dir, "--window-ms", WINDOW, "--now-ms", "-1", "--id", "a");
    assertThat(findNow.code).isEqualTo(2);
    assertThat(findNow.err).contains("--now-ms must be >= 0");

    Result longest = run("summary", dir, "--window-ms", Long.toString(DedupOptions.MAX_WINDOW_MS));
    assertThat(longest.err).doesNotContain("--window-ms must be");
  }

  @Test
  void shouldRefuseADirectoryThatHoldsNoJournal() {
    Result r = run("summary", journalDir.resolve("nothing").toString(), "--window-ms", WINDOW);
    assertThat(r.code).isEqualTo(2);
    assertThat(r.err).contains("DIR must be a journal directory");
  }

  // ---------------------------------------------------------------------------------------------------------------

  private static long idFp(String id) {
    return Fingerprinter.forScope("dedup/id").fingerprint(id);
  }

  private static long keyFp(String key) {
    return Fingerprinter.forScope("dedup/key").fingerprint(key);
  }

  private static String hex(long v) {
    return String.format("%016x", v);
  }

  private record Result(int code, String out, String err) {
  }

  private static Result run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = JournalInspector.commandLine();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    int code = cl.execute(args);
    return new Result(code, out.toString(), err.toString());
  }

  private static JsonObject request(Vertx vertx, String action, JsonObject body) throws Exception {
    return (JsonObject) await(vertx.eventBus().request("dedup", body,
        new DeliveryOptions().addHeader(DedupAction.HEADER, action))).body();
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }
}
