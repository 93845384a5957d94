package io.github.vertxdedup.impl.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The routing rule as the router and client compute it (from strings) and as a partition checks it (from decoded
 * fingerprints) agree for every mode, partition count and event shape.
 */
class PartitionRoutingTest {

  private static final long NOW = 1_700_000_000_000L;

  private static DedupOptions options(int partitions, boolean byKey) {
    return new DedupOptions().setWindowMs(60_000).setPartitions(partitions).setRouteByKey(byKey);
  }

  @ParameterizedTest(name = "partitions={0} routeByKey={1}")
  @CsvSource({"1,false", "1,true", "4,false", "4,true", "7,true"})
  void shouldAdmitAndPlaceEveryEventAlikeInTheRouterTheClientAndThePartitions(int partitions, boolean byKey) {
    DedupOptions options = options(partitions, byKey);
    PartitionRouting routing = new PartitionRouting(options);
    RequestDecoder[] owners = new RequestDecoder[partitions];
    for (int p = 0; p < partitions; p++) {
      owners[p] = new RequestDecoder(options, p);
    }
    for (int i = 0; i < 500; i++) {
      String id = "evt-" + i;
      String key = i % 3 == 0 ? null : "order-" + (i % 50);
      JsonObject body = new JsonObject().put("id", id);
      if (key != null) {
        body.put("key", key);
      }
      int routed = routing.partitionOf(id, key);
      boolean admitted = byKey ? key != null : key == null || partitions == 1;
      assertThat(routed == PartitionRouting.NOT_ADMITTED).as("%s not admitted", body).isEqualTo(!admitted);
      for (int p = 0; p < partitions; p++) {
        RequestFailure f = decode(owners[p], body);
        if (p == routed) {
          assertThat(f).as("%s at its partition %d", body, p).isNull();
        } else {
          assertThat(f).as("%s at partition %d", body, p).isNotNull();
          assertThat(f.code()).isEqualTo(DedupFailure.BAD_REQUEST);
          assertThat(f.getMessage()).startsWith(byKey ? "key " : key != null ? "key " : "id ");
        }
      }
    }
  }

  @Test
  void shouldRouteByTheKeyAloneWhenRoutingByKey() {
    PartitionRouting routing = new PartitionRouting(options(16, true));
    for (int i = 0; i < 100; i++) {
      String key = "order-" + i;
      assertThat(routing.partitionOf("some id", key)).isEqualTo(routing.partitionOf("another id " + i, key))
          .isEqualTo(routing.partitionOf(null, key));
    }
    assertThat(routing.partitionOf("id", null)).isEqualTo(PartitionRouting.NOT_ADMITTED);
    assertThat(routing.partitionOf("id", "")).isEqualTo(PartitionRouting.NOT_ADMITTED);
  }

  @Test
  void shouldNameTheKeyAndTheSettingInTheRefusals() {
    assertThat(new PartitionRouting(options(4, true)).refusal(false, "events[3].key"))
        .startsWith("events[3].key is required").contains("routeByKey=true");
    assertThat(new PartitionRouting(options(4, false)).refusal(true, "key"))
        .startsWith("key is not accepted").contains("over 4 partitions", "routeByKey=true");
    assertThat(new PartitionRouting(options(1, false)).refusal(true, "key")).isNull();
    assertThat(new PartitionRouting(options(1, true)).refusal(false, "key")).startsWith("key is required");
    assertThat(new PartitionRouting(options(4, true)).refusal(true, "key")).isNull();
    assertThat(new PartitionRouting(options(4, false)).refusal(false, "key")).isNull();
  }

  private static RequestFailure decode(RequestDecoder decoder, JsonObject body) {
    return catchThrowableOfType(() -> decoder.decode(body, DedupAction.CHECK, NOW, -1), RequestFailure.class);
  }
}
