package io.github.vertxdedup.benchmarks.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class MarkdownTableTest {

  @Test
  void shouldPrintHeaderRuleAndRowsWithTheirAlignment() {
    MarkdownTable t = new MarkdownTable().column("name", false).column("rate", true)
        .row(List.of("a", "1")).row(List.of("b", "n/a"));

    assertThat(t.toString()).isEqualTo("| name | rate |\n|---|---:|\n| a | 1 |\n| b | n/a |\n");
  }

  @Test
  void shouldRefuseARowOfTheWrongWidthAndAColumnAfterARow() {
    MarkdownTable t = new MarkdownTable().column("name", false).column("rate", true);

    assertThatThrownBy(() -> t.row(List.of("a"))).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a row needs 2 cells but had 1");
    t.row(List.of("a", "1"));
    assertThatThrownBy(() -> t.column("late", true)).isInstanceOf(IllegalStateException.class)
        .hasMessage("columns must be added before the first row");
  }
}
