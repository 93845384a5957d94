package io.github.vertxdedup.examples;

import io.vertx.core.Future;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-memory stand-in for the ledger the examples credit once per payment. It counts how often each payment was
 * credited, so a run can show that duplicates were not applied, and it can be told to fail the next credit of a
 * payment, to show what a failed effect does.
 *
 * <p>Thread-safe: handlers of several partitions call it from their own event loops. {@link #credit} never blocks.
 */
public final class Ledger {

  private final Map<String, AtomicInteger> applied = new ConcurrentHashMap<>();
  private final AtomicLong totalCents = new AtomicLong();
  private final Set<String> failNext = ConcurrentHashMap.newKeySet();

  /**
   * Credits one payment.
   *
   * @param id the payment id
   * @param amountCents the amount, in cents
   * @return a succeeded future; a failed one (an {@link IllegalStateException} naming the id) if
   *     {@link #failNextCredit} was called for the id since its last application
   */
  public Future<Void> credit(String id, long amountCents) {
    if (failNext.remove(id)) {
      return Future.failedFuture(new IllegalStateException("ledger unavailable for " + id));
    }
    applied.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
    totalCents.addAndGet(amountCents);
    return Future.succeededFuture();
  }

  /**
   * Makes the next {@link #credit} of {@code id} fail (once), as a ledger that is briefly unavailable would.
   *
   * @param id the payment id
   */
  public void failNextCredit(String id) {
    failNext.add(id);
  }

  /**
   * @param id the payment id
   * @return how many times it was applied (0 if never)
   */
  public int timesApplied(String id) {
    AtomicInteger n = applied.get(id);
    return n == null ? 0 : n.get();
  }

  /** @return the number of distinct ids applied at least once */
  public int distinctIds() {
    return applied.size();
  }

  /** @return the number of applications, repeats included */
  public int applications() {
    return applied.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  /** @return the sum of the amounts applied, in cents, repeats included */
  public long totalCents() {
    return totalCents.get();
  }

  /** @return the ids applied more than once, with their counts, sorted by id (empty when all went well) */
  public Map<String, Integer> repeated() {
    Map<String, Integer> m = new TreeMap<>();
    applied.forEach((id, n) -> {
      if (n.get() > 1) {
        m.put(id, n.get());
      }
    });
    return m;
  }
}
