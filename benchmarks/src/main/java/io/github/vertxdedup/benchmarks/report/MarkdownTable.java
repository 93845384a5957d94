package io.github.vertxdedup.benchmarks.report;

import java.util.ArrayList;
import java.util.List;

/**
 * A Markdown (GitHub) table built column by column and row by row, as the report mains print it: a header row, a
 * rule row ({@code ---} for a left-aligned column, {@code ---:} for a right-aligned one), then one line per row,
 * each cell between {@code "| "} and {@code " |"}. Not thread-safe.
 */
public final class MarkdownTable {

  private final List<String> header = new ArrayList<>();
  private final List<Boolean> rightAligned = new ArrayList<>();
  private final List<List<String>> rows = new ArrayList<>();

  /**
   * Adds a column.
   *
   * @param name its header
   * @param right true to align it right (numbers), false for left (names)
   * @return this
   * @throws IllegalStateException if rows were already added
   */
  public MarkdownTable column(String name, boolean right) {
    if (!rows.isEmpty()) {
      throw new IllegalStateException("columns must be added before the first row");
    }
    header.add(name);
    rightAligned.add(right);
    return this;
  }

  /**
   * Adds a row.
   *
   * @param cells one text per column, in column order
   * @return this
   * @throws IllegalArgumentException if the number of cells is not the number of columns
   */
  public MarkdownTable row(List<String> cells) {
    if (cells.size() != header.size()) {
      throw new IllegalArgumentException("a row needs " + header.size() + " cells but had " + cells.size());
    }
    rows.add(List.copyOf(cells));
    return this;
  }

  /** @return the table, every line ending in a newline */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    line(sb, header);
    sb.append('|');
    for (boolean right : rightAligned) {
      sb.append(right ? "---:|" : "---|");
    }
    sb.append('\n');
    for (List<String> r : rows) {
      line(sb, r);
    }
    return sb.toString();
  }

  private static void line(StringBuilder sb, List<String> cells) {
    sb.append('|');
    for (String c : cells) {
      sb.append(' ').append(c).append(" |");
    }
    sb.append('\n');
  }
}
