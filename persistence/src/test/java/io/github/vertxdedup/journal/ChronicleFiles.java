package io.github.vertxdedup.journal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Reads Chronicle's excerpt framing in a closed cycle file, for tests that damage files on purpose: each excerpt is
 * a 4-byte little-endian header (bit 31 "not complete", bit 30 "metadata", 30 bits of length) at a 4-byte aligned
 * position, followed by its bytes; a zero header ends the data.
 */
final class ChronicleFiles {

  static final int NOT_COMPLETE = 0x8000_0000;
  static final int META_DATA = 0x4000_0000;
  static final int LENGTH_MASK = 0x3FFF_FFFF;

  /** One excerpt: where its header is, the header word, its length. */
  record Excerpt(long position, int header, int length) {
    boolean isData() {
      return (header & (META_DATA | NOT_COMPLETE)) == 0;
    }

    long end() {
      return position + 4 + length;
    }
  }

  private ChronicleFiles() {
  }

  static List<Path> cycleFiles(Path dir) {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(".cq4"))
          .sorted(Comparator.comparing(Path::toString)).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Path newestCycleFile(Path dir) {
    List<Path> files = cycleFiles(dir);
    return files.get(files.size() - 1);
  }

  static List<Excerpt> excerpts(Path file) {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
      map.order(ByteOrder.LITTLE_ENDIAN);
      List<Excerpt> list = new ArrayList<>();
      long pos = 0;
      while (pos + 4 <= ch.size()) {
        int header = map.getInt((int) pos);
        if (header == 0 || header == (NOT_COMPLETE | META_DATA)) {
          break;
        }
        int length = header & LENGTH_MASK;
        list.add(new Excerpt(pos, header, length));
        pos = (pos + 4 + length + 3) & ~3L;
      }
      return list;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Excerpt lastData(Path file) {
    List<Excerpt> all = excerpts(file);
    for (int i = all.size() - 1; i >= 0; i--) {
      if (all.get(i).isData()) {
        return all.get(i);
      }
    }
    throw new IllegalStateException("no data excerpt in " + file);
  }

  /** The position after the last excerpt: the start of the zeroed, pre-allocated space. */
  static long endOfData(Path file) {
    List<Excerpt> all = excerpts(file);
    return (all.get(all.size() - 1).end() + 3) & ~3L;
  }

  static void writeAt(Path file, long position, byte[] bytes) {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.write(java.nio.ByteBuffer.wrap(bytes), position);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static void truncate(Path file, long size) {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.truncate(size);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Position of the first occurrence of {@code value} as 8 little-endian bytes, at or after {@code from}. */
  static long find(Path file, long value, long from) {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, Math.min(ch.size(), 16 << 20));
      map.order(ByteOrder.LITTLE_ENDIAN);
      for (int p = (int) from; p + 8 <= map.limit(); p++) {
        if (map.getLong(p) == value) {
          return p;
        }
      }
      return -1;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static byte[] intLe(int v) {
    return new byte[] {(byte) v, (byte) (v >>> 8), (byte) (v >>> 16), (byte) (v >>> 24)};
  }
}
