package io.github.vertxdedup.window;

/**
 * The window's answer to one arrival.
 *
 * <ul>
 *   <li>{@link #ACCEPTED}: first sighting within the window; the id is now remembered and the caller applies the
 *       effect.</li>
 *   <li>{@link #DUPLICATE}: the id is remembered; the caller drops the event and still acknowledges it so that the
 *       broker stops redelivering.</li>
 *   <li>{@link #CONFLICT}: the id is remembered with a different payload hash: an id reused
 *       for other content, an identity conflict rather than a duplicate; the first hash is kept and
 *       the caller routes the event to its conflict / dead-letter path.</li>
 * </ul>
 */
public enum WindowVerdict {
  /** First sighting: apply the effect. */
  ACCEPTED,
  /** Seen within the window: drop and acknowledge. */
  DUPLICATE,
  /** Seen within the window with another payload hash: do not apply, report. */
  CONFLICT
}
