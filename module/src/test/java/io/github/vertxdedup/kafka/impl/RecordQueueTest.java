package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.kafka.RecordIdentity;
import io.vertx.kafka.client.consumer.impl.KafkaConsumerRecordImpl;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/** The queue of a partition's records: the runs it decides, and what a fenced owner still has to finish. */
class RecordQueueTest {

  private static final boolean EFFECT_FIRST = true;
  private static final boolean RECORD_FIRST = false;

  private static long nextOffset;

  /** @return a record at the next offset with this identity (null: none) */
  private static PendingRecord<String, String> record(RecordIdentity identity) {
    PendingRecord<String, String> r = new PendingRecord<>(
        new KafkaConsumerRecordImpl<>(new ConsumerRecord<>("t", 0, nextOffset++, "k", "v")));
    r.identity = identity;
    return r;
  }

  private static PendingRecord<String, String> record(String id) {
    return record(RecordIdentity.of(id));
  }

  private static RecordQueue<String, String> queue(boolean effectFirst, int maxBatch,
      List<PendingRecord<String, String>> records) {
    RecordQueue<String, String> q = new RecordQueue<>(effectFirst, maxBatch);
    records.forEach(q::add);
    return q;
  }

  /** @return a record at the next offset, checked and accepted (record-first: its id recorded) */
  private static PendingRecord<String, String> accepted(String id) {
    PendingRecord<String, String> r = record(id);
    r.decision = verdict(DedupVerdict.ACCEPTED);
    return r;
  }

  private static DedupResult verdict(DedupVerdict verdict) {
    return DedupResult.of(verdict, 0);
  }

  private static DedupResult claim(String token) {
    return new DedupResult(DedupVerdict.ACCEPTED, 0, token, DedupResult.NO_TIME, DedupResult.NO_TIME,
        DedupResult.NO_TIME, false);
  }

  @Test
  void nextRun_takesUndecidedRecordsFromTheHeadUpToMaxBatch() {
    List<PendingRecord<String, String>> rs = List.of(record("a"), record("b"), record("c"), record("d"));
    RecordQueue<String, String> q = queue(RECORD_FIRST, 3, rs);

    assertThat(q.nextRun()).containsExactly(rs.get(0), rs.get(1), rs.get(2));
  }

  @Test
  void nextRun_stopsAtADecidedRecordAndAtOneWithoutIdentity() {
    PendingRecord<String, String> decided = record("b");
    decided.decision = verdict(DedupVerdict.DUPLICATE);
    PendingRecord<String, String> a = record("a");
    assertThat(queue(RECORD_FIRST, 10, List.of(a, decided, record("c"))).nextRun()).containsExactly(a);

    PendingRecord<String, String> x = record("x");
    assertThat(queue(RECORD_FIRST, 10, List.of(x, record((RecordIdentity) null), record("y"))).nextRun())
        .containsExactly(x);
  }

  @Test
  void nextRun_effectFirstStopsBeforeARepeatedIdOrKey() {
    PendingRecord<String, String> a = record("a");
    PendingRecord<String, String> b = record("b");
    assertThat(queue(EFFECT_FIRST, 10, List.of(a, b, record("a"), record("c"))).nextRun()).containsExactly(a, b);

    PendingRecord<String, String> keyed = record(new RecordIdentity("x", "order-1", null));
    PendingRecord<String, String> other = record(new RecordIdentity("y", "order-2", null));
    PendingRecord<String, String> sameKey = record(new RecordIdentity("z", "order-1", null));
    assertThat(queue(EFFECT_FIRST, 10, List.of(keyed, other, sameKey)).nextRun()).containsExactly(keyed, other);
  }

  @Test
  void nextRun_recordFirstKeepsARepeatInTheRun() {
    List<PendingRecord<String, String>> rs = List.of(record("a"), record("a"), record("b"));

    assertThat(queue(RECORD_FIRST, 10, rs).nextRun()).containsExactlyElementsOf(rs);
  }

  @Test
  void decideSingly_makesThatManyRunsOfOneRecordThenFullRunsAgain() {
    List<PendingRecord<String, String>> rs = List.of(record("a"), record("b"), record("c"), record("d"));
    RecordQueue<String, String> q = queue(RECORD_FIRST, 10, rs);

    q.decideSingly(2);

    assertThat(q.nextRun()).containsExactly(rs.get(0));
    assertThat(q.nextRun()).containsExactly(rs.get(0));
    assertThat(q.nextRun()).containsExactlyElementsOf(rs);
  }

  @Test
  void runAhead_takesTheUndecidedRecordsAfterTheDecidedOnesUpToMaxBatch() {
    PendingRecord<String, String> head = accepted("a");
    PendingRecord<String, String> duplicate = record("b");
    duplicate.decision = verdict(DedupVerdict.DUPLICATE);
    PendingRecord<String, String> c = record("c");
    PendingRecord<String, String> d = record("d");
    RecordQueue<String, String> q = queue(RECORD_FIRST, 2, List.of(head, duplicate, c, d, record("e")));

    assertThat(q.runAhead(-1)).containsExactly(c, d);
  }

  @Test
  void runAhead_checksNothingBehindAnUndecidedRecordWithoutIdentity() {
    PendingRecord<String, String> head = accepted("a");
    RecordQueue<String, String> q = queue(RECORD_FIRST, 10, List.of(head, record((RecordIdentity) null), record("c")));

    assertThat(q.runAhead(-1)).as("the record without identity is dead-lettered at the head first").isEmpty();
  }

  @Test
  void runAhead_stopsAtADecidedRecordAndAtOneWithoutIdentity() {
    PendingRecord<String, String> head = accepted("a");
    PendingRecord<String, String> b = record("b");
    PendingRecord<String, String> checked = accepted("c");
    assertThat(queue(RECORD_FIRST, 10, List.of(head, b, checked, record("d"))).runAhead(-1)).containsExactly(b);

    PendingRecord<String, String> x = record("x");
    assertThat(queue(RECORD_FIRST, 10, List.of(head, x, record((RecordIdentity) null), record("y"))).runAhead(-1))
        .containsExactly(x);
  }

  @Test
  void runAhead_leavesARecordAtOrBeforeNotBeforeToTheHead() {
    PendingRecord<String, String> head = accepted("a");
    PendingRecord<String, String> refused = record("b");
    PendingRecord<String, String> after = record("c");
    RecordQueue<String, String> q = queue(RECORD_FIRST, 10, List.of(head, refused, after));

    assertThat(q.runAhead(refused.offset())).isEmpty();
    assertThat(q.runAhead(refused.offset() - 1)).containsExactly(refused, after);
  }

  @Test
  void runAhead_isEmptyInEffectFirstModeWhileDecidingSinglyAndWithNothingUndecided() {
    PendingRecord<String, String> head = accepted("a");
    PendingRecord<String, String> b = record("b");
    assertThat(queue(EFFECT_FIRST, 10, List.of(head, b)).runAhead(-1)).isEmpty();
    assertThat(queue(RECORD_FIRST, 10, List.of(head)).runAhead(-1)).isEmpty();

    RecordQueue<String, String> singly = queue(RECORD_FIRST, 10, List.of(head, b));
    singly.decideSingly(1);
    assertThat(singly.runAhead(-1)).isEmpty();
  }

  @Test
  void checkedBehindHead_recordFirstSeesAnAcceptedRecordBehindAnUndecidedHead() {
    PendingRecord<String, String> refused = record("a");
    PendingRecord<String, String> checked = record("b");
    checked.decision = verdict(DedupVerdict.ACCEPTED);

    assertThat(queue(RECORD_FIRST, 10, List.of(refused, checked)).checkedBehindHead()).isTrue();
    assertThat(queue(RECORD_FIRST, 10, List.of(record("c"), record("d"))).checkedBehindHead()).isFalse();
    assertThat(queue(EFFECT_FIRST, 10, List.of(refused, checked)).checkedBehindHead())
        .as("an effect-first claim not started is released by the fence, not finished").isFalse();
  }

  @Test
  void nothingDecided_holdsForAnEmptyQueueAnUndecidedHeadOrAHeadWaitingForAnotherDeliverysLease() {
    assertThat(queue(RECORD_FIRST, 10, List.of()).nothingDecided()).isTrue();
    assertThat(queue(RECORD_FIRST, 10, List.of(record("a"))).nothingDecided()).isTrue();

    PendingRecord<String, String> waiting = record("b");
    waiting.decision = verdict(DedupVerdict.IN_FLIGHT);
    assertThat(queue(RECORD_FIRST, 10, List.of(waiting)).nothingDecided()).isTrue();

    PendingRecord<String, String> accepted = record("c");
    accepted.decision = verdict(DedupVerdict.ACCEPTED);
    assertThat(queue(RECORD_FIRST, 10, List.of(accepted)).nothingDecided()).isFalse();
    assertThat(queue(RECORD_FIRST, 10, List.of(record("d"), accepted)).nothingDecided())
        .as("checked behind an undecided head").isFalse();
  }

  @Test
  void unstartedClaims_areTheAcceptedClaimsButTheOneLeftOut() {
    PendingRecord<String, String> running = record("a");
    running.decision = claim("t-a");
    PendingRecord<String, String> duplicate = record("b");
    duplicate.decision = verdict(DedupVerdict.DUPLICATE);
    PendingRecord<String, String> claimed = record("c");
    claimed.decision = claim("t-c");
    PendingRecord<String, String> undecided = record("d");
    RecordQueue<String, String> q = queue(EFFECT_FIRST, 10, List.of(running, duplicate, claimed, undecided));

    assertThat(q.unstartedClaims(running)).containsExactly(claimed);
    assertThat(q.unstartedClaims(null)).containsExactly(running, claimed);
  }

  @Test
  void removeHead_leavesTheNextRecordAtTheHead() {
    PendingRecord<String, String> a = record("a");
    PendingRecord<String, String> b = record("b");
    RecordQueue<String, String> q = queue(RECORD_FIRST, 10, List.of(a, b));

    q.removeHead();

    assertThat(q.head()).isSameAs(b);
    q.removeHead();
    assertThat(q.head()).isNull();
  }
}
