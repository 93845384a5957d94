package io.github.vertxdedup.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.examples.demo.DemoReport.Published;
import io.github.vertxdedup.examples.demo.DemoReport.RunTimes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The report's counting on hand-made files: one partition, payments a..d, a and c published twice (producer
 * retries); run 1 is killed after handling offsets 0 and 2; run 2 resumes at offset 2, handles b again (in flight at
 * the kill: the ledger key refuses it), c and d, and drops the retry of c.
 */
class DemoReportTest {

  @TempDir
  Path dir;

  private final Payment a = new Payment("pay-a", "acct-001", 100);
  private final Payment b = new Payment("pay-b", "acct-002", 200);
  private final Payment c = new Payment("pay-c", "acct-003", 300);
  private final Payment d = new Payment("pay-d", "acct-004", 400);
  private List<Published> published;
  private List<RunTimes> runs;

  @BeforeEach
  void files() throws Exception {
    published = List.of(new Published(0, 0, a, false), new Published(0, 1, a, true), new Published(0, 2, b, false),
        new Published(0, 3, c, false), new Published(0, 4, c, true), new Published(0, 5, d, false));
    runs = List.of(new RunTimes(1, 1_000, 1_500, 2_000, 2_100, 5_000, 0),
        new RunTimes(2, 5_400, 6_000, 6_800, 7_000, -1, 0));
    Files.writeString(dir.resolve("deliveries-1.log"), "0 0 pay-a\n0 1 pay-a\n0 2 pay-b\n0 3 pay-c\n0 4 pay-c\n"
        + "0 5 pay-d\n");
    Files.writeString(dir.resolve("deliveries-2.log"), "0 2 pay-b\n0 3 pay-c\n0 4 pay-c\n0 5 pay-d\n");
    Files.writeString(dir.resolve("handled.log"), "pay-a 1 0 0\npay-b 1 0 2\npay-b 2 0 2\npay-c 2 0 3\n"
        + "pay-d 2 0 5\n");
    Files.writeString(dir.resolve("ledger.log"), "pay-a acct-001 100 0 0 1\npay-b acct-002 200 0 2 1\n"
        + "pay-c acct-003 300 0 3 2\npay-d acct-004 400 0 5 2\n");
    Files.writeString(dir.resolve("receipts.log"), "pay-a acct-001 100 0 0 1\npay-b acct-002 200 0 2 1\n"
        + "pay-c acct-003 300 0 3 2\npay-d acct-004 400 0 5 2\n");
  }

  @Test
  void classifiesEveryDeliveryAndFindsNoMismatch() throws Exception {
    DemoReport r = DemoReport.compute(published, dir, runs);

    assertThat(r.payments).isEqualTo(4);
    assertThat(r.records).isEqualTo(6);
    assertThat(r.retries).isEqualTo(2);
    assertThat(r.kills).isEqualTo(1);
    assertThat(r.deliveries).isEqualTo(10);
    assertThat(r.redeliveries).isEqualTo(4);
    assertThat(r.handlerCalls).isEqualTo(5);
    // run 1: offset 1 (retry of a, before the handled offset 2) dropped; 3, 4, 5 cut off by the kill.
    // run 2: offset 4 (the retry of c, received by run 1 too) dropped as a redelivery.
    assertThat(r.dropped).isEqualTo(2);
    assertThat(r.droppedRetry).isEqualTo(1);
    assertThat(r.droppedRedelivery).isEqualTo(1);
    assertThat(r.droppedFirstCopy).isZero();
    assertThat(r.cutOff).isEqualTo(3);
    assertThat(r.handlerCalls + r.dropped + r.cutOff).isEqualTo(r.deliveries);
    assertThat(r.ledgerRefusals).isEqualTo(1);
    assertThat(r.receiptRefusals).isEqualTo(1);
    assertThat(r.effectCutOff).isZero();
    assertThat(r.ledgerEntries).isEqualTo(4);
    assertThat(r.ledgerEntries + r.ledgerRefusals + r.effectCutOff).isEqualTo(r.handlerCalls);
    assertThat(r.ledgerCents).isEqualTo(r.publishedCents).isEqualTo(1_000);
    assertThat(r.mismatches()).isZero();
    assertThat(r.restartToFirstAnswerMs).containsExactly(2_000L);
  }

  @Test
  void countsAMissingADoubleAWrongAndAnUnknownCredit() throws Exception {
    Files.writeString(dir.resolve("ledger.log"), "pay-a acct-001 100 0 0 1\npay-b acct-002 200 0 2 1\n"
        + "pay-b acct-002 200 0 2 2\npay-c acct-003 301 0 3 2\npay-x acct-009 900 0 9 2\n");
    Files.writeString(dir.resolve("receipts.log"), "pay-a acct-001 100 0 0 1\npay-a acct-001 100 0 1 1\n"
        + "pay-b acct-002 200 0 2 1\npay-c acct-003 300 0 3 2\n");
    DemoReport r = DemoReport.compute(published, dir, runs);

    assertThat(r.missing).as("d").isEqualTo(1);
    assertThat(r.creditedTwice).as("b").isEqualTo(1);
    assertThat(r.wrongAmount).as("c").isEqualTo(1);
    assertThat(r.unknownCredits).as("x").isEqualTo(1);
    assertThat(r.receiptsMissing).as("d").isEqualTo(1);
    assertThat(r.receiptsTwice).as("a").isEqualTo(1);
    assertThat(r.mismatches()).as("payments a, b, c, d wrong, x unknown").isEqualTo(5);
  }

  @Test
  void countsACallTheKillCutOffBetweenItsNoteAndItsCredit() throws Exception {
    // Run 1 noted its call for b (offset 2) and was killed before the credit: no ledger line, no receipt for it.
    // Run 2 handles b again and credits it.
    Files.writeString(dir.resolve("ledger.log"), "pay-a acct-001 100 0 0 1\npay-b acct-002 200 0 2 2\n"
        + "pay-c acct-003 300 0 3 2\npay-d acct-004 400 0 5 2\n");
    Files.writeString(dir.resolve("receipts.log"), "pay-a acct-001 100 0 0 1\npay-b acct-002 200 0 2 2\n"
        + "pay-c acct-003 300 0 3 2\npay-d acct-004 400 0 5 2\n");
    DemoReport r = DemoReport.compute(published, dir, runs);

    assertThat(r.handlerCalls).isEqualTo(5);
    assertThat(r.effectCutOff).isEqualTo(1);
    assertThat(r.receiptCutOff).isEqualTo(1);
    assertThat(r.ledgerRefusals).isZero();
    assertThat(r.receiptRefusals).isZero();
    assertThat(r.ledgerEntries + r.ledgerRefusals + r.effectCutOff).isEqualTo(r.handlerCalls);
    assertThat(r.receipts + r.receiptRefusals + r.receiptCutOff).isEqualTo(r.handlerCalls);
    assertThat(r.mismatches()).isZero();
  }

  @Test
  void countsACallTheKillCutOffBetweenItsCreditAndItsReceipt() throws Exception {
    // Run 1 credited b and was killed before the receipt; run 2's call for b is refused by the ledger, sends it.
    Files.writeString(dir.resolve("receipts.log"), "pay-a acct-001 100 0 0 1\npay-b acct-002 200 0 2 2\n"
        + "pay-c acct-003 300 0 3 2\npay-d acct-004 400 0 5 2\n");
    DemoReport r = DemoReport.compute(published, dir, runs);

    assertThat(r.effectCutOff).isZero();
    assertThat(r.ledgerRefusals).isEqualTo(1);
    assertThat(r.receiptCutOff).isEqualTo(1);
    assertThat(r.receiptRefusals).isZero();
    assertThat(r.ledgerEntries + r.ledgerRefusals + r.effectCutOff).isEqualTo(r.handlerCalls);
    assertThat(r.receipts + r.receiptRefusals + r.receiptCutOff).isEqualTo(r.handlerCalls);
    assertThat(r.mismatches()).isZero();
  }
}
