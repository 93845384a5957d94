package io.github.vertxdedup.examples.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.kafka.DeadLetter;
import io.github.vertxdedup.kafka.testkit.LocalKafkaExtension;
import io.github.vertxdedup.kafka.testkit.LocalPostgres;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The billing ledger in PostgreSQL ({@link InboxExample}) on a real in-process broker and a real PostgreSQL server:
 * each payment credited once, a failed credit rolled back and retried, a conflicting payload dead-lettered.
 */
class InboxExampleTest {

  @RegisterExtension
  static final LocalKafkaExtension kafka = new LocalKafkaExtension(3);
  private static LocalPostgres pg;

  @BeforeAll
  static void startDatabase() {
    pg = LocalPostgres.start();
  }

  @AfterAll
  static void stopDatabase() {
    pg.close();
  }

  @Test
  void shouldCreditEachPaymentOnceRetryAFailedCreditAndDeadLetterAConflict() throws Exception {
    List<DeadLetter<String, String>> deadLetters = new CopyOnWriteArrayList<>();

    RunSummary summary = InboxExample.run(kafka.bootstrapServers(), pg, "inbox-payments", "inbox-ledger",
        deadLetters, 300, 0.3);

    assertThat(summary.exactlyOnce()).as(summary.toString()).isTrue();
    Map<String, Integer> credits = InboxExample.credits(pg);
    assertThat(credits).hasSize(300).allSatisfy((id, n) -> assertThat(n).as(id).isEqualTo(1));
    assertThat(deadLetters).singleElement().satisfies(d -> {
      assertThat(d.reason()).isEqualTo(DeadLetter.Reason.CONFLICT);
      assertThat(d.record().key()).isEqualTo("pay-0");
    });
    long expectedCents = 0;
    for (int i = 0; i < 300; i++) {
      expectedCents += 100 + i % 9_900;     // the amounts Payments.publish sends; the conflict's is not credited
    }
    assertThat(Long.parseLong(pg.psql("SELECT sum(amount_cents) FROM ledger_entries").trim()))
        .isEqualTo(expectedCents);
    // pay-1's first transaction was refused and rolled back (its inbox row too), then retried once.
    assertThat(pg.psql("SELECT last_value FROM pay1_tries").trim()).isEqualTo("2");
    // Every credit has its inbox row, committed with it.
    assertThat(pg.psql("SELECT count(*) FROM payment_inbox").trim()).isEqualTo("300");
  }
}
