package io.github.vertxdedup.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.LoggerFactory;

/**
 * Captures what is logged through SLF4J to one logger and the loggers below it, for a test to assert on: the tests'
 * SLF4J binding is logback (test scope; the library depends on {@code slf4j-api} alone), and this attaches an
 * in-memory appender to the logger and opens it to {@code level} until {@link #close}, when the logger gets back its
 * level. The lines still go to the configured appenders too.
 *
 * <p>Thread-safe: events may be appended from any thread (event loops, the poll thread) while the test reads them.
 */
public final class LogCapture implements AutoCloseable {

  /** One captured line: its logger, level and message with its arguments filled in. */
  public record Line(String logger, Level level, String message) {

    @Override
    public String toString() {
      return level + " " + logger + " - " + message;
    }
  }

  private final Logger logger;
  private final Level previous;
  private final List<Line> lines = new CopyOnWriteArrayList<>();
  private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
    @Override
    protected void append(ILoggingEvent e) {
      lines.add(new Line(e.getLoggerName(), e.getLevel(), e.getFormattedMessage()));
    }
  };

  private LogCapture(String name, Level level) {
    this.logger = (Logger) LoggerFactory.getLogger(name);
    this.previous = logger.getLevel();
    appender.setContext(logger.getLoggerContext());
    appender.setName("capture");
    appender.start();
    logger.addAppender(appender);
    logger.setLevel(level);
  }

  /**
   * Starts capturing.
   *
   * @param name the logger, e.g. {@code io.github.vertxdedup}: its lines and those of every logger below it
   * @param level the least level captured (the logger is opened to it until {@link #close})
   * @return the capture; close it at the end of the test
   */
  public static LogCapture of(String name, Level level) {
    return new LogCapture(name, level);
  }

  /** @return the lines captured so far, in the order they were logged; a snapshot */
  public List<Line> lines() {
    return List.copyOf(lines);
  }

  /** @return the lines captured so far at exactly {@code level} */
  public List<Line> at(Level level) {
    return lines.stream().filter(l -> l.level() == level).toList();
  }

  /** Detaches the appender and gives the logger back its level. */
  @Override
  public void close() {
    logger.detachAppender(appender);
    appender.stop();
    logger.setLevel(previous);
  }
}
