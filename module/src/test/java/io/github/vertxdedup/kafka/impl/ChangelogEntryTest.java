package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ChangelogEntryTest {

  @Test
  void shouldReadBackAnAcceptedEntryWithKeyAndHash() {
    ChangelogEntry e = ChangelogEntry.accepted("id-é-1", "order-7", "3f2a", 42, 1_700_000_000_000L,
        1_700_000_600_000L);
    ChangelogEntry back = ChangelogEntry.read(e.recordKey(), e.value());
    assertThat(back).isEqualTo(e);
    assertThat(new String(e.recordKey(), StandardCharsets.UTF_8)).isEqualTo("id-é-1");
    assertThat(e.value()).hasSize(30 + "order-7".length() + "3f2a".length());
    assertThat(e.value()[0]).isEqualTo(ChangelogEntry.FORMAT);
  }

  @Test
  void shouldReadBackAnAcceptedEntryWithoutKeyOrHash() {
    ChangelogEntry e = ChangelogEntry.accepted("a", null, null, 0, 5, 10);
    assertThat(ChangelogEntry.read(e.recordKey(), e.value())).isEqualTo(e);
    assertThat(e.value()).hasSize(30);
  }

  @Test
  void shouldReadBackACommitMarkWithoutARecordKey() {
    ChangelogEntry e = ChangelogEntry.commit(100, 250);
    assertThat(e.recordKey()).isNull();
    ChangelogEntry back = ChangelogEntry.read(null, e.value());
    assertThat(back.kind()).isEqualTo(ChangelogEntry.Kind.COMMIT);
    assertThat(back.fromOffset()).isEqualTo(100);
    assertThat(back.toOffset()).isEqualTo(250);
    assertThat(e.value()).hasSize(18);
  }

  @Test
  void shouldRefuseAnUnknownFormatOrKindAndACutValue() {
    byte[] v = ChangelogEntry.accepted("a", "k", "h", 1, 2, 3).value();
    byte[] future = v.clone();
    future[0] = 2;
    assertThatThrownBy(() -> ChangelogEntry.read("a".getBytes(StandardCharsets.UTF_8), future))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("changelog entry format 2 is not known (this build reads 1)");
    byte[] kind = v.clone();
    kind[1] = 9;
    assertThatThrownBy(() -> ChangelogEntry.read("a".getBytes(StandardCharsets.UTF_8), kind))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("changelog entry kind 9 is not known");
    byte[] cut = java.util.Arrays.copyOf(v, 20);
    assertThatThrownBy(() -> ChangelogEntry.read("a".getBytes(StandardCharsets.UTF_8), cut))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("changelog entry cut short: 20 bytes");
    assertThatThrownBy(() -> ChangelogEntry.read(null, v))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has no record key");
  }

  @Test
  void shouldHoldTheEntriesBelowACommitUntilItsTransactionCommitted() {
    ChangelogBuffer b = new ChangelogBuffer();
    b.accepted(ChangelogEntry.accepted("a", null, null, 3, 0, 1));
    b.accepted(ChangelogEntry.accepted("c", null, null, 9, 0, 1));
    b.accepted(ChangelogEntry.accepted("b", null, null, 5, 0, 1));
    // A commit of offset 6, the group's offset being 2: a and b, then the mark [2, 6).
    assertThat(b.below(6, 2)).containsExactly(ChangelogEntry.accepted("a", null, null, 3, 0, 1),
        ChangelogEntry.accepted("b", null, null, 5, 0, 1), ChangelogEntry.commit(2, 6));
    // Not committed yet (failed, or not answered): the next commit holds them again.
    assertThat(b.below(10, 2)).hasSize(4).endsWith(ChangelogEntry.commit(2, 10));
    b.committed(6);
    assertThat(b.size()).isEqualTo(1);
    // No committed offset known: the mark starts at the lowest entry.
    assertThat(b.below(10, -1)).endsWith(ChangelogEntry.commit(9, 10));
  }
}
