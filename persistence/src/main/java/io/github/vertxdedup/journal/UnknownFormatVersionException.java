package io.github.vertxdedup.journal;

/**
 * A replay met a record whose checksum is valid but whose format version this reader does not know: the journal
 * was written by a newer release. The replay stops (skipping the record would forget ids); open the journal with a
 * release that reads version {@link #version()}.
 */
public class UnknownFormatVersionException extends JournalException {

  private static final long serialVersionUID = 1L;

  /** The record format version found. */
  private final int version;

  /**
   * Creates an exception.
   *
   * @param message the explanation, naming the file and the record
   * @param version the version found
   */
  public UnknownFormatVersionException(String message, int version) {
    super(message, null);
    this.version = version;
  }

  /**
   * Returns the format version found in the record.
   *
   * @return the version, {@code 0..255}
   */
  public int version() {
    return version;
  }
}
