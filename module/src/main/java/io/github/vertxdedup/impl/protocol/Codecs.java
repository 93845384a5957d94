package io.github.vertxdedup.impl.protocol;

import io.github.vertxdedup.DedupLookup;
import io.github.vertxdedup.DedupResult;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageCodec;

/**
 * The local codecs of the service: requests and replies passed by reference between a
 * {@link io.github.vertxdedup.DedupClient} and the partitions in the same JVM, with no JSON. They cannot cross a
 * cluster (JSON is the wire form there), so they refuse to encode to the wire.
 */
public final class Codecs {

  private Codecs() {}

  /**
   * Registers the local codecs as the default codecs of their types on the Vert.x event bus, unless they already
   * are. Safe to call from any thread, any number of times.
   *
   * @param vertx the Vert.x instance
   */
  public static void register(Vertx vertx) {
    EventBus bus = vertx.eventBus();
    register(bus, LocalRequest.class);
    register(bus, DedupResult.class);
    register(bus, DedupLookup.class);
    register(bus, BatchReply.class);
    register(bus, CommitBatchReply.class);
  }

  private static <T> void register(EventBus bus, Class<T> type) {
    try {
      bus.registerDefaultCodec(type, new LocalCodec<>("vertx-dedup-local-" + type.getSimpleName()));
    } catch (IllegalStateException alreadyRegistered) {
      // Registered by another verticle or client of this Vert.x instance: the same codec, nothing to do.
    }
  }

  /** Passes the object itself; refuses the wire. Stateless and thread-safe. */
  private static final class LocalCodec<T> implements MessageCodec<T, T> {

    private final String name;

    LocalCodec(String name) {
      this.name = name;
    }

    @Override
    public void encodeToWire(Buffer buffer, T t) {
      throw new IllegalStateException(name + " is a local codec and cannot cross a cluster: send JSON bodies");
    }

    @Override
    public T decodeFromWire(int pos, Buffer buffer) {
      throw new IllegalStateException(name + " is a local codec and cannot cross a cluster: send JSON bodies");
    }

    @Override
    public T transform(T t) {
      return t;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public byte systemCodecID() {
      return -1;
    }
  }
}
