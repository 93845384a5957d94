package io.github.vertxdedup.benchmarks.kafka;

import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The handler work of the Vert.x scenarios of {@link KafkaConsumerThroughput} (plain and dedup): one credit per
 * record, by id, in a map of the crediting thread's own, merged only when the scenario is over. (The Kafka Streams
 * child credits a map of its own, see {@code StreamsDedupBaseline}.)
 *
 * <p>Why one map per thread: a single shared {@code ConcurrentHashMap} updates one element count on every insert
 * ({@code ConcurrentHashMap.addCount}). Called from one thread (the plain consumer's event loop) that costs a
 * compare-and-set; called from the four event loops of the dedup consumer's partition owners on two cores, the count's
 * cache line moves between cores on every credit: 24 of 191 event-loop samples of a record-first profile (1,000,000
 * records, 3 rounds), a cost of the ledger's data structure that a handler writing to its own store does not pay.
 * With a map per thread every Vert.x scenario pays the same per credit, a plain {@code HashMap.merge}.
 *
 * <p>Each map is created with room for {@code capacity} ids, so that its resizing is not timed either (the same
 * reason the shared map was pre-sized before). {@code HashMap} allocates that table at its first insert, so each
 * crediting thread allocates it (8 MiB for a million ids) inside the timed interval: once per thread, a few
 * milliseconds at most against rounds of one second or more.
 *
 * <p>Thread-safety: {@link #credit} from any number of threads, each writing only its own map. {@link #merged} must
 * be called once no thread credits any more, after an action that orders every crediting thread's writes before the
 * caller (here: the consumer's close, which completes only after a task on each of its event loops has run).
 */
final class Ledger {

  private final int capacity;
  private final Queue<Map<String, Long>> maps = new ConcurrentLinkedQueue<>();
  private final ThreadLocal<Map<String, Long>> mine;

  /**
   * @param capacity ids each thread's map holds without resizing; {@code >= 0}
   * @throws IllegalArgumentException if {@code capacity} is negative
   */
  Ledger(int capacity) {
    if (capacity < 0) {
      throw new IllegalArgumentException("capacity must be >= 0 but was " + capacity);
    }
    this.capacity = capacity;
    this.mine = ThreadLocal.withInitial(this::newMap);
  }

  private Map<String, Long> newMap() {
    // The default load factor is 0.75: room for capacity ids needs a table of capacity / 0.75 buckets.
    Map<String, Long> m = new HashMap<>((int) Math.min(Integer.MAX_VALUE, capacity * 4L / 3 + 1));
    maps.add(m);
    return m;
  }

  /**
   * Credits one record of {@code id} in the calling thread's map. O(1) expected.
   *
   * @param id the record's id
   */
  void credit(String id) {
    mine.get().merge(id, 1L, Long::sum);
  }

  /**
   * @return the credits of every thread added up, by id; a new map
   */
  Map<String, Long> merged() {
    Map<String, Long> all = new HashMap<>();
    for (Map<String, Long> m : maps) {
      m.forEach((id, n) -> all.merge(id, n, Long::sum));
    }
    return all;
  }

  /** @return how many threads credited at least once */
  int threads() {
    return maps.size();
  }
}
