package dev.sluice.runner;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Writes the output record: a JSON object with the projected columns in SELECT order. STRING is
 * escaped as JSON.stringify does, BIGINT is written as an exact integer (never through a
 * double), DOUBLE as JavaScript prints it, BOOLEAN as true/false, SQL NULL as null.
 */
public final class Projection {
  /** One output column: the schema index of its source and its output name. */
  public record Column(int source, String name) {}

  private final List<Column> columns;

  public Projection(List<Column> columns) {
    this.columns = List.copyOf(columns);
  }

  /** The output value bytes for a decoded row. */
  public byte[] project(Object[] row) {
    StringBuilder b = new StringBuilder();
    b.append('{');
    for (int i = 0; i < columns.size(); i++) {
      if (i > 0) b.append(',');
      Column c = columns.get(i);
      Json.writeString(b, c.name());
      b.append(':');
      Object v = row[c.source()];
      if (v == null) b.append("null");
      else if (v instanceof String s) Json.writeString(b, s);
      else if (v instanceof Double d) b.append(Values.jsNumber(d));
      else b.append(v); // Long, Boolean
    }
    b.append('}');
    return b.toString().getBytes(StandardCharsets.UTF_8);
  }
}
