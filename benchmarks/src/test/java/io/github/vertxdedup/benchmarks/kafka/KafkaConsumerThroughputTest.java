package io.github.vertxdedup.benchmarks.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The harness rotates its scenario order from round to round. */
class KafkaConsumerThroughputTest {

  private static final List<String> ALL = List.of(KafkaResults.PLAIN, KafkaResults.RECORD_FIRST,
      KafkaResults.EFFECT_FIRST, KafkaResults.STREAMS);

  @Test
  void orderOf_startsEachRoundOneScenarioLaterAndWrapsAround() {
    assertThat(KafkaConsumerThroughput.orderOf(ALL, 1)).isEqualTo(ALL);
    assertThat(KafkaConsumerThroughput.orderOf(ALL, 2)).containsExactly(KafkaResults.RECORD_FIRST,
        KafkaResults.EFFECT_FIRST, KafkaResults.STREAMS, KafkaResults.PLAIN);
    assertThat(KafkaConsumerThroughput.orderOf(ALL, 4)).containsExactly(KafkaResults.STREAMS, KafkaResults.PLAIN,
        KafkaResults.RECORD_FIRST, KafkaResults.EFFECT_FIRST);
    assertThat(KafkaConsumerThroughput.orderOf(ALL, 5)).isEqualTo(ALL);
  }

  @Test
  void orderOf_putsEveryScenarioAtEveryPositionOnceInNRounds() {
    for (String s : ALL) {
      List<Integer> positions = new ArrayList<>();
      for (int round = 1; round <= ALL.size(); round++) {
        positions.add(KafkaConsumerThroughput.orderOf(ALL, round).indexOf(s));
      }
      assertThat(positions).as("positions of %s in rounds 1..%d", s, ALL.size())
          .containsExactlyInAnyOrder(0, 1, 2, 3);
    }
  }

  @Test
  void intProperty_readsAnIntegerOrTheDefaultAndNamesAMalformedProperty() {
    String name = "bench.test.intProperty";
    try {
      System.clearProperty(name);
      assertThat(KafkaConsumerThroughput.intProperty(name, 5)).isEqualTo(5);
      System.setProperty(name, " 7 ");
      assertThat(KafkaConsumerThroughput.intProperty(name, 5)).isEqualTo(7);
      System.setProperty(name, "abc");
      assertThatThrownBy(() -> KafkaConsumerThroughput.intProperty(name, 5))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("bench.test.intProperty must be an integer but was 'abc'");
    } finally {
      System.clearProperty(name);
    }
  }

  @Test
  void orderOf_rejectsARoundBeforeTheFirst() {
    assertThatThrownBy(() -> KafkaConsumerThroughput.orderOf(ALL, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("round must be >= 1 but was 0");
  }
}
