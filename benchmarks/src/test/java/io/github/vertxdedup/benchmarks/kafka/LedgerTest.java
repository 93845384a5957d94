package io.github.vertxdedup.benchmarks.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Credits from several threads add up by id once merged. */
class LedgerTest {

  @Test
  void merged_addsUpTheCreditsOfEveryThreadById() throws InterruptedException {
    Ledger ledger = new Ledger(16);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      int mine = t;
      threads.add(new Thread(() -> {
        ledger.credit("shared");
        ledger.credit("own-" + mine);
        ledger.credit("own-" + mine);
      }));
    }
    for (Thread t : threads) {
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    ledger.credit("main");

    Map<String, Long> all = ledger.merged();

    assertThat(all).containsOnly(Map.entry("shared", 3L), Map.entry("own-0", 2L), Map.entry("own-1", 2L),
        Map.entry("own-2", 2L), Map.entry("main", 1L));
    assertThat(ledger.threads()).isEqualTo(4);
  }

  @Test
  void merged_isEmptyBeforeAnyCredit() {
    assertThat(new Ledger(0).merged()).isEmpty();
  }

  @Test
  void rejectsANegativeCapacity() {
    assertThatThrownBy(() -> new Ledger(-1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity must be >= 0 but was -1");
  }
}
