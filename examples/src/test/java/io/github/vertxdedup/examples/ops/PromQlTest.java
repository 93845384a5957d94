package io.github.vertxdedup.examples.ops;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The metric names {@link PromQl} reads from expressions, rules files and a scrape. */
class PromQlTest {

  @Test
  void shouldFindTheMetricsOfAnExpressionAndNotItsFunctionsLabelsOrDurations() {
    assertThat(PromQl.metricNames("histogram_quantile(0.99, sum by (le, address) "
        + "(rate(dedup_duplicate_age_seconds_bucket{verdict=\"a b\"}[$__rate_interval]))) "
        + "> on (address, group) 0.5 * dedup_window_seconds unless on () vector(0) or time() - x_total offset 5m"))
        .containsExactly("dedup_duplicate_age_seconds_bucket", "dedup_window_seconds", "x_total");
    assertThat(PromQl.metricNames("increase(a_total[1d]) > 1e3 and b == bool 0"))
        .containsExactly("a_total", "b");
  }

  @Test
  void shouldReadOneLineAndBlockExpressionsOfARulesFile() {
    String yaml = """
        groups:
          - name: g
            rules:
              - alert: One
                expr: 'a_total > 0'
              - alert: Two
                expr: |
                  b_total
                  > c
                for: 5m
        """;
    assertThat(PromQl.ruleExpressions(yaml)).containsExactly("a_total > 0", "b_total\n> c\n");
  }

  @Test
  void shouldReadTheSampleNamesOfAScrape() {
    assertThat(PromQl.sampleNames("# HELP a x\n# TYPE a counter\na_total{x=\"1\"} 2.0\nb 1\n\n"))
        .containsExactly("a_total", "b");
  }
}
