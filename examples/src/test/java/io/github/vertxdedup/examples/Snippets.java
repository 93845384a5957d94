package io.github.vertxdedup.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps the code in the Markdown docs equal to tagged regions of compiled example sources, the way AsciiDoc's
 * {@code include::file[tag=name]} does for vertx-kafka-client's docs.
 *
 * <p>In a source, a region is the lines between {@code // tag::name[]} and {@code // end::name[]} (tag lines of other
 * regions inside it are left out, and the indentation the lines share is removed). In a Markdown file, a line
 * {@code <!-- snippet: path/from/repo/root.java#name -->} must be followed by a fenced code block holding exactly that
 * region (trailing spaces ignored). A marker without {@code #name} ({@code <!-- snippet: path/from/repo/root.json -->})
 * stands for the whole file, for sources that have no comments to hold tags (a JSON configuration).
 */
final class Snippets {

  /** A marker line in a Markdown file. */
  static final Pattern MARKER = Pattern.compile("^<!-- snippet: (\\S+?)(?:#([A-Za-z0-9_.-]+))? -->\\s*$");
  private static final Pattern TAG = Pattern.compile("^\\s*// (tag|end)::([A-Za-z0-9_.-]+)\\[]\\s*$");
  private static final Pattern FENCE = Pattern.compile("^```[A-Za-z]*\\s*$");

  private Snippets() {}

  /**
   * @param source a source file's text
   * @return its regions by tag, in order of their start
   * @throws IllegalArgumentException if a tag is opened twice, closed without being opened, or never closed
   */
  static Map<String, String> regions(String source) {
    Map<String, List<String>> open = new LinkedHashMap<>();
    Map<String, String> done = new LinkedHashMap<>();
    String[] lines = source.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      Matcher m = TAG.matcher(lines[i]);
      if (m.matches()) {
        String tag = m.group(2);
        if (m.group(1).equals("tag")) {
          if (open.containsKey(tag) || done.containsKey(tag)) {
            throw new IllegalArgumentException("tag '" + tag + "' opened twice (line " + (i + 1) + ")");
          }
          open.put(tag, new ArrayList<>());
        } else {
          List<String> body = open.remove(tag);
          if (body == null) {
            throw new IllegalArgumentException("end of tag '" + tag + "' without its start (line " + (i + 1) + ")");
          }
          done.put(tag, dedent(body));
        }
        continue;
      }
      for (List<String> body : open.values()) {
        body.add(lines[i]);
      }
    }
    if (!open.isEmpty()) {
      throw new IllegalArgumentException("tags never closed: " + open.keySet());
    }
    return done;
  }

  /** A marker whose block is missing or differs, or whose file or tag is missing. */
  record Problem(String markdown, int line, String reference, String message) {
    @Override
    public String toString() {
      return markdown + ":" + line + " (" + reference + "): " + message;
    }
  }

  /** The result of scanning one Markdown text: its markers, its problems, and the text with every block rewritten. */
  record Scan(int markers, List<Problem> problems, String updated) {}

  /**
   * Checks every marker of a Markdown text against the sources under {@code root}.
   *
   * @param root the repository root, against which marker paths are resolved
   * @param name the Markdown file's name, for messages
   * @param markdown its text
   * @return the markers found, the problems, and the text with each block that has a region replaced by it
   */
  static Scan scan(Path root, String name, String markdown) {
    String[] lines = markdown.split("\n", -1);
    List<String> out = new ArrayList<>();
    List<Problem> problems = new ArrayList<>();
    int markers = 0;
    int i = 0;
    while (i < lines.length) {
      out.add(lines[i]);
      Matcher m = MARKER.matcher(lines[i]);
      if (!m.matches()) {
        i++;
        continue;
      }
      markers++;
      int markerLine = i + 1;
      String reference = m.group(2) == null ? m.group(1) : m.group(1) + "#" + m.group(2);
      i++;
      if (i >= lines.length || !FENCE.matcher(lines[i]).matches()) {
        problems.add(new Problem(name, markerLine, reference, "no fenced code block right below the marker"));
        continue;
      }
      String fence = lines[i];
      int end = i + 1;
      while (end < lines.length && !lines[end].stripTrailing().equals("```")) {
        end++;
      }
      if (end >= lines.length) {
        problems.add(new Problem(name, markerLine, reference, "code block never closed"));
        continue;
      }
      String block = String.join("\n", stripTrailing(List.of(lines).subList(i + 1, end)));
      String region = region(root, m.group(1), m.group(2), problems, name, markerLine, reference);
      out.add(fence);
      if (region == null) {
        out.addAll(List.of(lines).subList(i + 1, end));
      } else {
        if (!region.equals(block)) {
          problems.add(new Problem(name, markerLine, reference,
              "the block differs from the tagged region; expected:\n" + region + "\nbut the doc has:\n" + block));
        }
        out.addAll(List.of(region.split("\n", -1)));
      }
      out.add(lines[end]);
      i = end + 1;
    }
    return new Scan(markers, problems, String.join("\n", out));
  }

  private static String region(Path root, String file, String tag, List<Problem> problems, String name, int line,
      String reference) {
    Path source = root.resolve(file).normalize();
    if (!source.startsWith(root) || !Files.isRegularFile(source)) {
      problems.add(new Problem(name, line, reference, "no such file: " + file));
      return null;
    }
    Map<String, String> regions;
    try {
      String text = Files.readString(source, StandardCharsets.UTF_8);
      if (tag == null) {
        return wholeFile(text);
      }
      regions = regions(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (IllegalArgumentException e) {
      problems.add(new Problem(name, line, reference, file + ": " + e.getMessage()));
      return null;
    }
    String region = regions.get(tag);
    if (region == null) {
      problems.add(new Problem(name, line, reference, "no tag '" + tag + "' in " + file + "; tags: "
          + regions.keySet()));
    }
    return region;
  }

  /** A whole file as a block holds it: without trailing spaces and without the blank lines at its end. */
  private static String wholeFile(String text) {
    List<String> lines = stripTrailing(List.of(text.split("\n", -1)));
    int end = lines.size();
    while (end > 0 && lines.get(end - 1).isEmpty()) {
      end--;
    }
    return String.join("\n", lines.subList(0, end));
  }

  private static String dedent(List<String> body) {
    List<String> lines = stripTrailing(body);
    int indent = Integer.MAX_VALUE;
    for (String l : lines) {
      if (!l.isBlank()) {
        indent = Math.min(indent, l.length() - l.stripLeading().length());
      }
    }
    List<String> out = new ArrayList<>();
    for (String l : lines) {
      out.add(l.isBlank() ? "" : l.substring(indent));
    }
    return String.join("\n", out);
  }

  private static List<String> stripTrailing(List<String> lines) {
    List<String> out = new ArrayList<>();
    for (String l : lines) {
      out.add(l.stripTrailing());
    }
    return out;
  }
}
