package io.github.vertxdedup.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PaymentBookTest {

  @TempDir
  Path tmp;

  @Test
  void keyedBookRefusesASecondLineForAPaymentAcrossReopens() throws Exception {
    Path file = tmp.resolve("ledger.log");
    try (PaymentBook book = PaymentBook.open(file, true)) {
      assertThat(book.append("pay-1", "acct-001", 100)).isTrue();
      assertThat(book.append("pay-1", "acct-001", 100)).isFalse();
      assertThat(book.append("pay-2", "acct-002", 200)).isTrue();
    }
    try (PaymentBook book = PaymentBook.open(file, true)) {
      assertThat(book.size()).isEqualTo(2);
      assertThat(book.append("pay-2", "acct-002", 200)).isFalse();
    }
    assertThat(Files.readString(file)).isEqualTo("pay-1 acct-001 100\npay-2 acct-002 200\n");
  }

  @Test
  void unkeyedBookAppendsEveryLine() throws Exception {
    Path file = tmp.resolve("ledger.log");
    try (PaymentBook book = PaymentBook.open(file, false)) {
      assertThat(book.append("pay-1", "a")).isTrue();
      assertThat(book.append("pay-1", "a")).isTrue();
    }
    assertThat(PaymentBook.readLines(file)).hasSize(2);
  }

  @Test
  void cutsThePartialLineAKilledWriterLeft() throws Exception {
    Path file = tmp.resolve("ledger.log");
    Files.writeString(file, "pay-1 acct-001 100\npay-2 acct-0", StandardCharsets.UTF_8);
    assertThat(PaymentBook.readLines(file)).hasSize(1);
    try (PaymentBook book = PaymentBook.open(file, true)) {
      assertThat(book.size()).isEqualTo(1);
      assertThat(book.append("pay-2", "acct-002", 200)).as("the cut line was never a credit").isTrue();
    }
    assertThat(Files.readString(file)).isEqualTo("pay-1 acct-001 100\npay-2 acct-002 200\n");
  }

  @Test
  void readsAMissingBookAsEmpty() throws Exception {
    assertThat(PaymentBook.readLines(tmp.resolve("none.log"))).isEmpty();
    Files.writeString(tmp.resolve("x.log"), "no newline", StandardOpenOption.CREATE);
    assertThat(PaymentBook.readLines(tmp.resolve("x.log"))).isEmpty();
  }
}
