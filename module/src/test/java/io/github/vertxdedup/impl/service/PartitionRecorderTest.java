package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.impl.journal.PartitionJournal;
import io.github.vertxdedup.window.CapacityPolicy;
import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What {@link PartitionRecorder} writes for a decision: the window entries, the journal record with its expiry (the
 * window's length by default, the explicit remember-until otherwise, the commit instant for a commit that remembers
 * nothing), the counters, and the latest journal write a reply must wait for.
 */
class PartitionRecorderTest {

  private static final long T0 = 1_700_000_000_000L;
  private static final long WINDOW_MS = 60_000;

  private final ManualClock clock = new ManualClock(T0);
  private final DedupWindow window = DedupWindow.builder().window(Duration.ofMillis(WINDOW_MS))
      .bucket(Duration.ofSeconds(1)).clock(clock).maxIds(1_000).capacityPolicy(CapacityPolicy.REJECT).build();
  private final RecordingJournal journal = new RecordingJournal();
  private final PartitionCounters counters = new PartitionCounters();
  private final PartitionRecorder recorder = new PartitionRecorder(window, journal, counters, WINDOW_MS);

  @Test
  void shouldJournalAWindowAcceptWithTheWindowsExpiryByDefaultAndTheExplicitOneOtherwise() {
    window.check(1);
    recorder.windowAccepted(1, DedupWindow.NO_PAYLOAD_HASH, DedupWindow.DEFAULT_REMEMBER_UNTIL, false, T0);
    window.check(2, 9, T0 + 5_000);
    recorder.windowAccepted(2, 9, T0 + 5_000, true, T0);
    assertThat(journal.records).containsExactly("accepted 1 0 0 " + T0 + " " + (T0 + WINDOW_MS),
        "accepted 2 0 9 " + T0 + " " + (T0 + 5_000));
    assertThat(counters.accepted).isEqualTo(2);
    assertThat(counters.uncovered).as("the second, marked uncovered").isEqualTo(1);
  }

  @Test
  void shouldPutACommittedClaimsIdAndKeyIntoTheWindowUnlessItsRememberUntilHasPassed() {
    clock.setMs(T0 + 1_000);
    Claim remembered = claim(1, 2, DedupWindow.DEFAULT_REMEMBER_UNTIL);
    recorder.committed(remembered, T0 + 1_000);
    assertThat(window.lookup(1)).isNotNull();
    assertThat(window.lookup(2)).as("the key").isNotNull();

    Claim lapsed = claim(3, 4, T0 + 500); // remember-until before the commit: nothing more to remember
    recorder.committed(lapsed, T0 + 1_000);
    assertThat(window.lookup(3)).isNull();
    assertThat(window.lookup(4)).isNull();

    assertThat(journal.records).containsExactly(
        "committed 1 2 " + (T0 + 1_000) + " " + (T0 + 1_000 + WINDOW_MS),
        "committed 3 4 " + (T0 + 1_000) + " " + (T0 + 1_000));
    assertThat(counters.commits).isEqualTo(2);
  }

  @Test
  void shouldCountClaimsReleasesAndUncoveredAcceptsAndKeepTheLatestWrite() {
    assertThat(recorder.lastWrite().succeeded()).as("nothing written yet").isTrue();
    recorder.claimed(claim(1, 0, DedupWindow.DEFAULT_REMEMBER_UNTIL), true, T0);
    Future<?> claimWrite = recorder.lastWrite();
    assertThat(claimWrite).isSameAs(journal.last);
    recorder.released(claim(1, 0, DedupWindow.DEFAULT_REMEMBER_UNTIL));
    assertThat(recorder.lastWrite()).isSameAs(journal.last).isNotSameAs(claimWrite);

    assertThat(journal.records).containsExactly("claimed 1 0 t1 " + T0 + " " + (T0 + 30_000), "released 1 0");
    assertThat(counters.claims).isEqualTo(1);
    assertThat(counters.accepted).as("a claim is an accept").isEqualTo(1);
    assertThat(counters.uncovered).isEqualTo(1);
    assertThat(counters.releases).isEqualTo(1);
  }

  private static Claim claim(long idFp, long keyFp, long rememberUntilMs) {
    return new Claim(idFp, keyFp, 0, rememberUntilMs, "t" + idFp, idFp, false, T0, T0 + 30_000, null);
  }

  /** Records each write as text and answers it with a future of its own, not yet complete. */
  private static final class RecordingJournal implements PartitionJournal {
    final List<String> records = new ArrayList<>();
    Future<Void> last;

    private Future<Void> write(String record) {
      records.add(record);
      last = Promise.<Void>promise().future();
      return last;
    }

    @Override
    public Future<Void> open() {
      return Future.succeededFuture();
    }

    @Override
    public Future<Void> recover(RecoveryTarget sink) {
      return Future.succeededFuture();
    }

    @Override
    public Future<Void> accepted(long idFingerprint, long keyFingerprint, long payloadHash, long firstSeenMs,
        long expiresAtMs) {
      return write("accepted " + idFingerprint + " " + keyFingerprint + " " + payloadHash + " " + firstSeenMs + " "
          + expiresAtMs);
    }

    @Override
    public Future<Void> claimed(long idFingerprint, long keyFingerprint, long payloadHash, String claimToken,
        long claimedAtMs, long leaseEndMs, long rememberUntilMs, String claimer) {
      return write("claimed " + idFingerprint + " " + keyFingerprint + " " + claimToken + " " + claimedAtMs + " "
          + leaseEndMs);
    }

    @Override
    public Future<Void> committed(long idFingerprint, long keyFingerprint, long payloadHash, long committedAtMs,
        long expiresAtMs) {
      return write("committed " + idFingerprint + " " + keyFingerprint + " " + committedAtMs + " " + expiresAtMs);
    }

    @Override
    public Future<Void> released(long idFingerprint, long keyFingerprint) {
      return write("released " + idFingerprint + " " + keyFingerprint);
    }

    @Override
    public Future<Void> offsetsCommitted(String topic, int partition, long offset) {
      return write("offsets " + topic + " " + partition + " " + offset);
    }

    @Override
    public Future<Void> close() {
      return Future.succeededFuture();
    }
  }
}
