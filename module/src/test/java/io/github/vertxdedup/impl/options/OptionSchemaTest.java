package io.github.vertxdedup.impl.options;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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

  @Test
  void shouldReadAnArrayOfStringsAndNameTheElementThatIsNotOne() {
    OptionSchema<List<Object>> schema = new OptionSchema<List<Object>>("test option").strings("names", List::add);
    List<Object> seen = schema.read(new JsonObject().put("names", new JsonArray().add("a").add("b")),
        new ArrayList<>());
    assertThat(seen).containsExactly(List.of("a", "b"));
    assertThatThrownBy(() -> schema.read(new JsonObject().put("names", "a"), new ArrayList<>()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("test option 'names' must be a JSON array of strings but was the string \"a\"");
    assertThatThrownBy(() -> schema.read(new JsonObject().put("names", new JsonArray().add("a").add(5)),
        new ArrayList<>()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("test option 'names' must be a JSON array of strings but its element 1 was the number 5");
    assertThatThrownBy(() -> schema.read(new JsonObject().put("names", new JsonArray().addNull()), new ArrayList<>()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("test option 'names' must be a JSON array of strings but its element 0 was null");
  }

  @Test
  void shouldReadAMapOfSettingsAsTextAndNameTheMemberThatIsNotAScalar() {
    OptionSchema<List<Object>> schema = new OptionSchema<List<Object>>("test option").textMap("kafka", List::add);
    JsonObject settings = new JsonObject().put("group.id", "g").put("max.poll.records", 500)
        .put("fetch.factor", 0.8).put("check.crcs", true).put("client.id", null);
    List<Object> seen = schema.read(new JsonObject().put("kafka", settings), new ArrayList<>());
    assertThat(seen).containsExactly(Map.of("group.id", "g", "max.poll.records", "500", "fetch.factor", "0.8",
        "check.crcs", "true"));
    assertThatThrownBy(() -> schema.read(new JsonObject().put("kafka", new JsonObject()
        .put("bootstrap.servers", new JsonArray().add("a:9092"))), new ArrayList<>()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("test option 'kafka' must be a JSON object whose values are strings, numbers or booleans but its"
            + " member 'bootstrap.servers' was a JSON array");
    assertThatThrownBy(() -> schema.read(new JsonObject().put("kafka", "group.id=g"), new ArrayList<>()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("test option 'kafka' must be a JSON object whose values are strings, numbers or booleans but was"
            + " the string \"group.id=g\"");
  }
}
