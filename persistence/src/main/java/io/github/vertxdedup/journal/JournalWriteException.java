package io.github.vertxdedup.journal;

/**
 * An append or a sync failed: an I/O error, a full disk, a closed or failed journal. The record it was given is not
 * in the journal (an append rolls back what it wrote), so the owner must not treat the id as accepted: answer
 * "unavailable" and let the redelivery try again once the journal recovers.
 */
public class JournalWriteException extends JournalException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception.
   *
   * @param message what failed, naming the journal directory
   * @param cause the underlying failure, or null
   */
  public JournalWriteException(String message, Throwable cause) {
    super(message, cause);
  }
}
