package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.impl.protocol.PartitionRouting;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.window.Fingerprinter;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.zip.CRC32C;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Claims carry their claimer: after a restart the same claimer has its orphaned claims released at once (journaled,
 * so a later replay agrees), while the claims of other claimers, of nobody, and of journals written before claimers
 * existed (format version 1) wait out their leases. The clock is a {@link ManualClock}: "waits out its lease" means
 * the claim is IN_FLIGHT until the clock passes the lease end, and no longer.
 */
@ExtendWith(VertxExtension.class)
class OrphanedClaimsTest {

  private static final long T0 = 1_700_000_000_000L;
  private static final long LEASE_MS = 60_000;

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock(T0);
  private Vertx vertx;
  private LocalPartition partition;

  @BeforeEach
  void setUp(Vertx vertx) {
    this.vertx = vertx;
  }

  private DedupOptions options() {
    return new DedupOptions().setWindowMs(600_000).setBucketMs(1_000).setLeaseMs(LEASE_MS)
        .setJournalDir(dir.toString()).setJournalSync(SyncPolicy.NONE).validate();
  }

  private Path journalDir() {
    return dir.resolve("dedup").resolve("0");
  }

  private void start() {
    partition = await(LocalPartition.deployJournaled(vertx, options(), clock, journalDir(), null));
  }

  /** Stops the partition; its open claims stay open in the journal, as a killed owner leaves them. */
  private void stop() {
    await(partition.undeploy());
  }

  @Test
  void shouldReleaseOnlyTheRestartedClaimersOwnClaimsAndJournalTheReleases() {
    start();
    assertThat(claim("x", "consumer-a").getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(claim("x2", "consumer-a").getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(claim("y", "consumer-b").getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(claim("z", null).getString("verdict")).isEqualTo("ACCEPTED");
    stop();

    clock.advanceMs(1_000);
    start();
    for (String id : new String[] {"x", "x2", "y", "z"}) {
      assertThat(lookup(id)).as(id).isEqualTo("IN_FLIGHT");
    }
    assertThat(await(partition.releaseClaimsOf("consumer-c"))).as("nobody's claims").isZero();
    assertThat(await(partition.releaseClaimsOf("consumer-a"))).isEqualTo(2);
    assertThat(await(partition.releaseClaimsOf("consumer-a"))).as("already released").isZero();
    assertThat(lookup("x")).isEqualTo("ABSENT");
    assertThat(lookup("x2")).isEqualTo("ABSENT");
    assertThat(claim("y", "consumer-a").getString("verdict")).isEqualTo("IN_FLIGHT");
    assertThat(claim("z", "consumer-a").getString("verdict")).isEqualTo("IN_FLIGHT");
    assertThat(stats().getLong("releases")).isEqualTo(2);

    // The releases are in the journal: a later restart does not bring the claims back.
    stop();
    start();
    assertThat(lookup("x")).isEqualTo("ABSENT");
    assertThat(lookup("y")).isEqualTo("IN_FLIGHT");
    assertThat(claim("x", "consumer-a").getString("verdict")).isEqualTo("ACCEPTED");

    // The others are free exactly when their leases end (claimed at T0, lease 60 s).
    clock.setMs(T0 + LEASE_MS - 1);
    assertThat(claim("y", "consumer-a").getString("verdict")).isEqualTo("IN_FLIGHT");
    clock.setMs(T0 + LEASE_MS);
    assertThat(claim("y", "consumer-a").getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(claim("z", "consumer-a").getString("verdict")).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldKeepWhatAClaimCarriesAcrossTheRestartAlongWithItsClaimer() {
    start();
    JsonObject body = new JsonObject().put("id", "p").put("payloadHash", "h1").put("claimer", "consumer-a")
        .put("rememberUntilMs", T0 + 120_000).put("leaseMs", 30_000);
    String token = reply("claim", body).getString("claimToken");
    stop();
    start();
    JsonObject look = lookupJson("p");
    assertThat(look.getLong("firstSeenMs")).as("claim time").isEqualTo(T0);
    assertThat(look.getLong("expiresAtMs")).as("lease end").isEqualTo(T0 + 30_000);
    // The token still commits it, with the payload hash and explicit expiry the claim carried.
    assertThat(reply("commit", new JsonObject().put("id", "p").put("claimToken", token)).getString("verdict"))
        .isEqualTo("COMMITTED");
    assertThat(reply("check", new JsonObject().put("id", "p").put("payloadHash", "h2")).getString("verdict"))
        .isEqualTo("CONFLICT");
    clock.setMs(T0 + 121_000);
    assertThat(lookup("p")).as("remembered until its explicit expiry only").isEqualTo("ABSENT");
  }

  @Test
  void shouldReplayAClaimOfAVersion1JournalAndLeaveItToItsLease() {
    start();
    assertThat(reply("check", new JsonObject().put("id", "a")).getString("verdict")).isEqualTo("ACCEPTED");
    stop();
    // What 0.1.0-SNAPSHOT wrote for a claim of "old" at T0 + 500 with a 60 s lease: a version-1 CLAIM record whose
    // claimer text carries the claim time, payload hash and remember-until.
    long fp = Fingerprinter.forScope(PartitionRouting.idScope("dedup")).fingerprint("old");
    appendRaw(claimRecordV1(fp, 0, 0x8000_0000_0000_0042L, T0 + 60_500, "c1;" + (T0 + 500) + ";0;-"));

    clock.advanceMs(1_000);
    start();
    JsonObject look = lookupJson("old");
    assertThat(look.getString("state")).isEqualTo("IN_FLIGHT");
    assertThat(look.getLong("firstSeenMs")).as("claim time from the old text").isEqualTo(T0 + 500);
    assertThat(look.getLong("expiresAtMs")).isEqualTo(T0 + 60_500);
    assertThat(await(partition.releaseClaimsOf("c1;" + (T0 + 500) + ";0;-"))).as("an old claim names nobody")
        .isZero();
    assertThat(reply("commit", new JsonObject().put("id", "old").put("claimToken", "8000000000000042"))
        .getString("verdict")).as("its token still commits it").isEqualTo("COMMITTED");
    assertThat(reply("check", new JsonObject().put("id", "a")).getString("verdict")).isEqualTo("DUPLICATE");

    // The commit is journaled against the old claim: after a restart the id is remembered, no longer claimed.
    stop();
    start();
    assertThat(lookup("old")).isEqualTo("REMEMBERED");
  }

  // ---------------------------------------------------------------------------------------------------------------

  /** A CLAIM record of format version 1, byte for byte (see the persistence module's RecordFormat). */
  private static byte[] claimRecordV1(long fp, long keyFp, long token, long leaseEndMs, String text) {
    byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(8 + 33 + utf8.length + 4).order(ByteOrder.LITTLE_ENDIAN);
    b.put((byte) 1).put((byte) 2).putShort((short) 0).putInt(1);
    b.putLong(fp).putLong(keyFp).putLong(token).putLong(leaseEndMs).put((byte) utf8.length).put(utf8);
    CRC32C crc = new CRC32C();
    crc.update(b.array(), 0, b.position());
    b.putInt((int) crc.getValue());
    return b.array();
  }

  private void appendRaw(byte[] record) {
    // Five-minute cycles: what JournalOptions.rollCycleFor picks for a ten-minute window.
    try (SingleChronicleQueue q = SingleChronicleQueueBuilder.binary(journalDir())
        .rollCycle(RollCycles.FIVE_MINUTELY).timeProvider(clock::nowMs).build();
        ExcerptAppender a = q.createAppender();
        DocumentContext dc = a.writingDocument()) {
      dc.wire().bytes().write(record);
    }
  }

  private JsonObject claim(String id, String claimer) {
    JsonObject body = new JsonObject().put("id", id);
    if (claimer != null) {
      body.put("claimer", claimer);
    }
    return reply("claim", body);
  }

  private String lookup(String id) {
    return lookupJson(id).getString("state");
  }

  private JsonObject lookupJson(String id) {
    return reply("lookup", new JsonObject().put("id", id));
  }

  private JsonObject stats() {
    return reply("stats", null);
  }

  private JsonObject reply(String action, JsonObject body) {
    return (JsonObject) await(request(action, body)).body();
  }

  private Future<Message<Object>> request(String action, JsonObject body) {
    return vertx.eventBus().request("dedup.0", body, new DeliveryOptions().addHeader(DedupAction.HEADER, action));
  }

  private static <T> T await(Future<T> f) {
    return TestFutures.await(f, 20);
  }
}
