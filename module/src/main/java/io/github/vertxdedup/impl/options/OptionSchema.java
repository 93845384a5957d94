package io.github.vertxdedup.impl.options;

import io.github.vertxdedup.impl.protocol.JsonNumbers;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.ObjIntConsumer;
import java.util.function.ObjLongConsumer;
import java.util.stream.Collectors;

/*
 * Why a schema of our own rather than the converter Vert.x codegen generates for a @DataObject (@JsonGen): the
 * generated fromJson skips an unknown key and a value of the wrong JSON type without a word, turns 1.5 or 2^32 + 1
 * into an int with Number.intValue(), and lets Enum.valueOf throw a message that does not name the key; its toJson
 * writes windowMs 0 for a window that is not set, which the JSON constructor has to refuse. Keeping the options'
 * strictness on top of it takes a validating layer that knows every key, its JSON type, its integer width and its
 * enum constants: the whole schema, a second description of what the converter is generated from, which the two
 * would have to keep in step. This class is that schema, and it calls the setter as well, so each key is described
 * once; the setters keep the range checks.
 */

/**
 * The JSON form of one options class: its keys, the JSON type each value must have, and the setter each value goes
 * to. {@link #read} checks every key of a JSON object against them and names the key and the expected type in every
 * error, e.g. {@code dedup option 'leaseMs' must be a JSON integer but was the string "30s"}.
 *
 * <p>A JSON {@code null} stands for the option's default: {@link #read} skips it, so the target keeps the value its
 * no-argument constructor gave it (as a request field that is {@code null} is absent on the wire).
 *
 * <p>Build a schema once, in a static initializer, and do not add keys afterwards; it is then safe to share between
 * threads. {@link #read} keeps no state of its own; the target is the caller's.
 *
 * @param <T> the options class
 */
public final class OptionSchema<T> {

  private static final int LONGEST_ECHOED_STRING = 100;

  private final String kind;
  private final Map<String, Option<T>> options = new LinkedHashMap<>();

  /**
   * Creates an empty schema.
   *
   * @param kind how errors name an option of this class, e.g. {@code "dedup option"}
   */
  public OptionSchema(String kind) {
    this.kind = Objects.requireNonNull(kind, "kind");
  }

  /**
   * Adds a key whose value is a JSON string.
   *
   * @param key the JSON key
   * @param setter receives the string
   * @return this
   */
  public OptionSchema<T> string(String key, BiConsumer<T, String> setter) {
    String expected = "a JSON string";
    return add(key, (target, v) -> {
      if (!(v instanceof String s)) {
        throw mismatch(key, expected, v);
      }
      setter.accept(target, s);
    });
  }

  /**
   * Adds a key whose value is a JSON boolean.
   *
   * @param key the JSON key
   * @param setter receives the boolean
   * @return this
   */
  public OptionSchema<T> bool(String key, BiConsumer<T, Boolean> setter) {
    String expected = "a JSON boolean";
    return add(key, (target, v) -> {
      if (!(v instanceof Boolean b)) {
        throw mismatch(key, expected, v);
      }
      setter.accept(target, b);
    });
  }

  /**
   * Adds a key whose value is a JSON number that is a whole number within the range of an {@code int}. A fraction
   * ({@code 1.5}) or a value beyond an {@code int} is an error, never truncated.
   *
   * @param key the JSON key
   * @param setter receives the value; it checks the option's own range
   * @return this
   */
  public OptionSchema<T> intValue(String key, ObjIntConsumer<T> setter) {
    return add(key, (target, v) -> {
      long l = exactLong(key, v);
      if (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE) {
        throw mismatch(key, "a JSON integer in " + Integer.MIN_VALUE + ".." + Integer.MAX_VALUE, v);
      }
      setter.accept(target, (int) l);
    });
  }

  /**
   * Adds a key whose value is a JSON number that is a whole number within the range of a {@code long} (the
   * exact-integer rule of the wire fields). A fraction is an error, never truncated.
   *
   * @param key the JSON key
   * @param setter receives the value; it checks the option's own range
   * @return this
   */
  public OptionSchema<T> longValue(String key, ObjLongConsumer<T> setter) {
    return add(key, (target, v) -> setter.accept(target, exactLong(key, v)));
  }

  /**
   * Adds a key whose value is a JSON string naming a constant of {@code type}, exactly (case included).
   *
   * @param key the JSON key
   * @param type the enum
   * @param setter receives the constant
   * @param <E> the enum
   * @return this
   */
  public <E extends Enum<E>> OptionSchema<T> enumValue(String key, Class<E> type, BiConsumer<T, E> setter) {
    List<E> constants = Arrays.asList(type.getEnumConstants());
    String expected = "one of the JSON strings "
        + constants.stream().map(Enum::name).collect(Collectors.joining(" | "));
    return add(key, (target, v) -> {
      if (v instanceof String s) {
        for (E e : constants) {
          if (e.name().equals(s)) {
            setter.accept(target, e);
            return;
          }
        }
      }
      throw mismatch(key, expected, v);
    });
  }

  /**
   * Adds a key whose value is a JSON object whose own messages name it already (such as a choice among its keys).
   *
   * @param key the JSON key
   * @param setter receives the object; errors it throws pass through as they are
   * @return this
   */
  public OptionSchema<T> object(String key, BiConsumer<T, JsonObject> setter) {
    String expected = "a JSON object";
    return add(key, (target, v) -> {
      if (!(v instanceof JsonObject o)) {
        throw mismatch(key, expected, v);
      }
      setter.accept(target, o);
    });
  }

  /**
   * Adds a key whose value is the JSON form of another options class, nested in these. An
   * {@link IllegalArgumentException} the setter throws (the nested class's reader or setters, naming a key of its own)
   * gets the path of the object in front, from the outermost key: {@code in 'options.dedup': dedup option 'leaseMs'
   * must be a JSON integer but was ...}, so the message says where that key sits.
   *
   * @param key the JSON key
   * @param setter reads the object into the nested options and sets them
   * @return this
   */
  public OptionSchema<T> nested(String key, BiConsumer<T, JsonObject> setter) {
    return object(key, (target, o) -> {
      try {
        setter.accept(target, o);
      } catch (NestedOptionException e) {
        throw e.under(key);
      } catch (IllegalArgumentException e) {
        throw new NestedOptionException(key, e);
      }
    });
  }

  /**
   * An error about a key inside a nested object: the detail (the nested reader's or setter's message) with the path
   * of the object it sits in, from the outermost key, joined by dots.
   */
  static final class NestedOptionException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String path;
    private final String detail;

    private NestedOptionException(String path, String detail, Throwable cause) {
      super("in '" + path + "': " + detail, cause);
      this.path = path;
      this.detail = detail;
    }

    NestedOptionException(String key, IllegalArgumentException cause) {
      this(key, cause.getMessage(), cause);
    }

    /** @return the same error, one object further in: {@code parent} in front of the path */
    NestedOptionException under(String parent) {
      return new NestedOptionException(parent + "." + path, detail, getCause());
    }
  }

  /**
   * Adds a key whose value is a JSON array of strings, e.g. a list of names. A {@code null} element is an error too.
   *
   * @param key the JSON key
   * @param setter receives the strings, in the array's order, as an unmodifiable list; it checks the option's own
   *     limits (an empty list, say)
   * @return this
   */
  public OptionSchema<T> strings(String key, BiConsumer<T, List<String>> setter) {
    String expected = "a JSON array of strings";
    return add(key, (target, v) -> {
      if (!(v instanceof JsonArray array)) {
        throw mismatch(key, expected, v);
      }
      List<String> strings = new ArrayList<>(array.size());
      for (int i = 0; i < array.size(); i++) {
        if (!(array.getValue(i) instanceof String s)) {
          throw new IllegalArgumentException(kind + " '" + key + "' must be " + expected + " but its element " + i
              + " was " + describe(array.getValue(i)));
        }
        strings.add(s);
      }
      setter.accept(target, Collections.unmodifiableList(strings));
    });
  }

  /**
   * Adds a key whose value is a JSON object of settings of another library, read as text: each member's value must be
   * a JSON string, number or boolean and is handed on as its text ({@code 500}, {@code 0.8} and {@code true} become
   * {@code "500"}, {@code "0.8"} and {@code "true"}); a member whose value is {@code null} is left out. The members'
   * names are not checked: they are the other library's to check (Kafka's client configuration, say).
   *
   * @param key the JSON key
   * @param setter receives the settings, in the object's order, as an unmodifiable map
   * @return this
   */
  public OptionSchema<T> textMap(String key, BiConsumer<T, Map<String, String>> setter) {
    String expected = "a JSON object whose values are strings, numbers or booleans";
    return add(key, (target, v) -> {
      if (!(v instanceof JsonObject object)) {
        throw mismatch(key, expected, v);
      }
      Map<String, String> settings = new LinkedHashMap<>();
      for (Map.Entry<String, Object> member : object) {
        Object value = member.getValue();
        if (value == null) {
          continue;
        }
        if (!(value instanceof String || value instanceof Number || value instanceof Boolean)) {
          throw new IllegalArgumentException(kind + " '" + key + "' must be " + expected + " but its member '"
              + member.getKey() + "' was " + describe(value));
        }
        settings.put(member.getKey(), value.toString());
      }
      setter.accept(target, Collections.unmodifiableMap(settings));
    });
  }

  /**
   * Reads {@code json} into {@code target}, key by key in the object's order: each known key's value is checked
   * against its JSON type and handed to its setter; a {@code null} value is skipped (the default stays).
   *
   * @param json the JSON form
   * @param target the options to set, holding their defaults
   * @return {@code target}
   * @throws IllegalArgumentException at the first key that is unknown (the message lists the known ones), whose value
   *     has the wrong JSON type (naming the key, the expected type and what it was), or whose setter refuses the
   *     value (the setter's message, naming the option and its limit)
   * @throws NullPointerException if {@code json} or {@code target} is null
   */
  public T read(JsonObject json, T target) {
    Objects.requireNonNull(json, "json");
    Objects.requireNonNull(target, "target");
    for (Map.Entry<String, Object> member : json) {
      Option<T> option = options.get(member.getKey());
      if (option == null) {
        throw new IllegalArgumentException("unknown " + kind + " '" + member.getKey() + "' (known: "
            + String.join(", ", options.keySet()) + ")");
      }
      if (member.getValue() != null) {
        option.read(target, member.getValue());
      }
    }
    return target;
  }

  /**
   * Describes a decoded JSON value for an error message: {@code the string "x"}, {@code the number 1.5},
   * {@code the boolean true}, {@code a JSON object}, {@code a JSON array}, {@code null}. A long string is cut.
   *
   * @param value a value as Vert.x decodes JSON, or any value a {@link JsonObject} may hold
   * @return the description
   */
  public static String describe(Object value) {
    if (value == null) {
      return "null";
    }
    if (value instanceof String s) {
      return "the string \"" + (s.length() <= LONGEST_ECHOED_STRING ? s
          : s.substring(0, LONGEST_ECHOED_STRING) + "...") + "\"";
    }
    if (value instanceof Number || value instanceof Boolean) {
      return "the " + (value instanceof Number ? "number " : "boolean ") + value;
    }
    if (value instanceof JsonObject || value instanceof Map) {
      return "a JSON object";
    }
    if (value instanceof JsonArray || value instanceof List) {
      return "a JSON array";
    }
    return "a value of type " + value.getClass().getSimpleName();
  }

  private OptionSchema<T> add(String key, Option<T> option) {
    if (options.putIfAbsent(Objects.requireNonNull(key, "key"), option) != null) {
      throw new IllegalStateException("key '" + key + "' is described twice");
    }
    return this;
  }

  private long exactLong(String key, Object v) {
    Long l = JsonNumbers.exactLong(v);
    if (l == null) {
      throw mismatch(key, "a JSON integer", v);
    }
    return l;
  }

  private IllegalArgumentException mismatch(String key, String expected, Object actual) {
    return new IllegalArgumentException(kind + " '" + key + "' must be " + expected + " but was " + describe(actual));
  }

  /** Checks one key's value and hands it to its setter. */
  @FunctionalInterface
  private interface Option<T> {
    void read(T target, Object value);
  }
}
