package dev.sluice.runner;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Writes the output record: a JSON object with the projected columns in SELECT order. STRING is
 * escaped as JSON.stringify does, BIGINT is written as an exact integer (never through a
 * double), DOUBLE as JavaScript prints it, BOOLEAN as true/false, SQL NULL as null. The bytes are
 * written directly (UTF-8), with each column's {@code "name":} prefix encoded once.
 */
public final class Projection {
  /** One output column: the schema index of its source and its output name. */
  public record Column(int source, String name) {}

  private static final byte[] NULL = "null".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] TRUE = "true".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] FALSE = "false".getBytes(StandardCharsets.US_ASCII);

  private final List<Column> columns;
  private final int[] sources;
  /** {@code {"name":} for the first column, {@code ,"name":} for the others. */
  private final byte[][] prefixes;

  public Projection(List<Column> columns) {
    this.columns = List.copyOf(columns);
    this.sources = new int[columns.size()];
    this.prefixes = new byte[columns.size()][];
    for (int i = 0; i < columns.size(); i++) {
      sources[i] = columns.get(i).source();
      StringBuilder b = new StringBuilder(i == 0 ? "{" : ",");
      Json.writeString(b, columns.get(i).name());
      prefixes[i] = b.append(':').toString().getBytes(StandardCharsets.UTF_8);
    }
  }

  /** The output columns. */
  public List<Column> columns() {
    return columns;
  }

  /** The output value bytes for a decoded row. */
  public byte[] project(Object[] row) {
    Out out = new Out();
    if (sources.length == 0) out.ascii("{");
    for (int i = 0; i < sources.length; i++) {
      out.bytes(prefixes[i]);
      Object v = row[sources[i]];
      if (v == null) out.bytes(NULL);
      else if (v instanceof String s) out.string(s);
      else if (v instanceof Long l) out.ascii(Long.toString(l));
      else if (v instanceof Boolean b) out.bytes(b ? TRUE : FALSE);
      else if (v instanceof Double d) out.ascii(Values.jsNumber(d));
      else throw new IllegalStateException("not a runtime value: " + v.getClass());
    }
    out.ascii("}");
    return out.result();
  }

  /** A growable UTF-8 buffer. */
  private static final class Out {
    private byte[] buf = new byte[96];
    private int len;

    private void room(int more) {
      if (len + more > buf.length) buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + more));
    }

    void bytes(byte[] b) {
      room(b.length);
      System.arraycopy(b, 0, buf, len, b.length);
      len += b.length;
    }

    void ascii(String s) {
      room(s.length());
      for (int i = 0; i < s.length(); i++) buf[len++] = (byte) s.charAt(i);
    }

    /** A JSON string as (well-formed) JSON.stringify writes it, encoded as UTF-8. */
    void string(String s) {
      room(s.length() + 2);
      buf[len++] = '"';
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
          room(1);
          buf[len++] = (byte) c;
          continue;
        }
        switch (c) {
          case '"' -> ascii("\\\"");
          case '\\' -> ascii("\\\\");
          case '\b' -> ascii("\\b");
          case '\f' -> ascii("\\f");
          case '\n' -> ascii("\\n");
          case '\r' -> ascii("\\r");
          case '\t' -> ascii("\\t");
          default -> {
            if (c < 0x20) {
              escapeU(c);
            } else if (Character.isHighSurrogate(c)) {
              if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                bytes(s.substring(i, i + 2).getBytes(StandardCharsets.UTF_8));
                i++;
              } else {
                escapeU(c); // lone surrogate
              }
            } else if (Character.isLowSurrogate(c)) {
              escapeU(c); // lone surrogate
            } else {
              bytes(String.valueOf(c).getBytes(StandardCharsets.UTF_8));
            }
          }
        }
      }
      room(1);
      buf[len++] = '"';
    }

    private void escapeU(char c) {
      String h = Integer.toHexString(c);
      ascii("\\u" + "0000".substring(h.length()) + h);
    }

    byte[] result() {
      return Arrays.copyOf(buf, len);
    }
  }
}
