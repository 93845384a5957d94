package io.github.vertxdedup.examples.ops;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the PromQL expressions of the operator files ({@code expr} of a Grafana dashboard's targets, {@code expr} of
 * Prometheus rules) and the metric names they query. A small reader for the subset those files use, not a PromQL
 * parser: strings, label matchers ({@code {...}}), ranges ({@code [5m]}) and the label lists of {@code by},
 * {@code without}, {@code on}, {@code ignoring}, {@code group_left} and {@code group_right} are removed; what is left
 * that looks like a name and is not a function (followed by {@code (}), a keyword, a number or a duration is a
 * metric name.
 */
final class PromQl {

  private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'");
  private static final Pattern MATCHERS = Pattern.compile("\\{[^}]*}");
  private static final Pattern RANGE = Pattern.compile("\\[[^]]*]");
  private static final Pattern LABEL_LIST = Pattern.compile(
      "\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
  private static final Pattern NAME = Pattern.compile("[A-Za-z_:][A-Za-z0-9_:]*");
  private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "by", "without", "on",
      "ignoring", "group_left", "group_right", "inf", "nan", "Inf", "NaN");
  /** The dashboard's variables, as {@code $name} or {@code ${name}}: not metrics. */
  private static final Pattern VARIABLE = Pattern.compile("\\$\\{?[A-Za-z_][A-Za-z0-9_]*}?");

  private PromQl() {}

  /**
   * @param expr a PromQL expression
   * @return the metric names it queries, sorted
   */
  static Set<String> metricNames(String expr) {
    String s = STRING.matcher(expr).replaceAll(" ");
    s = VARIABLE.matcher(s).replaceAll(" 1 ");
    s = MATCHERS.matcher(s).replaceAll(" ");
    s = RANGE.matcher(s).replaceAll(" ");
    s = LABEL_LIST.matcher(s).replaceAll(" ");
    Set<String> names = new TreeSet<>();
    Matcher m = NAME.matcher(s);
    while (m.find()) {
      String name = m.group();
      if (m.start() > 0 && Character.isDigit(s.charAt(m.start() - 1))) {
        continue; // the unit of a number such as 5m or 1e3
      }
      int next = m.end();
      while (next < s.length() && Character.isWhitespace(s.charAt(next))) {
        next++;
      }
      if (next < s.length() && s.charAt(next) == '(') {
        continue; // a function or an aggregation
      }
      if (!KEYWORDS.contains(name)) {
        names.add(name);
      }
    }
    return names;
  }

  /**
   * @param dashboard a Grafana dashboard
   * @return the {@code expr} of every target of every panel (rows' panels included)
   */
  static List<String> dashboardExpressions(JsonObject dashboard) {
    List<String> exprs = new ArrayList<>();
    collect(dashboard, exprs);
    return exprs;
  }

  private static void collect(Object node, List<String> exprs) {
    if (node instanceof JsonObject o) {
      for (String key : o.fieldNames()) {
        Object v = o.getValue(key);
        if (key.equals("expr") && v instanceof String s) {
          exprs.add(s);
        } else {
          collect(v, exprs);
        }
      }
    } else if (node instanceof JsonArray a) {
      for (Object v : a) {
        collect(v, exprs);
      }
    }
  }

  /**
   * The {@code expr} of every rule of a Prometheus rules file: {@code expr: <one line>}, or a block scalar
   * ({@code expr: |} or {@code >}) whose lines are indented deeper than the key.
   *
   * @param yaml the rules file
   * @return the expressions
   */
  static List<String> ruleExpressions(String yaml) {
    List<String> exprs = new ArrayList<>();
    String[] lines = yaml.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i];
      String trimmed = line.stripLeading();
      if (!trimmed.startsWith("expr:")) {
        continue;
      }
      String value = trimmed.substring("expr:".length()).strip();
      if (!value.startsWith("|") && !value.startsWith(">")) {
        exprs.add(unquote(value));
        continue;
      }
      int indent = line.length() - trimmed.length();
      StringBuilder block = new StringBuilder();
      while (i + 1 < lines.length && (lines[i + 1].isBlank()
          || lines[i + 1].length() - lines[i + 1].stripLeading().length() > indent)) {
        block.append(lines[++i].strip()).append('\n');
      }
      exprs.add(block.toString());
    }
    return exprs;
  }

  private static String unquote(String v) {
    if (v.length() >= 2 && (v.startsWith("'") && v.endsWith("'") || v.startsWith("\"") && v.endsWith("\""))) {
      return v.substring(1, v.length() - 1);
    }
    return v;
  }

  /**
   * The names of the samples of a Prometheus text exposition ({@code /metrics}): each line's name, before its labels
   * or its value.
   *
   * @param exposition the scraped text
   * @return the sample names
   */
  static Set<String> sampleNames(String exposition) {
    Set<String> names = new TreeSet<>();
    for (String line : exposition.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher m = NAME.matcher(line);
      if (m.lookingAt()) {
        names.add(m.group());
      }
    }
    return names;
  }
}
