package io.github.vertxdedup.inbox;

import io.github.vertxdedup.kafka.testkit.LocalPostgres;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real PostgreSQL server for the inbox tests ({@link LocalPostgres}: a private cluster in a temporary directory,
 * removed afterwards). A JUnit 5 extension on a static field
 * ({@code @RegisterExtension static final PostgresTestSupport db = new PostgresTestSupport();}): the server starts
 * before the class's first test and is removed after its last.
 */
public final class PostgresTestSupport implements BeforeAllCallback, AfterAllCallback {

  private LocalPostgres pg;

  @Override
  public void beforeAll(ExtensionContext context) {
    pg = LocalPostgres.start();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (pg != null) {
      pg.close();
    }
  }

  /** @return the server */
  public LocalPostgres server() {
    return pg;
  }

  /** @return the options of a connection to the server's {@code postgres} database as {@code postgres} */
  public PgConnectOptions connectOptions() {
    return connectOptions(pg);
  }

  /**
   * @param pg a server
   * @return the options of a connection to it; reconnects are left to the pool (a connection per use)
   */
  public static PgConnectOptions connectOptions(LocalPostgres pg) {
    return new PgConnectOptions().setHost(pg.host()).setPort(pg.port()).setDatabase(LocalPostgres.DATABASE)
        .setUser(LocalPostgres.USER);
  }

  /**
   * @param vertx the Vert.x instance
   * @param maxSize the pool's most connections
   * @return a new pool of connections to the server; the caller closes it
   */
  public Pool pool(Vertx vertx, int maxSize) {
    return PgBuilder.pool().with(new PoolOptions().setMaxSize(maxSize)).connectingTo(connectOptions()).using(vertx)
        .build();
  }
}
