package io.github.vertxdedup.impl.protocol;

import java.math.BigDecimal;
import java.math.BigInteger;

/**
 * Reads an integer out of a decoded JSON value exactly: the one rule the options and the wire decoder share. Not part
 * of the API (an implementation package); stateless and thread-safe.
 */
public final class JsonNumbers {

  private JsonNumbers() {}

  /**
   * Returns the value of a JSON number that is a whole number within the range of a {@code long}.
   *
   * @param v a value as Vert.x decodes JSON (Integer, Long, Double, BigDecimal, BigInteger, ...), or anything else
   * @return the exact {@code long}, or null when {@code v} is not a number, has a fraction or lies outside a long
   */
  public static Long exactLong(Object v) {
    if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
      return ((Number) v).longValue();
    }
    if (v instanceof Number n) {
      try {
        BigDecimal d = n instanceof BigDecimal bd ? bd
            : n instanceof BigInteger bi ? new BigDecimal(bi) : new BigDecimal(n.toString());
        return d.longValueExact();
      } catch (ArithmeticException | NumberFormatException e) {
        return null; // a fraction, beyond a long, NaN or infinite
      }
    }
    return null;
  }
}
