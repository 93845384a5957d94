package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.impl.protocol.RequestFailure;
import io.github.vertxdedup.window.CapacityPolicy;
import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.time.ManualClock;
import io.github.vertxdedup.window.WindowFullException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The room of a partition ({@link WindowRoom}): under REJECT the entries held and those claims reserve may not exceed
 * {@code maxIdsPerPartition}; under any other policy there is always room; a refusal is a counted 503 that names the
 * figures.
 */
class WindowRoomTest {

  private static final long T0 = 1_700_000_000_000L;
  private static final long MAX_IDS = 4;

  private final ManualClock clock = new ManualClock(T0);
  private final PartitionCounters counters = new PartitionCounters();
  private final Claims claims = new Claims(30_000, counters);

  @Test
  void shouldCountTheEntriesClaimsReserveAgainstMaxIdsUnderReject() {
    DedupWindow window = window(CapacityPolicy.REJECT);
    WindowRoom room = new WindowRoom(7, MAX_IDS, CapacityPolicy.REJECT, window, claims, counters);
    window.check(1);
    window.check(2);
    assertThat(room.has(2)).as("2 held + 2 new = maxIds").isTrue();
    claims.hold(claimWithKey(10, 11)); // reserves 2: its id and its key
    assertThat(room.has(1)).as("2 held + 2 reserved leave no room").isFalse();
    assertThat(room.has(0)).isTrue();

    RequestFailure refused = catchThrowableOfType(() -> room.require(1), RequestFailure.class);
    assertThat(refused.code()).isEqualTo(DedupFailure.UNAVAILABLE);
    assertThat(refused.getMessage()).contains("partition 7 holds 2 entries and 2 reserved by claims",
        "maxIdsPerPartition=4", "this event needs 1 more", "nothing recorded");
    assertThat(counters.capacityRejects).isEqualTo(1);
    room.require(0);
    assertThat(counters.capacityRejects).as("a demand that fits is not counted").isEqualTo(1);
  }

  @Test
  void shouldAlwaysHaveRoomUnderAPolicyThatEvicts() {
    DedupWindow window = window(CapacityPolicy.EVICT_OLDEST);
    WindowRoom room = new WindowRoom(0, MAX_IDS, CapacityPolicy.EVICT_OLDEST, window, claims, counters);
    for (long fp = 1; fp <= MAX_IDS; fp++) {
      window.check(fp);
    }
    claims.hold(claimWithKey(10, 11));
    assertThat(room.has(MAX_IDS)).isTrue();
    room.require(MAX_IDS);
    assertThat(counters.capacityRejects).isZero();
  }

  @Test
  void shouldWordTheWindowsOwnRefusalWithThePartitionAndItsCap() {
    WindowRoom room = new WindowRoom(3, MAX_IDS, CapacityPolicy.REJECT, window(CapacityPolicy.REJECT), claims,
        counters);
    WindowFullException full = new WindowFullException("the table cannot grow");
    assertThat(room.windowFull(full)).isEqualTo(WindowRoom.windowFullMessage(3, MAX_IDS, full))
        .isEqualTo("partition 3 window full (maxIdsPerPartition=4): the table cannot grow; nothing recorded, "
            + "retry later");
  }

  private DedupWindow window(CapacityPolicy policy) {
    return DedupWindow.builder().window(Duration.ofSeconds(60)).bucket(Duration.ofSeconds(1)).clock(clock)
        .maxIds(MAX_IDS).capacityPolicy(policy).build();
  }

  private static Claim claimWithKey(long idFp, long keyFp) {
    return new Claim(idFp, keyFp, 0, DedupWindow.DEFAULT_REMEMBER_UNTIL, "t" + idFp, idFp, false, T0, T0 + 30_000,
        null);
  }
}
