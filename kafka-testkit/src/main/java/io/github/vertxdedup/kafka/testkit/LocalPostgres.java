package io.github.vertxdedup.kafka.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real PostgreSQL server in a private cluster for tests, examples and benchmarks: {@code initdb} into a temporary
 * directory, the server on a free loopback port, stopped and the directory removed by {@link #close()}. Nothing is
 * mocked; the binaries are the machine's ({@code /usr/lib/postgresql/<major>/bin}, the newest major found, or the
 * directory named by the system property or environment variable {@code PG_BIN}). On Debian and Ubuntu
 * {@code apt-get install -y postgresql} puts them there; {@code .ci/run} does that when they are missing.
 *
 * <h2>Running as root</h2>
 * {@code initdb} and {@code postgres} refuse to run as root, and CI runs as root. Then the cluster directory (created
 * 0700 for root by {@link Files#createTempDirectory}) is handed to the unprivileged {@code postgres} user
 * ({@code chown -R}) and every server binary runs as that user through {@code runuser -u postgres --}; as any other
 * user they run directly. The socket directory sits inside the cluster directory, so no shared {@code /var/run}
 * path is needed and two clusters never meet.
 *
 * <h2>Settings</h2>
 * {@code initdb -A trust -U postgres}: loopback only, no password. The server listens on {@code 127.0.0.1} only and
 * runs with {@code fsync=off} (a test never crashes the server, only stops it cleanly, so nothing written is at
 * risk and commits cost no disk flush) and {@code max_connections=100}.
 *
 * <h2>Faults</h2>
 * {@link #stopServer()} and {@link #startServer()} stop the server (fast shutdown: clients are disconnected, every committed
 * transaction stays) and start it again on the same port and data; {@link #terminateBackends()} kills every client
 * connection ({@code pg_terminate_backend}), as a connection lost in the middle of a transaction.
 *
 * <p>Thread-safety: the methods are synchronized; they block (they run the server's binaries and wait for them), so
 * call them off the event loop.
 */
public final class LocalPostgres implements AutoCloseable {

  /** The database and the user the tests connect as. */
  public static final String DATABASE = "postgres";
  /** The superuser name given to {@code initdb}; trust authentication, no password. */
  public static final String USER = "postgres";

  private static final String SERVICE_USER = "postgres";
  private static final long COMMAND_TIMEOUT_S = 60;

  private final Path root;
  private final Path data;
  private final Path sockets;
  private final Path bin;
  private final boolean asServiceUser;
  private final int port;
  /** Extra {@code -c} settings of the server. */
  private final List<String> settings;
  private boolean running;
  private final Thread cleanup;

  private LocalPostgres(Path root, Path bin, boolean asServiceUser, int port, List<String> settings) {
    this.settings = settings;
    this.root = root;
    this.data = root.resolve("data");
    this.sockets = root.resolve("sockets");
    this.bin = bin;
    this.asServiceUser = asServiceUser;
    this.port = port;
    this.cleanup = new Thread(this::closeQuietly, "local-postgres-cleanup");
  }

  /**
   * Creates a cluster in a new temporary directory and starts its server. Takes one to three seconds.
   *
   * @return the running server
   * @throws IllegalStateException if no PostgreSQL binaries are found (the message says how to install them), or
   *     {@code initdb} or the server fails (the message carries their output)
   */
  public static LocalPostgres start() {
    return start(List.of());
  }

  /**
   * As {@link #start()}, with more server settings (e.g. {@code shared_preload_libraries=pg_stat_statements} for a
   * benchmark that counts statements).
   *
   * @param settings {@code name=value} pairs, each passed to the server as {@code -c name=value}
   * @return the running server
   * @throws IllegalArgumentException if a setting is not {@code name=value} with a plain name and no space
   * @throws IllegalStateException as {@link #start()}
   */
  public static LocalPostgres start(List<String> settings) {
    for (String s : settings) {
      if (!s.matches("[a-z_.]+=[^\\s'\"]+")) {
        throw new IllegalArgumentException("settings must be name=value without spaces or quotes but had " + s);
      }
    }
    Path bin = findBin();
    boolean root = isRoot();
    try {
      Path dir = Files.createTempDirectory("local-postgres-");
      Files.createDirectories(dir.resolve("sockets"));
      if (root) {
        run(List.of("chown", "-R", SERVICE_USER + ":", dir.toString()), "chown of the cluster directory", dir);
      }
      LocalPostgres pg = new LocalPostgres(dir, bin, root, freePort(), List.copyOf(settings));
      try {
        pg.initdb();
        pg.startServer();
      } catch (RuntimeException e) {
        pg.closeQuietly();
        throw e;
      }
      Runtime.getRuntime().addShutdownHook(pg.cleanup);
      return pg;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the cluster directory", e);
    }
  }

  /** @return the host the server listens on: {@code 127.0.0.1} */
  public String host() {
    return "127.0.0.1";
  }

  /** @return the server's TCP port on the loopback interface */
  public int port() {
    return port;
  }

  /** @return a connection URI for the Vert.x PostgreSQL client or libpq: {@code postgresql://postgres@127.0.0.1:port/postgres} */
  public String uri() {
    return "postgresql://" + USER + "@" + host() + ":" + port + "/" + DATABASE;
  }

  /** @return true while the server runs */
  public synchronized boolean running() {
    return running;
  }

  /**
   * Starts the server (again, after {@link #stopServer()}) on the same port and data, and waits until it accepts
   * connections. No-op if it runs.
   *
   * @throws IllegalStateException if it does not start (the message carries the server's log)
   */
  public synchronized void startServer() {
    if (running) {
      return;
    }
    StringBuilder serverOptions = new StringBuilder("-h 127.0.0.1 -p " + port + " -k " + sockets
        + " -c fsync=off -c max_connections=100");
    for (String setting : settings) {
      serverOptions.append(" -c ").append(setting);
    }
    try {
      pgRun(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-l",
          root.resolve("server.log").toString(), "-o", serverOptions.toString(), "-w", "-t", "60", "start"), "pg_ctl start");
    } catch (IllegalStateException e) {
      throw new IllegalStateException(e.getMessage() + "\nserver log:\n" + serverLog(), e);
    }
    running = true;
  }

  /**
   * Stops the server (fast shutdown: open transactions roll back, clients are disconnected, committed transactions
   * stay). No-op if it is stopped.
   */
  public synchronized void stopServer() {
    if (!running) {
      return;
    }
    pgRun(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-m", "fast", "-w", "-t", "60", "stop"),
        "pg_ctl stop");
    running = false;
  }

  /**
   * Terminates every client connection to the server but the one that asks ({@code pg_terminate_backend}): their
   * open transactions roll back and the clients see their connection closed.
   *
   * @return how many connections were terminated
   * @throws IllegalStateException if the server is stopped or the query fails
   */
  public synchronized int terminateBackends() {
    String out = psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
        + " WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'");
    return Integer.parseInt(out.trim());
  }

  /**
   * Runs SQL through {@code psql} (unaligned, tuples only, stops on the first error), as the superuser.
   *
   * @param sql one or more statements
   * @return what {@code psql} printed: one line per row, columns separated by {@code |}
   * @throws IllegalStateException if the server is stopped or a statement fails (the message carries psql's output)
   */
  public synchronized String psql(String sql) {
    if (!running) {
      throw new IllegalStateException("the server is stopped");
    }
    return pgRun(List.of(bin.resolve("psql").toString(), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h",
        sockets.toString(), "-p", String.valueOf(port), "-U", USER, "-d", DATABASE, "-c", sql), "psql");
  }

  /** Stops the server at once ({@code immediate}) and deletes the cluster directory. Idempotent. */
  @Override
  public synchronized void close() {
    closeQuietly();
    try {
      Runtime.getRuntime().removeShutdownHook(cleanup);
    } catch (IllegalStateException shuttingDown) {
      // Called from the hook itself, or while the JVM exits: nothing to remove.
    }
  }

  private synchronized void closeQuietly() {
    if (running) {
      try {
        pgRun(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-m", "immediate", "-w", "stop"),
            "pg_ctl stop");
      } catch (RuntimeException e) {
        // Best effort: the directory goes anyway; a server left behind dies with its data directory's lock file.
      }
      running = false;
    }
    if (Files.exists(root)) {
      try (Stream<Path> s = Files.walk(root)) {
        s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      } catch (IOException e) {
        // Best effort, as for any temporary directory.
      }
    }
  }

  // --- helpers -----------------------------------------------------------------------------------------------------

  private void initdb() {
    pgRun(List.of(bin.resolve("initdb").toString(), "-D", data.toString(), "-A", "trust", "-U", USER, "-E", "UTF8",
        "--no-sync", "--no-instructions"), "initdb");
  }

  private String serverLog() {
    try {
      return Files.readString(root.resolve("server.log"));
    } catch (IOException e) {
      return "(no server log: " + e + ")";
    }
  }

  /**
   * Runs a server binary: as the {@code postgres} user when this JVM runs as root, else directly. It runs in the
   * cluster's own directory: the JVM's working directory may be one that user cannot enter (a build under a 0700
   * temporary directory of root's), and PostgreSQL's tools then warn on every call, into the output read here.
   */
  private String pgRun(List<String> command, String what) {
    List<String> cmd = new ArrayList<>();
    if (asServiceUser) {
      cmd.addAll(List.of("runuser", "-u", SERVICE_USER, "--"));
    }
    cmd.addAll(command);
    return run(cmd, what, root);
  }

  private static String run(List<String> cmd, String what, Path workingDir) {
    try {
      Path out = Files.createTempFile("local-postgres-cmd-", ".out");
      try {
        Process p = new ProcessBuilder(cmd).directory(workingDir.toFile()).redirectErrorStream(true)
            .redirectOutput(out.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        if (!p.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS)) {
          p.destroyForcibly();
          throw new IllegalStateException(what + " did not finish within " + COMMAND_TIMEOUT_S + " s: " + cmd);
        }
        String text = Files.readString(out, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
          throw new IllegalStateException(what + " failed with exit code " + p.exitValue() + ": " + cmd + "\n" + text);
        }
        return text;
      } finally {
        Files.deleteIfExists(out);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(what + " could not run: " + cmd, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(what + " interrupted", e);
    }
  }

  /**
   * @return the directory of {@code initdb}, {@code pg_ctl} and {@code psql}: {@code PG_BIN} (system property, then
   *     environment), else the newest {@code /usr/lib/postgresql/<major>/bin} that has {@code initdb}
   */
  static Path findBin() {
    String named = System.getProperty("PG_BIN", System.getenv("PG_BIN"));
    if (named != null && !named.isBlank()) {
      Path p = Paths.get(named);
      if (!Files.isExecutable(p.resolve("initdb"))) {
        throw new IllegalStateException("PG_BIN=" + named + " has no executable initdb");
      }
      return p;
    }
    Path base = Paths.get("/usr/lib/postgresql");
    if (Files.isDirectory(base)) {
      try (Stream<Path> s = Files.list(base)) {
        Path found = s.filter(d -> d.getFileName().toString().matches("\\d+"))
            .filter(d -> Files.isExecutable(d.resolve("bin/initdb")))
            .max(Comparator.comparingInt(d -> Integer.parseInt(d.getFileName().toString())))
            .orElse(null);
        if (found != null) {
          return found.resolve("bin");
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    throw new IllegalStateException("no PostgreSQL server binaries: /usr/lib/postgresql/<major>/bin/initdb is missing"
        + " (install them with 'apt-get install -y postgresql', or set PG_BIN to the directory of initdb)");
  }

  private static boolean isRoot() {
    return "0".equals(run(List.of("id", "-u"), "id -u", Path.of("/")).trim());
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
