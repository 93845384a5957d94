package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What a rebuild from the changelog takes as covered, and what it leaves to the source topic. */
class ChangelogRebuildTest {

  private static long[] marks(long[]... marks) {
    long[] chain = {-1, -1};
    for (long[] m : marks) {
      chain = ChangelogRebuild.chain(chain[0], chain[1], m[0], m[1]);
    }
    return chain;
  }

  @Test
  void shouldChainMarksThatStartAtOrBeforeTheEndAndRestartAfterAGap() {
    assertThat(marks(new long[] {0, 100}, new long[] {100, 180}, new long[] {180, 200})).containsExactly(0, 200);
    // A rewound owner's mark starts inside the chain: it stays whole.
    assertThat(marks(new long[] {0, 200}, new long[] {50, 120})).containsExactly(0, 200);
    // Offsets 200..260 were committed without the changelog: only the chain after the gap counts.
    assertThat(marks(new long[] {0, 200}, new long[] {260, 300})).containsExactly(260, 300);
  }

  @Test
  void shouldLeaveToTheSourceTopicWhatTheChainDoesNotCover() {
    // No mark: the whole rebuild reads the source topic.
    assertThat(ChangelogRebuild.sourceRanges(-1, 300, -1, -1)).containsExactly(new long[] {-1, 300});
    // The chain covers 0..300 and the committed offset was rewound to 50: nothing needed from the source topic.
    List<long[]> rewound = ChangelogRebuild.sourceRanges(-1, 50, 0, 300);
    assertThat(rewound).allSatisfy(r -> assertThat(RebuildRule.needed(r[0], r[1])).isFalse());
    // Switched on at 120, committed up to 300, and 300..340 committed since without it: before and after the chain.
    List<long[]> both = ChangelogRebuild.sourceRanges(-1, 340, 120, 300);
    assertThat(both).containsExactly(new long[] {-1, 120}, new long[] {300, 340});
    // A journal that covers up to 200 leaves only the tail after the chain.
    List<long[]> journal = ChangelogRebuild.sourceRanges(200, 340, 120, 300);
    assertThat(RebuildRule.needed(journal.get(0)[0], journal.get(0)[1])).isFalse();
    assertThat(journal.get(1)).containsExactly(300, 340);
  }
}
