package io.github.vertxdedup.kafka.impl;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The changelog topics of a consumer ({@code changelog} on): their names, and their creation and check at subscribe.
 *
 * <p>A window is scoped per consumer group and source topic-partition, so the changelog is too: the entries of the
 * source partition {@code p} of {@code topic}, for the group {@code group.id}, are in partition {@code p} of
 * {@code <group.id>-<topic>-dedup-changelog} ({@link #name}). A missing topic is created with the source topic's
 * partition count, {@code cleanup.policy=delete} (entries are never compacted: each is needed until it is forgotten)
 * and {@code retention.ms} of {@code W} plus {@link #RETENTION_MARGIN_MS} ({@link #retentionMs}): an entry is
 * stamped when its transaction is sent, at or after its id was accepted, and the window forgets the id {@code W}
 * after it was accepted, so the entry outlives its use; the margin absorbs clocks that differ between machines and
 * a slow transaction. A topic that exists is used as it is (its retention is the operator's), but one whose partition
 * count differs from its source topic's is refused: its partition {@code p} would not hold the entries of source
 * partition {@code p}.
 *
 * <p>The calls block on the Admin client: poll thread (or any thread that is not an event loop).
 */
final class ChangelogTopics {

  private static final Logger LOG = LoggerFactory.getLogger(DedupKafkaConsumerImpl.class);
  /** Retention beyond the window, in milliseconds: one hour. */
  static final long RETENTION_MARGIN_MS = 3_600_000;
  /** How long each Admin call may take, in milliseconds. */
  static final long ADMIN_TIMEOUT_MS = 30_000;

  private ChangelogTopics() {}

  /**
   * @param groupId the consumer group
   * @param topic the source topic
   * @return the name of the changelog topic of the group's windows of {@code topic}
   */
  static String name(String groupId, String topic) {
    return groupId + "-" + topic + "-dedup-changelog";
  }

  /**
   * @param windowMs the window {@code W}, milliseconds
   * @return the {@code retention.ms} a created changelog topic gets: {@code W} plus {@link #RETENTION_MARGIN_MS}
   */
  static long retentionMs(long windowMs) {
    return windowMs + RETENTION_MARGIN_MS;
  }

  /**
   * The Admin client's config taken from the consumer's: the keys the Admin client knows (bootstrap servers,
   * security, timeouts), without the consumer's own.
   */
  static Map<String, Object> adminConfig(Map<String, Object> kafkaConfig) {
    Map<String, Object> c = new HashMap<>();
    Set<String> known = AdminClientConfig.configNames();
    for (Map.Entry<String, Object> e : kafkaConfig.entrySet()) {
      if (known.contains(e.getKey()) && !e.getKey().equals(AdminClientConfig.CLIENT_ID_CONFIG)) {
        c.put(e.getKey(), e.getValue());
      }
    }
    Object clientId = kafkaConfig.get(AdminClientConfig.CLIENT_ID_CONFIG);
    if (clientId != null) {
      c.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId + "-dedup-changelog-admin");
    }
    return c;
  }

  /**
   * Makes sure the changelog topic of each source topic exists with the source topic's partition count, creating
   * the missing ones. Blocks.
   *
   * @param kafkaConfig the consumer's config (the Admin client takes what it knows of it)
   * @param groupId the consumer group
   * @param topics the source topics
   * @param windowMs the window {@code W}, milliseconds
   * @throws IllegalStateException if a changelog topic exists with another partition count than its source topic
   *     (the message names both topics and both counts), if a source topic does not exist, or if the broker refuses
   *     or does not answer (the cause says why: a missing ACL, a timeout)
   */
  static void ensure(Map<String, Object> kafkaConfig, String groupId, Collection<String> topics, long windowMs) {
    try (Admin admin = Admin.create(adminConfig(kafkaConfig))) {
      for (String topic : topics) {
        ensure(admin, groupId, topic, windowMs);
      }
    }
  }

  /**
   * As {@link #ensure(Map, String, Collection, long)} for one source topic, with the caller's Admin client.
   *
   * @return the changelog topic's name
   */
  static String ensure(Admin admin, String groupId, String topic, long windowMs) {
    String changelog = name(groupId, topic);
    int sourcePartitions = partitions(admin, topic)
        .orElseThrow(() -> new IllegalStateException("the source topic " + topic + " does not exist, so its"
            + " changelog topic " + changelog + " cannot be created with its partition count"));
    Optional<Integer> existing = partitions(admin, changelog);
    if (existing.isEmpty()) {
      NewTopic t = new NewTopic(changelog, Optional.of(sourcePartitions), Optional.empty())
          .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE,
              TopicConfig.RETENTION_MS_CONFIG, Long.toString(retentionMs(windowMs))));
      try {
        get(admin.createTopics(List.of(t)).all(), "create the changelog topic " + changelog);
        LOG.info("created the changelog topic {} with {} partitions and retention.ms={}", changelog,
            sourcePartitions, retentionMs(windowMs));
        return changelog;
      } catch (IllegalStateException e) {
        if (!(e.getCause() instanceof TopicExistsException)) {
          throw e;
        }
        // Another member of the group created it meanwhile: check it as any existing one.
        existing = partitions(admin, changelog);
      }
    }
    int count = existing.orElseThrow(() -> new IllegalStateException("the changelog topic " + changelog
        + " was reported to exist but cannot be described"));
    if (count != sourcePartitions) {
      throw new IllegalStateException("the changelog topic " + changelog + " has " + count + " partitions but its"
          + " source topic " + topic + " has " + sourcePartitions + "; they must be equal (partition p of the"
          + " changelog holds the ids of source partition p): recreate the changelog topic with " + sourcePartitions
          + " partitions, or switch the changelog off");
    }
    return changelog;
  }

  /** @return the topic's partition count, or empty if it does not exist */
  private static Optional<Integer> partitions(Admin admin, String topic) {
    try {
      Map<String, TopicDescription> d = get(admin.describeTopics(List.of(topic)).allTopicNames(),
          "describe the topic " + topic);
      return Optional.of(d.get(topic).partitions().size());
    } catch (IllegalStateException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        return Optional.empty();
      }
      throw e;
    }
  }

  private static <T> T get(org.apache.kafka.common.KafkaFuture<T> f, String what) {
    try {
      return f.get(ADMIN_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while trying to " + what, e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("failed to " + what + ": " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException("timed out after " + ADMIN_TIMEOUT_MS + " ms trying to " + what, e);
    }
  }
}
