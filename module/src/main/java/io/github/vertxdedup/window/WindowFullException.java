package io.github.vertxdedup.window;

/**
 * Thrown by {@link DedupWindow#check} under {@link CapacityPolicy#REJECT} when the window already holds its
 * {@code maxIds} live ids (or the table reached its largest size). Nothing was recorded for the refused id.
 */
public final class WindowFullException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  /**
   * @param message names the limit and the current count
   */
  public WindowFullException(String message) {
    super(message);
  }
}
