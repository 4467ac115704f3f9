package dev.sluice.runner;

import java.math.BigInteger;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The runner's first decoder (a full JSON tree, then the schema checks), kept in the test tree as
 * the reference the optimized {@link RecordDecoder} is compared with on generated records: both
 * must give the same row or the same {@code DECODE_*} code for every input.
 */
final class ReferenceDecoder {
  private static final BigInteger MIN = BigInteger.valueOf(Long.MIN_VALUE);
  private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

  private final List<Field> schema;
  private final Map<String, Integer> index = new HashMap<>();

  ReferenceDecoder(List<Field> schema) {
    this.schema = List.copyOf(schema);
    for (int i = 0; i < schema.size(); i++) index.put(schema.get(i).name(), i);
  }

  /** The schema this decoder checks against. */
  public List<Field> schema() {
    return schema;
  }

  /** Decodes a record value into a row (one slot per schema field; SQL NULL is Java null). */
  public Object[] decode(byte[] value) {
    Json.Parsed parsed;
    try {
      parsed = Json.parse(value);
    } catch (Json.SyntaxError e) {
      throw new DecodeException("DECODE_MALFORMED", null, e.getMessage());
    }
    if (!(parsed.value() instanceof Map<?, ?> obj)) {
      throw new DecodeException("DECODE_MALFORMED", null, "the record is not a JSON object");
    }
    Object[] row = new Object[schema.size()];
    boolean[] seen = new boolean[schema.size()];
    for (Map.Entry<String, Object> member : parsed.members()) {
      String key = member.getKey();
      Integer i = index.get(key);
      if (i != null && seen[i]) {
        throw new DecodeException("DECODE_DUPLICATE_FIELD", key, "appears twice");
      }
      if (i == null) {
        throw new DecodeException("DECODE_UNKNOWN_FIELD", key, "is not in the schema");
      }
      seen[i] = true;
      row[i] = convert(schema.get(i), member.getValue());
    }
    for (int i = 0; i < schema.size(); i++) {
      if (!seen[i]) {
        throw new DecodeException("DECODE_MISSING_FIELD", schema.get(i).name(), "is missing");
      }
    }
    return row;
  }

  private static Object convert(Field f, Object v) {
    if (v == Json.NULL) {
      if (!f.nullable()) {
        throw new DecodeException("DECODE_NULL_NOT_ALLOWED", f.name(), "is not nullable");
      }
      return null;
    }
    switch (f.type()) {
      case STRING:
        if (v instanceof String s) return s;
        break;
      case BOOLEAN:
        if (v instanceof Boolean b) return b;
        break;
      case BIGINT:
        if (v instanceof Json.Num n && n.isIntegerToken()) {
          BigInteger b = new BigInteger(n.raw());
          if (b.compareTo(MIN) < 0 || b.compareTo(MAX) > 0) {
            throw new DecodeException("DECODE_OUT_OF_RANGE", f.name(), n.raw() + " is outside BIGINT");
          }
          return b.longValueExact();
        }
        break;
      case DOUBLE:
        if (v instanceof Json.Num n) {
          double d = Double.parseDouble(n.raw());
          if (Double.isInfinite(d)) {
            throw new DecodeException("DECODE_OUT_OF_RANGE", f.name(), n.raw() + " overflows DOUBLE");
          }
          return d;
        }
        break;
      default:
        break;
    }
    throw new DecodeException("DECODE_WRONG_TYPE", f.name(), "expects " + f.type() + ", got " + jsonType(v));
  }

  private static String jsonType(Object v) {
    if (v instanceof String) return "a string";
    if (v instanceof Boolean) return "a boolean";
    if (v instanceof Json.Num n) return n.isIntegerToken() ? "an integer" : "a non-integer number";
    if (v instanceof Map) return "an object";
    if (v instanceof List) return "an array";
    return "null";
  }
}
