package io.github.vertxdedup.journal;

/** The base of the journal's own failures. Unchecked, like the rest of the project's API. */
public class JournalException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception.
   *
   * @param message what failed, naming the journal directory
   * @param cause the underlying failure, or null
   */
  public JournalException(String message, Throwable cause) {
    super(message, cause);
  }
}
