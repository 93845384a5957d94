package io.github.vertxdedup.kafka.testkit;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A JUnit 5 extension that gives a test class one {@link LocalKafka} broker: started before the class's first test,
 * stopped (its data deleted) after its last. Register it on a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final LocalKafkaExtension kafka = new LocalKafkaExtension(1);
 * }</pre>
 *
 * <p>JUnit runs an extension's before-all callback before the class's own {@code @BeforeAll} methods and its
 * after-all callback after the class's {@code @AfterAll} methods, so those methods may use the broker. JUnit also
 * runs both callbacks for each {@code @Nested} class of that class: a nested class shares the running broker, which
 * stops only after the class that started it.
 *
 * <p>Thread-safe: {@link #broker()} may be called from any thread, e.g. a Vert.x event loop of a test (it does not
 * block; {@link #createTopic} does, as {@link LocalKafka#createTopic(String, int)}).
 */
public final class LocalKafkaExtension implements BeforeAllCallback, AfterAllCallback {

  private final int defaultPartitions;
  private volatile LocalKafka broker;
  /** The class context whose before-all callback started {@link #broker}; its after-all callback stops it. */
  private volatile ExtensionContext startedBy;

  /**
   * @param defaultPartitions partitions of topics the broker creates on first use, at least 1 (see
   *     {@link LocalKafka#start(int)})
   * @throws IllegalArgumentException if {@code defaultPartitions} is below 1
   */
  public LocalKafkaExtension(int defaultPartitions) {
    if (defaultPartitions < 1) {
      throw new IllegalArgumentException("defaultPartitions must be at least 1, was " + defaultPartitions);
    }
    this.defaultPartitions = defaultPartitions;
  }

  /**
   * Starts the broker (one to two seconds), or, for a {@code @Nested} class of the class that started it, keeps it.
   *
   * @param context the test class's context
   * @throws IllegalStateException if this extension's broker is already running for a class that does not enclose
   *     this one (registered twice)
   * @throws Exception if the broker cannot start
   */
  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    if (broker != null) {
      if (encloses(startedBy, context)) {
        return;
      }
      throw new IllegalStateException("the LocalKafka of this extension is already running; register it once, on a "
          + "static field");
    }
    broker = LocalKafka.start(defaultPartitions);
    startedBy = context;
  }

  /**
   * Stops the broker and deletes its data, after the class that started it; nothing happens if it was not started,
   * or after a {@code @Nested} class.
   *
   * @param context the test class's context
   * @throws Exception if the broker fails to stop
   */
  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    LocalKafka b = broker;
    if (b == null || (startedBy != null && context != startedBy)) {
      return;
    }
    broker = null;
    startedBy = null;
    b.close();
  }

  /** @return true if {@code inner} is {@code outer} or one of its descendants */
  private static boolean encloses(ExtensionContext outer, ExtensionContext inner) {
    for (ExtensionContext c = inner; c != null; c = c.getParent().orElse(null)) {
      if (c == outer) {
        return true;
      }
    }
    return false;
  }

  /**
   * @return the running broker
   * @throws IllegalStateException outside the test class's lifetime (before its before-all callback or after its
   *     after-all callback), e.g. when the extension was registered on an instance field instead of a static one
   */
  public LocalKafka broker() {
    LocalKafka b = broker;
    if (b == null) {
      throw new IllegalStateException("no LocalKafka running: register the extension on a static field with "
          + "@RegisterExtension, and use it between the class's first and last test");
    }
    return b;
  }

  /**
   * @return the running broker's {@code bootstrap.servers}, as {@link LocalKafka#bootstrapServers()}
   * @throws IllegalStateException as {@link #broker()}
   */
  public String bootstrapServers() {
    return broker().bootstrapServers();
  }

  /**
   * Creates a topic on the running broker, as {@link LocalKafka#createTopic(String, int)}.
   *
   * @param topic the topic name
   * @param partitions its partition count, at least 1
   * @throws IllegalStateException as {@link #broker()}
   * @throws Exception as {@link LocalKafka#createTopic(String, String, int)}
   */
  public void createTopic(String topic, int partitions) throws Exception {
    broker().createTopic(topic, partitions);
  }
}
