package io.github.vertxdedup.window;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import net.openhft.hashing.LongHashFunction;

/**
 * Turns ids of one scope (a service address, a Kafka topic, a business-key namespace) into 64-bit fingerprints,
 * the form in which a {@link DedupWindow} and the journal hold them.
 *
 * <p><b>Function.</b> XXH3-64 (Collet, xxHash specification; implementation {@code net.openhft:zero-allocation-hashing})
 * over the UTF-8 bytes of the id, seeded with the XXH3-64 hash of the UTF-8 bytes of the scope. Two scopes give two
 * independent functions, so ids of different scopes never collide by construction (there is no
 * concatenation for {@code ("a", "bc")} and {@code ("ab", "c")} to share). {@code String.hashCode} is never used:
 * {@code "Aa"} and {@code "BB"} share it. The function is fixed: fingerprints are written to journals and must be
 * the same in every process and version; changing it is a journal format change.
 *
 * <p><b>Collisions.</b> With {@code n} ids held at once the chance that any two distinct ids share a fingerprint is
 * about {@code n^2 / 2^65} (birthday bound): about {@code 8e-7} for 5.4 million held ids, {@code 3e-4} for 100
 * million. A collision makes the newer id look like a duplicate of the older one.
 *
 * <p><b>Zero.</b> The value 0 is reserved by the window as the empty-slot marker; a hash that comes out 0 is
 * replaced by {@link #ZERO_REPLACEMENT}, which changes the collision odds by a negligible {@code 2^-64}.
 *
 * <p><b>Text.</b> A {@code String} id, scope or payload must be well-formed UTF-16: one with an unpaired surrogate
 * has no UTF-8 form and is refused with {@link IllegalArgumentException} (the JDK's encoder would silently turn
 * the surrogate into {@code '?'}, and two different ids into one fingerprint).
 *
 * <p>Immutable and thread-safe. Each call allocates nothing except the UTF-8 encoding of a {@code String} id.
 */
public final class Fingerprinter {

  /** The fingerprint used in place of a hash that comes out 0 (the golden-ratio constant). */
  public static final long ZERO_REPLACEMENT = 0x9E3779B97F4A7C15L;

  /** Seed of {@link #payloadHash}; any fixed value other than a scope hash would do. */
  private static final long PAYLOAD_SEED = 0x5DEECE66DL;

  private static final LongHashFunction SCOPE_HASH = LongHashFunction.xx3();
  private static final LongHashFunction PAYLOAD_HASH = LongHashFunction.xx3(PAYLOAD_SEED);

  private final String scope;
  private final LongHashFunction hash;

  private Fingerprinter(String scope) {
    this.scope = scope;
    this.hash = LongHashFunction.xx3(SCOPE_HASH.hashBytes(utf8(scope, "scope")));
  }

  /**
   * Returns the fingerprinter of a scope.
   *
   * @param scope the namespace of the ids, e.g. a service address or a Kafka topic; may be empty
   * @return a fingerprinter; cache it, creating one hashes the scope
   * @throws NullPointerException if {@code scope} is null
   * @throws IllegalArgumentException if {@code scope} has an unpaired surrogate (it has no UTF-8 form)
   */
  public static Fingerprinter forScope(String scope) {
    return new Fingerprinter(Objects.requireNonNull(scope, "scope"));
  }

  /** @return the scope this fingerprinter was created for */
  public String scope() {
    return scope;
  }

  /**
   * Fingerprints a text id: XXH3-64 of its UTF-8 bytes.
   *
   * @param id the id; any length, may be empty
   * @return a non-zero 64-bit fingerprint
   * @throws NullPointerException if {@code id} is null
   * @throws IllegalArgumentException if {@code id} has an unpaired surrogate: such a string has no UTF-8 form
   *     (the JDK's encoder would write {@code '?'} for it, so {@code "a\uD800"} would pass for {@code "a?"})
   */
  public long fingerprint(String id) {
    return nonZero(hash.hashBytes(utf8(id, "id")));
  }

  /**
   * Fingerprints an id given as bytes (for text ids: their UTF-8 encoding, which gives the same fingerprint as
   * {@link #fingerprint(String)}). Allocates nothing.
   *
   * @param id the bytes
   * @param offset index of the first byte
   * @param length number of bytes
   * @return a non-zero 64-bit fingerprint
   * @throws IndexOutOfBoundsException if the range lies outside {@code id}
   */
  public long fingerprint(byte[] id, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, id.length);
    return nonZero(hash.hashBytes(id, offset, length));
  }

  /**
   * Fingerprints a whole byte array; see {@link #fingerprint(byte[], int, int)}.
   *
   * @param id the bytes
   * @return a non-zero 64-bit fingerprint
   */
  public long fingerprint(byte[] id) {
    return fingerprint(id, 0, id.length);
  }

  /**
   * Hashes a payload for conflict detection (the same id with another payload hash is a {@code CONFLICT}, not a
   * duplicate): XXH3-64 with a fixed seed, never 0
   * (0 means "no payload hash" to the window). Independent of any scope.
   *
   * @param payload the canonical payload bytes
   * @return a non-zero 64-bit hash
   */
  public static long payloadHash(byte[] payload) {
    return nonZero(PAYLOAD_HASH.hashBytes(payload));
  }

  /**
   * Hashes a payload given as text (its UTF-8 bytes); see {@link #payloadHash(byte[])}.
   *
   * @param payload the canonical payload text
   * @return a non-zero 64-bit hash
   * @throws IllegalArgumentException if {@code payload} has an unpaired surrogate (see {@link #fingerprint(String)})
   */
  public static long payloadHash(String payload) {
    return payloadHash(utf8(payload, "payload"));
  }

  /**
   * The UTF-8 bytes of a text that has them. {@link String#getBytes} replaces an unpaired surrogate by {@code '?'},
   * which would make two different texts hash alike, so such a text is refused instead.
   */
  private static byte[] utf8(String text, String name) {
    for (int i = 0, n = text.length(); i < n; i++) {
      char c = text.charAt(i);
      if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(text.charAt(i + 1))) {
          i++;
        } else {
          throw new IllegalArgumentException(
              name + " must be well-formed UTF-16 but has an unpaired surrogate at index " + i);
        }
      }
    }
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** Package-private for tests: the value 0 is the window's empty-slot marker. */
  static long nonZero(long h) {
    return h == 0 ? ZERO_REPLACEMENT : h;
  }
}
