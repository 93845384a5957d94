package io.github.vertxdedup.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.journal.JournalContents;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's start ({@link QuickStart}) runs as it says: a first check accepts, a copy is a duplicate, journaled. */
class QuickStartTest {

  private final Vertx vertx = Vertx.vertx();

  @TempDir
  Path journalDir;

  @AfterEach
  void closeVertx() {
    vertx.close().await();
  }

  @Test
  void shouldAcceptAnIdOnceAndAnswerItsCopyDuplicate() throws IOException {
    assertThat(QuickStart.start(vertx, journalDir).await())
        .containsExactly(DedupVerdict.ACCEPTED, DedupVerdict.DUPLICATE);
    try (Stream<Path> partitions = Files.list(journalDir.resolve("dedup"))) {
      assertThat(partitions.filter(JournalContents::isJournalDirectory)).as("partition journals").isNotEmpty();
    }
  }
}
