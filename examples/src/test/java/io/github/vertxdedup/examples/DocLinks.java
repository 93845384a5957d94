package io.github.vertxdedup.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds relative links in Markdown files that point nowhere: a missing file, or a {@code #fragment} that is not the
 * anchor of a heading in the target. Anchors follow GitHub's rule: the heading text in lower case, with everything but
 * letters, digits, spaces, hyphens and underscores removed, spaces turned into hyphens, and {@code -1}, {@code -2}
 * appended to repeats. Links inside fenced code blocks and inline code are ignored; absolute URLs are not checked.
 */
final class DocLinks {

  private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.+?)\\s*#*\\s*$");
  private static final Pattern INLINE_CODE = Pattern.compile("`[^`]*`");

  private DocLinks() {}

  /**
   * @param markdown the Markdown text
   * @return the anchors of its headings, in GitHub's form
   */
  static Set<String> anchors(String markdown) {
    Set<String> anchors = new HashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    for (String line : prose(markdown)) {
      Matcher m = HEADING.matcher(line);
      if (m.matches()) {
        String slug = m.group(1).toLowerCase(java.util.Locale.ROOT)
            .replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
        int n = seen.merge(slug, 1, Integer::sum);
        anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
      }
    }
    return anchors;
  }

  /**
   * @param file the Markdown file (links are resolved against its directory)
   * @param markdown its text
   * @return one message per broken link, naming the line and the link
   */
  static List<String> broken(Path file, String markdown) {
    List<String> problems = new ArrayList<>();
    List<String> lines = prose(markdown);
    for (int i = 0; i < lines.size(); i++) {
      Matcher m = LINK.matcher(INLINE_CODE.matcher(lines.get(i)).replaceAll(""));
      while (m.find()) {
        String target = m.group(1);
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
          continue;   // http:, https:, mailto:
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String fragment = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
        String where = file.getFileName() + ":" + (i + 1) + " (" + target + "): ";
        if (!path.isEmpty() && !Files.exists(resolved)) {
          problems.add(where + "no such file " + resolved);
        } else if (fragment != null && resolved.toString().endsWith(".md")
            && !anchors(path.isEmpty() ? markdown : read(resolved)).contains(fragment)) {
          problems.add(where + "no heading with the anchor #" + fragment + " in " + resolved.getFileName());
        }
      }
    }
    return problems;
  }

  /** The lines of a Markdown text, with the lines of fenced code blocks blanked (so line numbers stay right). */
  private static List<String> prose(String markdown) {
    List<String> out = new ArrayList<>();
    boolean fenced = false;
    for (String line : markdown.split("\n", -1)) {
      if (line.stripLeading().startsWith("```")) {
        fenced = !fenced;
        out.add("");
      } else {
        out.add(fenced ? "" : line);
      }
    }
    return out;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
