package io.github.vertxdedup.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The docs cannot drift from the compiled examples: every {@code <!-- snippet: file#tag -->} marker in
 * {@code README.md} and {@code docs/*.md} must be followed by a code block equal to that tagged region.
 *
 * <p>After changing an example, rewrite the blocks from the sources with
 * {@code mvn -B -ntp -pl examples -am verify -Dtest=DocSnippetsTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dsnippets.update=true}, then review the diff.
 */
class DocSnippetsTest {

  private static final String FILE = "examples/src/main/java/Example.java";

  @TempDir
  Path repo;

  @Test
  void docsShouldHoldExactlyTheTaggedRegionsOfTheExamples() throws IOException {
    Path root = repositoryRoot();
    boolean update = Boolean.getBoolean("snippets.update");
    int markers = 0;
    List<Snippets.Problem> problems = new ArrayList<>();
    for (Path md : markdown(root)) {
      String text = Files.readString(md, StandardCharsets.UTF_8);
      Snippets.Scan scan = Snippets.scan(root, root.relativize(md).toString(), text);
      if (update && !scan.updated().equals(text)) {
        Files.writeString(md, scan.updated(), StandardCharsets.UTF_8);
        scan = Snippets.scan(root, root.relativize(md).toString(), scan.updated());
      }
      markers += scan.markers();
      problems.addAll(scan.problems());
    }
    assertThat(problems).as("snippets out of date (rewrite them with -Dsnippets.update=true)").isEmpty();
    assertThat(markers).as("snippet markers in README.md and docs/*.md").isGreaterThanOrEqualTo(5);
  }

  @Test
  void docsThatListTheChronicleFlagsShouldListAllOfThem() throws IOException {
    Path root = repositoryRoot();
    String pom = Files.readString(root.resolve("pom.xml"), StandardCharsets.UTF_8);
    Matcher m = Pattern.compile("<dedup\\.jvm\\.flags>(.*?)</dedup\\.jvm\\.flags>").matcher(pom);
    assertThat(m.find()).as("dedup.jvm.flags in pom.xml").isTrue();
    List<String> flags = List.of(m.group(1).trim().split("\\s+"));
    assertThat(flags).as("dedup.jvm.flags").hasSizeGreaterThanOrEqualTo(3);
    int pages = 0;
    for (Path md : markdown(root)) {
      String text = Files.readString(md, StandardCharsets.UTF_8);
      if (text.contains("--add-exports=java.base/sun.nio.ch")) {
        pages++;
        assertThat(text).as("%s lists the Chronicle flags, so it must list all of dedup.jvm.flags", md)
            .contains(flags);
      }
    }
    assertThat(pages).as("pages that list the flags").isPositive();
  }

  @Test
  void docLinksShouldPointToFilesAndHeadingsThatExist() throws IOException {
    Path root = repositoryRoot();
    List<String> broken = new ArrayList<>();
    for (Path md : markdown(root)) {
      broken.addAll(DocLinks.broken(md, Files.readString(md, StandardCharsets.UTF_8)));
    }
    assertThat(broken).as("broken links in README.md and docs/*.md").isEmpty();
  }

  @Test
  void shouldFindLinksToMissingFilesAndAnchors() throws IOException {
    Files.writeString(repo.resolve("target.md"), """
        # The title
        ## Across a kill -9
        ## What it costs, in `bytes`
        ## What it costs, in `bytes`
        ```
        # not a heading
        ```
        """, StandardCharsets.UTF_8);
    Path doc = repo.resolve("doc.md");
    String text = """
        [ok](target.md#across-a-kill--9) [ok](target.md#what-it-costs-in-bytes-1) [web](https://example.org/x#y)
        [missing file](nothing.md) `[in code](nothing.md)`
        [missing anchor](target.md#not-a-heading) [self](#the-title)
        """;

    List<String> broken = DocLinks.broken(doc, text);

    assertThat(broken).satisfiesExactly(
        p -> assertThat(p).startsWith("doc.md:2 (nothing.md)").contains("no such file"),
        p -> assertThat(p).startsWith("doc.md:3 (target.md#not-a-heading)").contains("no heading"),
        p -> assertThat(p).startsWith("doc.md:3 (#the-title)").contains("no heading"));
  }

  @Test
  void shouldAcceptABlockEqualToItsRegionWithoutItsIndentationOrNestedTags() throws IOException {
    source("""
        class Example {
          // tag::outer[]
          void run() {
            int a = 1;
            // tag::inner[]
            int b = 2;
            // end::inner[]
          }
          // end::outer[]
        }
        """);
    String md = """
        text
        <!-- snippet: examples/src/main/java/Example.java#outer -->
        ```java
        void run() {
          int a = 1;
          int b = 2;
        }
        ```
        <!-- snippet: examples/src/main/java/Example.java#inner -->
        ```java
        int b = 2;
        ```
        """;

    Snippets.Scan scan = Snippets.scan(repo, "doc.md", md);

    assertThat(scan.markers()).isEqualTo(2);
    assertThat(scan.problems()).isEmpty();
    assertThat(scan.updated()).isEqualTo(md);
  }

  @Test
  void shouldReportABlockThatDriftedAndRewriteIt() throws IOException {
    source("""
        // tag::a[]
        int a = 2;
        // end::a[]
        """);
    String md = """
        <!-- snippet: examples/src/main/java/Example.java#a -->
        ```java
        int a = 1;
        ```
        after
        """;

    Snippets.Scan scan = Snippets.scan(repo, "doc.md", md);

    assertThat(scan.problems()).singleElement().satisfies(p -> {
      assertThat(p.line()).isEqualTo(1);
      assertThat(p.message()).contains("differs").contains("int a = 2;").contains("int a = 1;");
    });
    assertThat(scan.updated()).isEqualTo(md.replace("int a = 1;", "int a = 2;"));
  }

  @Test
  void shouldReportAMissingTagFileOrBlock() throws IOException {
    source("""
        // tag::a[]
        int a;
        // end::a[]
        """);
    String md = """
        <!-- snippet: examples/src/main/java/Example.java#b -->
        ```java
        int a;
        ```
        <!-- snippet: examples/src/main/java/Missing.java#a -->
        ```java
        int a;
        ```
        <!-- snippet: examples/src/main/java/Example.java#a -->
        no block here
        """;

    Snippets.Scan scan = Snippets.scan(repo, "doc.md", md);

    assertThat(scan.problems()).extracting(Snippets.Problem::message).satisfiesExactly(
        m -> assertThat(m).contains("no tag 'b'").contains("[a]"),
        m -> assertThat(m).contains("no such file"),
        m -> assertThat(m).contains("no fenced code block"));
  }

  @Test
  void shouldHoldAWholeFileForAMarkerWithoutATag() throws IOException {
    Path json = repo.resolve("examples/config/example.json");
    Files.createDirectories(json.getParent());
    Files.writeString(json, "{\n  \"a\": 1  \n}\n\n", StandardCharsets.UTF_8);
    String md = """
        <!-- snippet: examples/config/example.json -->
        ```json
        {
          "a": 2
        }
        ```
        """;

    Snippets.Scan scan = Snippets.scan(repo, "doc.md", md);

    assertThat(scan.markers()).isEqualTo(1);
    assertThat(scan.problems()).singleElement().satisfies(p -> {
      assertThat(p.reference()).isEqualTo("examples/config/example.json");
      assertThat(p.message()).contains("differs");
    });
    assertThat(scan.updated()).isEqualTo(md.replace("\"a\": 2", "\"a\": 1"));
    assertThat(Snippets.scan(repo, "doc.md", scan.updated()).problems()).isEmpty();
  }

  @Test
  void shouldRefuseUnbalancedTags() {
    assertThatThrownBy(() -> Snippets.regions("// tag::a[]\nx\n")).hasMessageContaining("never closed");
    assertThatThrownBy(() -> Snippets.regions("// end::a[]\n")).hasMessageContaining("without its start");
    assertThatThrownBy(() -> Snippets.regions("// tag::a[]\n// end::a[]\n// tag::a[]\n// end::a[]\n"))
        .hasMessageContaining("opened twice");
  }

  private void source(String text) throws IOException {
    Path file = repo.resolve(FILE);
    Files.createDirectories(file.getParent());
    Files.writeString(file, text, StandardCharsets.UTF_8);
  }

  /** @return README.md (if present) and docs/*.md, sorted */
  private static List<Path> markdown(Path root) throws IOException {
    List<Path> markdown = new ArrayList<>();
    if (Files.isRegularFile(root.resolve("README.md"))) {
      markdown.add(root.resolve("README.md"));
    }
    try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(markdown::add);
    }
    return markdown;
  }

  private static Path repositoryRoot() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !(Files.isDirectory(dir.resolve("docs")) && Files.isDirectory(dir.resolve("examples")))) {
      dir = dir.getParent();
    }
    assertThat(dir).as("the repository root (a directory with docs/ and examples/) above the working directory")
        .isNotNull();
    return dir;
  }
}
