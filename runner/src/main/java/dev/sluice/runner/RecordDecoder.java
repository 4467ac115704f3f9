package dev.sluice.runner;

import java.math.BigInteger;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Strict decoding of one input record against the declared schema (docs/artifact-format.md,
 * "Strict record decoding"). Checks run in a fixed order so that a record with several faults
 * always gets the same code on both implementations:
 *
 * <ol>
 *   <li>not UTF-8 / not JSON / not an object / trailing data → {@code DECODE_MALFORMED};
 *   <li>then each top-level member in document order: a key seen before →
 *       {@code DECODE_DUPLICATE_FIELD}, a key not in the schema → {@code DECODE_UNKNOWN_FIELD},
 *       null but not nullable → {@code DECODE_NULL_NOT_ALLOWED}, wrong JSON type →
 *       {@code DECODE_WRONG_TYPE}, BIGINT outside 64 bits or DOUBLE overflowing to infinity →
 *       {@code DECODE_OUT_OF_RANGE};
 *   <li>then the first schema field (declaration order) that was absent →
 *       {@code DECODE_MISSING_FIELD}.
 * </ol>
 * This is the order of lib/expr/decode.ts. Only top-level keys count as fields: a nested object
 * is a wrong type for every field, whatever its keys.
 */
public final class RecordDecoder {
  private static final BigInteger MIN = BigInteger.valueOf(Long.MIN_VALUE);
  private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

  private final List<Field> schema;
  private final Map<String, Integer> index = new HashMap<>();

  public RecordDecoder(List<Field> schema) {
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
      throw new DecodeException("DECODE_MALFORMED", e.getMessage());
    }
    if (!(parsed.value() instanceof Map<?, ?> obj)) {
      throw new DecodeException("DECODE_MALFORMED", "the record is not a JSON object");
    }
    Object[] row = new Object[schema.size()];
    boolean[] seen = new boolean[schema.size()];
    for (Map.Entry<String, Object> member : parsed.members()) {
      String key = member.getKey();
      Integer i = index.get(key);
      if (i != null && seen[i]) {
        throw new DecodeException("DECODE_DUPLICATE_FIELD", "field '" + key + "' appears twice");
      }
      if (i == null) {
        throw new DecodeException("DECODE_UNKNOWN_FIELD", "field '" + key + "' is not in the schema");
      }
      seen[i] = true;
      row[i] = convert(schema.get(i), member.getValue());
    }
    for (int i = 0; i < schema.size(); i++) {
      if (!seen[i]) {
        throw new DecodeException("DECODE_MISSING_FIELD", "declared field '" + schema.get(i).name() + "' is missing");
      }
    }
    return row;
  }

  private static Object convert(Field f, Object v) {
    if (v == Json.NULL) {
      if (!f.nullable()) {
        throw new DecodeException("DECODE_NULL_NOT_ALLOWED", "field '" + f.name() + "' is not nullable");
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
            throw new DecodeException("DECODE_OUT_OF_RANGE", "field '" + f.name() + "': " + n.raw() + " is outside BIGINT");
          }
          return b.longValueExact();
        }
        break;
      case DOUBLE:
        if (v instanceof Json.Num n) {
          double d = Double.parseDouble(n.raw());
          if (Double.isInfinite(d)) {
            throw new DecodeException("DECODE_OUT_OF_RANGE", "field '" + f.name() + "': " + n.raw() + " overflows DOUBLE");
          }
          return d;
        }
        break;
      default:
        break;
    }
    throw new DecodeException("DECODE_WRONG_TYPE", "field '" + f.name() + "' expects " + f.type() + ", got " + jsonType(v));
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
