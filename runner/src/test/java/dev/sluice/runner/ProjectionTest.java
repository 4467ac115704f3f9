package dev.sluice.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The byte-writing projection against the first (string-building) one, on generated rows. */
class ProjectionTest {
  private static final String[] STRINGS = {
      "", "plain", "quote\"back\\slash", "ctl\u0000\u001f\b\f\n\r\t", "é", "日本", "😀", "\ud800", "\udc00x",
      "a\ud83d", "\u007f\u0080\u07ff\u0800\uffff", "/"};

  /** The runner's first projection: a StringBuilder, then UTF-8 bytes. */
  private static byte[] reference(List<Projection.Column> columns, Object[] row) {
    StringBuilder b = new StringBuilder("{");
    for (int i = 0; i < columns.size(); i++) {
      if (i > 0) b.append(',');
      Json.writeString(b, columns.get(i).name());
      b.append(':');
      Object v = row[columns.get(i).source()];
      if (v == null) b.append("null");
      else if (v instanceof String s) Json.writeString(b, s);
      else if (v instanceof Double d) b.append(Values.jsNumber(d));
      else b.append(v);
    }
    return b.append('}').toString().getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void writesTheSameBytesAsTheStringBuildingProjection() {
    List<Projection.Column> columns = List.of(new Projection.Column(0, "s"), new Projection.Column(1, "n\u00e9"),
        new Projection.Column(2, "b"), new Projection.Column(3, "d\"q"), new Projection.Column(0, "again"));
    Projection p = new Projection(columns);
    Random r = new Random(7);
    for (int i = 0; i < 5000; i++) {
      StringBuilder s = new StringBuilder();
      for (int k = r.nextInt(4); k > 0; k--) s.append(STRINGS[r.nextInt(STRINGS.length)]);
      Object[] row = {
          r.nextInt(8) == 0 ? null : s.toString(),
          r.nextInt(8) == 0 ? null : (Object) (r.nextLong() >> r.nextInt(64)),
          r.nextInt(8) == 0 ? null : (Object) r.nextBoolean(),
          r.nextInt(8) == 0 ? null : (Object) (r.nextBoolean() ? r.nextDouble() * Math.pow(10, r.nextInt(40) - 20) : -0.0)};
      assertEquals(new String(reference(columns, row), StandardCharsets.UTF_8),
          new String(p.project(row), StandardCharsets.UTF_8));
      assertEquals(java.util.Arrays.toString(reference(columns, row)), java.util.Arrays.toString(p.project(row)));
    }
  }
}
