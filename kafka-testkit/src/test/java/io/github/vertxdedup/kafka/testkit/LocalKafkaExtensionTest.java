package io.github.vertxdedup.kafka.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class LocalKafkaExtensionTest {

  @RegisterExtension
  static final LocalKafkaExtension kafka = new LocalKafkaExtension(1);

  /** Runs after the extension's before-all callback: the broker already serves. */
  @BeforeAll
  static void createTopicBeforeTheTests() throws Exception {
    kafka.createTopic("made-in-before-all", 2);
  }

  /** Runs after the nested class's after-all callback: the broker still serves the class that started it. */
  @AfterAll
  static void shouldStillServeAfterTheNestedClass() throws Exception {
    assertThat(LocalKafkaTest.partitionCount(kafka.bootstrapServers(), "made-in-before-all")).isEqualTo(2);
  }

  /** JUnit runs the extension's class callbacks for a nested class too: it shares the enclosing class's broker. */
  @Nested
  class WhenNested {

    @Test
    void shouldShareTheEnclosingClassesBroker() throws Exception {
      assertThat(LocalKafkaTest.partitionCount(kafka.bootstrapServers(), "made-in-before-all")).isEqualTo(2);
    }
  }

  @Test
  void shouldServeFromTheClassesOwnBeforeAll() throws Exception {
    assertThat(LocalKafkaTest.partitionCount(kafka.bootstrapServers(), "made-in-before-all")).isEqualTo(2);
    assertThat(kafka.broker().bootstrapServers()).isEqualTo(kafka.bootstrapServers());
  }

  @Test
  void shouldRefuseUseOutsideTheClassLifetimeAndABadPartitionCount() throws Exception {
    LocalKafkaExtension notStarted = new LocalKafkaExtension(1);
    assertThatThrownBy(notStarted::broker)
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("static field");
    notStarted.afterAll(null); // never started: nothing to stop
    assertThatThrownBy(() -> new LocalKafkaExtension(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("defaultPartitions");
  }
}
