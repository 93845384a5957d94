package io.github.vertxdedup.kafka.impl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.errors.DisconnectException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;

/**
 * The rebuild's retries of its reader's calls, on Kafka's own exception types: a broker briefly unreachable (its
 * {@code TimeoutException}, a disconnection) is called again after an exponential backoff; an authorization failure
 * at once fails; an episode longer than the budget fails. Time is a counter the sleeper advances: nothing waits.
 */
class RebuildBackoffTest {

  private long nowNs;
  private final List<Long> waitsMs = new ArrayList<>();
  private final List<String> retries = new ArrayList<>();
  private final AtomicBoolean cancelled = new AtomicBoolean();

  private RebuildBackoff backoff(long budgetMs) {
    return new RebuildBackoff(100, 1_000, budgetMs, () -> nowNs, ms -> {
      waitsMs.add(ms);
      nowNs += ms * 1_000_000L;
    }, cancelled::get, (what, failure, waitMs, retry) -> retries.add(what + "#" + retry + " " + waitMs));
  }

  /** A call that fails {@code failures} times with {@code e}, then answers 42. */
  private static java.util.function.Supplier<Integer> failing(int failures, RuntimeException e, AtomicInteger calls) {
    return () -> {
      if (calls.incrementAndGet() <= failures) {
        throw e;
      }
      return 42;
    };
  }

  @Test
  void call_retriesARetriableFailureWithExponentialBackoffUpToTheMax() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    int result = backoff(60_000).call("poll", failing(6, new TimeoutException("no answer"), calls));

    assertThat(result).isEqualTo(42);
    assertThat(calls).hasValue(7);
    assertThat(retries).containsExactly("poll#1 100", "poll#2 200", "poll#3 400", "poll#4 800", "poll#5 1000",
        "poll#6 1000");
    // Waited in slices, so that a cancel is seen within one.
    assertThat(waitsMs).allSatisfy(ms -> assertThat(ms).isLessThanOrEqualTo(RebuildBackoff.SLICE_MS));
    assertThat(waitsMs.stream().mapToLong(Long::longValue).sum()).isEqualTo(3_500);
  }

  @Test
  void call_startsAFreshEpisodeAfterASuccess() throws Exception {
    RebuildBackoff b = backoff(60_000);
    b.call("position", failing(2, new DisconnectException("gone"), new AtomicInteger()));
    b.call("position", failing(1, new DisconnectException("gone"), new AtomicInteger()));

    assertThat(retries).containsExactly("position#1 100", "position#2 200", "position#1 100");
  }

  @Test
  void call_throwsANonRetriableFailureAtOnce() {
    AtomicInteger calls = new AtomicInteger();
    TopicAuthorizationException denied = new TopicAuthorizationException("not authorized to read orders");

    assertThatThrownBy(() -> backoff(60_000).call("offsetsForTimes", failing(1, denied, calls))).isSameAs(denied);
    assertThat(calls).hasValue(1);
    assertThat(retries).isEmpty();
  }

  @Test
  void call_throwsTheLastFailureOnceTheEpisodeOutlastsTheBudget() {
    AtomicInteger calls = new AtomicInteger();
    TimeoutException timeout = new TimeoutException("no answer");

    assertThatThrownBy(() -> backoff(1_000).call("poll", failing(100, timeout, calls))).isSameAs(timeout);
    // 100 + 200 + 400 waited; the next wait, 800, would end past the budget of 1000.
    assertThat(retries).containsExactly("poll#1 100", "poll#2 200", "poll#3 400");
    assertThat(calls).hasValue(4);
  }

  @Test
  void call_stopsRetryingOnceCancelled() {
    AtomicInteger calls = new AtomicInteger();
    TimeoutException timeout = new TimeoutException("no answer");
    cancelled.set(true);

    assertThatThrownBy(() -> backoff(60_000).call("poll", failing(100, timeout, calls))).isSameAs(timeout);
    assertThat(calls).hasValue(1);
  }
}
