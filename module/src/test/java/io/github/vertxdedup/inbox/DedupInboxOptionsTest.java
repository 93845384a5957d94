package io.github.vertxdedup.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class DedupInboxOptionsTest {

  @Test
  void shouldRoundTripThroughJsonAndKeepTheDefaults() {
    DedupInboxOptions o = new DedupInboxOptions().setTable("billing.payment_inbox").setPurgeBatchSize(250)
        .setPurgeIntervalMs(5_000);
    DedupInboxOptions back = new DedupInboxOptions(new JsonObject(o.toJson().encode()));
    assertThat(back.toJson()).isEqualTo(o.toJson());
    assertThat(new DedupInboxOptions(new JsonObject()).toJson()).isEqualTo(new JsonObject()
        .put("table", "dedup_inbox").put("purgeBatchSize", 1000).put("purgeIntervalMs", 60_000L));
    assertThat(new DedupInboxOptions(o).getTable()).isEqualTo("billing.payment_inbox");
  }

  @Test
  void shouldNameTheFieldAndTheLimitOfABadValue() {
    assertThatThrownBy(() -> new DedupInboxOptions().setTable("Inbox; DROP TABLE x"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("table must be a lower-case identifier");
    assertThatThrownBy(() -> new DedupInboxOptions().setTable("x".repeat(55)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 54 characters");
    assertThatThrownBy(() -> new DedupInboxOptions().setPurgeBatchSize(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("purgeBatchSize must be in 1..100000 but was 0");
    assertThatThrownBy(() -> new DedupInboxOptions().setPurgeIntervalMs(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("purgeIntervalMs must be in 1..86400000 ms but was 0");
    assertThatThrownBy(() -> new DedupInboxOptions(new JsonObject().put("purgeBatchSize", "10")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'purgeBatchSize'");
    assertThatThrownBy(() -> new DedupInboxOptions(new JsonObject().put("tabel", "x")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tabel");
  }
}
