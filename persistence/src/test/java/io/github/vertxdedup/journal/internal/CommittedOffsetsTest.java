package io.github.vertxdedup.journal.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.journal.ClaimEntry;
import io.github.vertxdedup.journal.OffsetCommit;
import io.github.vertxdedup.journal.RollSnapshotWriter;
import io.github.vertxdedup.journal.SourcePartition;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CommittedOffsetsTest {

  private final CommittedOffsets offsets = new CommittedOffsets();

  @Test
  void shouldKeepTheHighestOffsetEvenWhenALowerOneComesLater() {
    assertThat(offsets.record("orders", 0, 10)).isTrue();
    assertThat(offsets.record("orders", 0, 7)).isFalse();
    assertThat(offsets.record("orders", 0, 10)).isFalse();
    assertThat(offsets.record("orders", 0, 12)).isTrue();
    assertThat(offsets.get("orders", 0)).isEqualTo(12);
  }

  @Test
  void shouldKeepTopicPartitionsApart() {
    offsets.record("orders", 0, 5);
    offsets.record("orders", 1, 3);
    offsets.record(new OffsetCommit("payments", 0, 9));
    assertThat(offsets.get("orders", 1)).isEqualTo(3);
    assertThat(offsets.get("payments", 1)).isEqualTo(-1);
    assertThat(offsets.size()).isEqualTo(3);
    assertThat(offsets.toList()).containsExactly(new OffsetCommit("orders", 0, 5), new OffsetCommit("orders", 1, 3),
        new OffsetCommit("payments", 0, 9));
  }

  @Test
  void shouldWriteEveryOffsetIntoARollSnapshot() {
    offsets.record("orders", 0, 5);
    offsets.record("orders", 1, 3);
    List<String> written = new ArrayList<>();
    offsets.writeTo(new RollSnapshotWriter() {
      @Override
      public void claim(ClaimEntry claim) {
        written.add("claim");
      }

      @Override
      public void offsetCommit(String topic, int partition, long offset) {
        written.add(topic + "-" + partition + "=" + offset);
      }
    });
    assertThat(written).containsExactlyInAnyOrder("orders-0=5", "orders-1=3");
  }

  @Test
  void shouldRejectInvalidComponentsWithTheirNameAndLimit() {
    assertThatThrownBy(() -> offsets.record("orders", 0, -1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("offset must be >= 0 but was -1");
    assertThatThrownBy(() -> offsets.record("", 0, 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("topic must not be empty");
    assertThatThrownBy(() -> offsets.record("t".repeat(256), 0, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("topic must be <= 255 bytes in UTF-8 but was 256");
    assertThatThrownBy(() -> new SourcePartition("t", -2))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("partition must be >= 0 but was -2");
  }
}
