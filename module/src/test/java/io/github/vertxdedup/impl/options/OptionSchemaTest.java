package io.github.vertxdedup.impl.options;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The schema's own rules; the options classes' tests cover each JSON type through their keys. */
class OptionSchemaTest {

  @Test
  void shouldRefuseAKeyDescribedTwice() {
    OptionSchema<List<Object>> schema = new OptionSchema<List<Object>>("test option").string("a", List::add);
    assertThatThrownBy(() -> schema.bool("a", List::add))
        .isInstanceOf(IllegalStateException.class).hasMessage("key 'a' is described twice");
  }

  @Test
  void shouldHandEachValueToItsSetterInTheObjectsOrderAndSkipNull() {
    OptionSchema<List<Object>> schema = new OptionSchema<List<Object>>("test option")
        .string("s", List::add).longValue("l", List::add).bool("b", List::add);
    List<Object> seen = schema.read(new JsonObject().put("l", 7).put("s", null).put("b", true), new ArrayList<>());
    assertThat(seen).containsExactly(7L, true);
  }

  @Test
  void shouldDescribeWhatAValueWasAndCutALongString() {
    assertThat(OptionSchema.describe("x".repeat(101))).isEqualTo("the string \"" + "x".repeat(100) + "...\"");
    assertThat(OptionSchema.describe("x".repeat(100))).isEqualTo("the string \"" + "x".repeat(100) + "\"");
    assertThat(OptionSchema.describe(Instant.EPOCH)).isEqualTo("a value of type Instant");
    assertThat(OptionSchema.describe(null)).isEqualTo("null");
    OptionSchema<List<Object>> schema = new OptionSchema<List<Object>>("test option").longValue("l", List::add);
    assertThatThrownBy(() -> schema.read(new JsonObject().put("l", 1e30), new ArrayList<>()))
        .hasMessage("test option 'l' must be a JSON integer but was the number 1.0E30");
  }
}
