package io.github.vertxdedup.benchmarks.window;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import java.io.IOException;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jol.info.GraphStats;

/**
 * Measures the heap footprint of each {@link Contender} after the reference workload's whole 10 M-event run (the window
 * in steady state, holding about 5.4 M ids) and writes it as JSON for {@link WindowReport}.
 *
 * <p>Two measures per structure: the size of the object graph reachable from it, walked by JOL
 * ({@code GraphStats.parseInstance(root).totalSize()}, which totals what {@code GraphLayout} would without keeping a
 * record per object; the primary figure: exact and independent of GC timing), and,
 * as a cross-check, the growth of used heap across the run, each side read after {@code System.gc()}. Both divided
 * by the ids the structure says it holds. Run it with the benchmark's heap settings ({@code -Xmx8g
 * -XX:+UseParallelGC}), so that object layout (compressed references) is the same.
 *
 * <p>Usage: {@code WindowFootprint [out.json]}, default {@code window-footprint.json}. Takes about a minute (JOL walks
 * some 16 M objects for the boxed structures).
 */
public final class WindowFootprint {

  /**
   * Footprint of one structure.
   *
   * @param contender the contender's key
   * @param heldIds ids held at the end of the run
   * @param jolBytes bytes reachable from the structure (JOL)
   * @param jolObjects objects reachable from the structure (JOL)
   * @param heapDeltaBytes used heap after the run minus before it, both after {@code System.gc()}
   */
  public record Footprint(String contender, long heldIds, long jolBytes, long jolObjects, long heapDeltaBytes) {

    /** @return JOL bytes per held id */
    public double jolBytesPerId() {
      return (double) jolBytes / heldIds;
    }

    /** @return heap-delta bytes per held id */
    public double heapDeltaBytesPerId() {
      return (double) heapDeltaBytes / heldIds;
    }
  }

  private WindowFootprint() {}

  /**
   * Measures every contender and writes the JSON file.
   *
   * @param args optional: the output file
   * @throws IOException if the file cannot be written
   */
  public static void main(String[] args) throws IOException {
    Path out = Path.of(args.length > 0 ? args[0] : "window-footprint.json");
    EventStream stream = EventStream.generate(Workload.SEED);
    List<Footprint> results = new ArrayList<>();
    for (Contender c : Contender.values()) {
      long startNs = System.nanoTime();
      Footprint f = measure(c, stream);
      System.out.printf("%-20s held %,d ids, JOL %,d B (%.1f B/id) in %,d objects, heap delta %,d B (%.1f B/id),"
          + " took %.0f s%n", c.key(), f.heldIds(), f.jolBytes(), f.jolBytesPerId(), f.jolObjects(),
          f.heapDeltaBytes(), f.heapDeltaBytesPerId(),
          (System.nanoTime() - startNs) / 1e9);
      results.add(f);
    }
    Gson gson = new GsonBuilder().setPrettyPrinting().create();
    try (Writer w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
      gson.toJson(results, w);
    }
    System.out.println("wrote " + out);
  }

  /**
   * Runs the stream through a fresh structure and measures it.
   *
   * @param contender which structure
   * @param stream the events
   * @return the footprint
   * @throws IllegalStateException if the structure's verdicts differ from the expected ones
   */
  static Footprint measure(Contender contender, EventStream stream) {
    long before = usedHeapAfterGc();
    SimulatedClock clock = new SimulatedClock(EventStream.START_MS);
    DedupContender structure = contender.create(stream.workload(), clock);
    long accepted = Contender.run(stream, structure, clock);
    if (accepted != stream.expectedAccepted()) {
      throw new IllegalStateException(contender.key() + " accepted " + accepted + " events but must accept "
          + stream.expectedAccepted());
    }
    long held = structure.held();
    long after = usedHeapAfterGc();
    GraphStats graph = GraphStats.parseInstance(structure.footprintRoot());
    long jol = graph.totalSize();
    long objects = graph.totalCount();
    // Keeps the structure reachable until after both measurements.
    if (structure.held() != held) {
      throw new IllegalStateException(contender.key() + " changed while being measured");
    }
    return new Footprint(contender.key(), held, jol, objects, after - before);
  }

  private static long usedHeapAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
