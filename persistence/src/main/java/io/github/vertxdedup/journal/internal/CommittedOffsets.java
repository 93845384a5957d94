package io.github.vertxdedup.journal.internal;

import io.github.vertxdedup.journal.JournalVisitor;
import io.github.vertxdedup.journal.OffsetCommit;
import io.github.vertxdedup.journal.RollSnapshotSource;
import io.github.vertxdedup.journal.RollSnapshotWriter;
import io.github.vertxdedup.journal.SourcePartition;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The highest committed offset per topic-partition: what recovery restores and what a roll snapshot carries over.
 *
 * <p>{@link #record} keeps the larger of the known and the given offset, so an offset written to the journal after
 * a higher one (a late commit from a previous owner of the partition, or replayed out of order across a carried-over
 * snapshot) never moves a partition backwards. Feed it from {@link JournalVisitor#onOffsetCommit} during replay and
 * from the owner's own commits while serving; {@link #writeTo} carries them into a roll snapshot.
 *
 * <p>Not thread-safe: one owner (the partition's event loop, or the replaying thread before it) uses it.
 */
public final class CommittedOffsets {

  private final Map<SourcePartition, Long> offsets = new HashMap<>();

  /** Creates an empty set. */
  public CommittedOffsets() {
  }

  /**
   * Records a committed offset, keeping the highest seen for its topic-partition. O(1) expected.
   *
   * @param topic the topic; see {@link SourcePartition}
   * @param partition the partition, {@code >= 0}
   * @param offset the committed offset, {@code >= 0}
   * @return true if the offset is now the highest recorded (it was higher, or the partition was new)
   * @throws NullPointerException if {@code topic} is null
   * @throws IllegalArgumentException if a component is invalid (see {@link OffsetCommit})
   */
  public boolean record(String topic, int partition, long offset) {
    if (offset < 0) {
      throw new IllegalArgumentException("offset must be >= 0 but was " + offset);
    }
    SourcePartition key = new SourcePartition(topic, partition);
    Long known = offsets.get(key);
    if (known != null && known >= offset) {
      return false;
    }
    offsets.put(key, offset);
    return true;
  }

  /**
   * Records a committed offset; same as {@code record(commit.topic(), commit.partition(), commit.offset())}.
   *
   * @param commit the commit
   * @return true if the offset is now the highest recorded
   */
  public boolean record(OffsetCommit commit) {
    Objects.requireNonNull(commit, "commit");
    return record(commit.topic(), commit.partition(), commit.offset());
  }

  /**
   * Returns the highest committed offset recorded for a topic-partition.
   *
   * @param topic the topic
   * @param partition the partition
   * @return the offset, or {@code -1} if none was recorded
   */
  public long get(String topic, int partition) {
    Long known = offsets.get(new SourcePartition(topic, partition));
    return known == null ? -1L : known;
  }

  /**
   * Returns the number of topic-partitions with a recorded offset.
   *
   * @return the count
   */
  public int size() {
    return offsets.size();
  }

  /**
   * Returns every recorded offset, ordered by topic then partition.
   *
   * @return a new list
   */
  public List<OffsetCommit> toList() {
    List<OffsetCommit> list = new ArrayList<>(offsets.size());
    offsets.forEach((tp, offset) -> list.add(new OffsetCommit(tp.topic(), tp.partition(), offset)));
    list.sort(Comparator.comparing(OffsetCommit::topic).thenComparingInt(OffsetCommit::partition));
    return list;
  }

  /**
   * Writes every recorded offset into a roll snapshot.
   *
   * @param writer the snapshot being written (see {@link RollSnapshotSource})
   */
  public void writeTo(RollSnapshotWriter writer) {
    Objects.requireNonNull(writer, "writer");
    offsets.forEach((tp, offset) -> writer.offsetCommit(tp.topic(), tp.partition(), offset));
  }

  @Override
  public String toString() {
    return "CommittedOffsets" + toList();
  }
}
