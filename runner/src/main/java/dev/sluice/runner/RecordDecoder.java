package dev.sluice.runner;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

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
 *
 * <p>The record is read once, from its bytes, straight into the row: no JSON tree, no decoded
 * copy of the whole text (the JDK Flight Recorder profile of the throughput bench showed the
 * tree and the copies as the runner's own share of allocation, and the young collections they
 * cause; docs/runner.md, "Throughput"). A syntax error anywhere wins over a member error, so the
 * first member error is kept and thrown only once the whole record has parsed. Messages name
 * fields and rules, never a value of the record.
 */
public final class RecordDecoder {
  private static final int MAX_DEPTH = 256;
  private static final RecordDecoder EMPTY = new RecordDecoder(List.of());

  private final List<Field> schema;
  private final byte[][] names;

  public RecordDecoder(List<Field> schema) {
    this.schema = List.copyOf(schema);
    this.names = new byte[schema.size()][];
    for (int i = 0; i < schema.size(); i++) names[i] = schema.get(i).name().getBytes(StandardCharsets.UTF_8);
  }

  /** The schema this decoder checks against. */
  public List<Field> schema() {
    return schema;
  }

  /** Decodes a record value into a row (one slot per schema field; SQL NULL is Java null). */
  public Object[] decode(byte[] value) {
    return new Parse(this, value).record();
  }

  /**
   * The top-level field names of a record in document order (each once), as far as it parses:
   * what an error report may show of a record besides its size. Never throws.
   */
  public static List<String> fieldNames(byte[] value) {
    return Parse.names(value);
  }

  /** A syntax error: the record is malformed whatever else is wrong with it. */
  private static final class Malformed extends Exception {
    Malformed(String message) {
      super(message, null, false, false);
    }
  }

  private static final class Parse {
    final List<Field> schema;
    final byte[][] names;
    final byte[] b;
    final int n;
    int pos;
    Object[] row;
    boolean[] seen;
    DecodeException first;

    Parse(RecordDecoder d, byte[] b) {
      this.schema = d.schema;
      this.names = d.names;
      this.b = b;
      this.n = b.length;
    }

    Object[] record() {
      try {
        skipWs();
        if (pos < n && b[pos] == '{') {
          object();
        } else {
          skipValue(0);
          end();
          throw new DecodeException("DECODE_MALFORMED", null, "the record is not a JSON object");
        }
        end();
      } catch (Malformed e) {
        throw new DecodeException("DECODE_MALFORMED", null, e.getMessage());
      }
      if (first != null) throw first;
      for (int i = 0; i < schema.size(); i++) {
        if (!seen[i]) {
          throw new DecodeException("DECODE_MISSING_FIELD", schema.get(i).name(), "a declared field is missing");
        }
      }
      return row;
    }

    void end() throws Malformed {
      skipWs();
      if (pos != n) throw error("unexpected data after the JSON value");
    }

    void object() throws Malformed {
      row = new Object[schema.size()];
      seen = new boolean[schema.size()];
      pos++; // {
      skipWs();
      if (pos < n && b[pos] == '}') {
        pos++;
        return;
      }
      while (true) {
        skipWs();
        if (pos >= n || b[pos] != '"') throw error("expected a string key");
        int keyStart = pos;
        int i = key();
        skipWs();
        if (pos >= n || b[pos] != ':') throw error("expected ':'");
        pos++;
        skipWs();
        if (first == null && i >= 0 && seen[i]) {
          first = new DecodeException("DECODE_DUPLICATE_FIELD", schema.get(i).name(), "the field appears twice");
        } else if (first == null && i < 0) {
          first = new DecodeException("DECODE_UNKNOWN_FIELD", keyText(keyStart), "the field is not in the schema");
        }
        if (first == null) {
          seen[i] = true;
          row[i] = field(schema.get(i));
        } else {
          skipValue(1);
        }
        skipWs();
        if (pos >= n) throw error("unexpected end of input in object");
        byte c = b[pos++];
        if (c == '}') return;
        if (c != ',') throw error("expected ',' or '}'");
      }
    }

    /** Reads a key; returns its schema index or -1. */
    int key() throws Malformed {
      int start = pos + 1;
      boolean plain = scanString();
      if (plain) {
        int len = pos - 1 - start;
        for (int i = 0; i < names.length; i++) {
          byte[] name = names[i];
          if (name.length == len && java.util.Arrays.equals(b, start, start + len, name, 0, len)) return i;
        }
        return -1;
      }
      String k = decodeString(start - 1);
      for (int i = 0; i < schema.size(); i++) if (schema.get(i).name().equals(k)) return i;
      return -1;
    }

    String keyText(int keyStart) throws Malformed {
      return decodeString(keyStart);
    }

    /** Reads the value of a schema field (syntax errors throw; member errors are kept). */
    Object field(Field f) throws Malformed {
      if (pos >= n) throw error("unexpected end of input");
      byte c = b[pos];
      if (c == 'n') {
        literal("null");
        if (!f.nullable()) keep(new DecodeException("DECODE_NULL_NOT_ALLOWED", f.name(), "the field is not nullable"));
        return null;
      }
      switch (f.type()) {
        case STRING:
          if (c == '"') {
            int start = pos;
            if (scanString()) return new String(b, start + 1, pos - start - 2, asciiOnly(start + 1, pos - 1)
                ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8);
            return decodeString(start);
          }
          break;
        case BOOLEAN:
          if (c == 't') {
            literal("true");
            return Boolean.TRUE;
          }
          if (c == 'f') {
            literal("false");
            return Boolean.FALSE;
          }
          break;
        case BIGINT:
          if (c == '-' || (c >= '0' && c <= '9')) return bigint(f);
          break;
        case DOUBLE:
          if (c == '-' || (c >= '0' && c <= '9')) {
            int start = pos;
            number();
            double d = Double.parseDouble(new String(b, start, pos - start, StandardCharsets.ISO_8859_1));
            if (Double.isInfinite(d)) {
              keep(new DecodeException("DECODE_OUT_OF_RANGE", f.name(), "the number overflows DOUBLE"));
            }
            return d;
          }
          break;
        default:
          break;
      }
      String got = jsonType(c);
      skipValue(1);
      if (got.equals("a number")) got = lastNumberWasInteger ? "an integer" : "a non-integer number";
      keep(new DecodeException("DECODE_WRONG_TYPE", f.name(), "the field expects " + f.type() + ", got " + got));
      return null;
    }

    void keep(DecodeException e) {
      if (first == null) first = e;
    }

    /** A BIGINT: an integer token within 64 bits (accumulated negatively, so MIN fits). */
    Object bigint(Field f) throws Malformed {
      int start = pos;
      boolean integer = number();
      if (!integer) {
        keep(new DecodeException("DECODE_WRONG_TYPE", f.name(), "the field expects BIGINT, got a non-integer number"));
        return null;
      }
      boolean negative = b[start] == '-';
      long acc = 0;
      for (int i = negative ? start + 1 : start; i < pos; i++) {
        int d = b[i] - '0';
        if (acc < (Long.MIN_VALUE + d) / 10) {
          keep(new DecodeException("DECODE_OUT_OF_RANGE", f.name(), "the number is outside BIGINT (64-bit)"));
          return null;
        }
        acc = acc * 10 - d;
      }
      if (!negative) {
        if (acc == Long.MIN_VALUE) {
          keep(new DecodeException("DECODE_OUT_OF_RANGE", f.name(), "the number is outside BIGINT (64-bit)"));
          return null;
        }
        acc = -acc;
      }
      return acc;
    }

    // ---- syntax (RFC 8259, as JSON.parse accepts it) -----------------------------------------

    boolean lastNumberWasInteger;

    Malformed error(String what) {
      return new Malformed(what + " at offset " + pos);
    }

    void skipWs() {
      while (pos < n) {
        byte c = b[pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') pos++;
        else break;
      }
    }

    void literal(String word) throws Malformed {
      int len = word.length();
      if (pos + len > n) throw error("invalid literal");
      for (int i = 0; i < len; i++) {
        if (b[pos + i] != word.charAt(i)) throw error("invalid literal");
      }
      pos += len;
    }

    void skipValue(int depth) throws Malformed {
      if (depth > MAX_DEPTH) throw error("nesting deeper than " + MAX_DEPTH);
      if (pos >= n) throw error("unexpected end of input");
      byte c = b[pos];
      switch (c) {
        case '{' -> {
          pos++;
          skipWs();
          if (pos < n && b[pos] == '}') {
            pos++;
            return;
          }
          while (true) {
            skipWs();
            if (pos >= n || b[pos] != '"') throw error("expected a string key");
            scanString();
            skipWs();
            if (pos >= n || b[pos] != ':') throw error("expected ':'");
            pos++;
            skipWs();
            skipValue(depth + 1);
            skipWs();
            if (pos >= n) throw error("unexpected end of input in object");
            byte e = b[pos++];
            if (e == '}') return;
            if (e != ',') throw error("expected ',' or '}'");
          }
        }
        case '[' -> {
          pos++;
          skipWs();
          if (pos < n && b[pos] == ']') {
            pos++;
            return;
          }
          while (true) {
            skipWs();
            skipValue(depth + 1);
            skipWs();
            if (pos >= n) throw error("unexpected end of input in array");
            byte e = b[pos++];
            if (e == ']') return;
            if (e != ',') throw error("expected ',' or ']'");
          }
        }
        case '"' -> scanString();
        case 't' -> literal("true");
        case 'f' -> literal("false");
        case 'n' -> literal("null");
        default -> {
          if (c == '-' || (c >= '0' && c <= '9')) number();
          else throw error("unexpected character");
        }
      }
    }

    /** Scans a number token; returns true when it has no fraction and no exponent. */
    boolean number() throws Malformed {
      boolean integer = true;
      if (b[pos] == '-') pos++;
      if (pos >= n) throw error("truncated number");
      byte c = b[pos];
      if (c == '0') {
        pos++;
      } else if (c >= '1' && c <= '9') {
        while (pos < n && isDigit(b[pos])) pos++;
      } else {
        throw error("invalid number");
      }
      if (pos < n && b[pos] == '.') {
        integer = false;
        pos++;
        int d = pos;
        while (pos < n && isDigit(b[pos])) pos++;
        if (pos == d) throw error("digit expected after '.'");
      }
      if (pos < n && (b[pos] == 'e' || b[pos] == 'E')) {
        integer = false;
        pos++;
        if (pos < n && (b[pos] == '+' || b[pos] == '-')) pos++;
        int d = pos;
        while (pos < n && isDigit(b[pos])) pos++;
        if (pos == d) throw error("digit expected in exponent");
      }
      lastNumberWasInteger = integer;
      return integer;
    }

    /**
     * Scans a string token from its opening quote to after its closing quote, checking escapes
     * and strict UTF-8 (no overlong forms, no encoded surrogates, nothing above U+10FFFF).
     * Returns true when it holds no escape (its bytes are its text).
     */
    boolean scanString() throws Malformed {
      pos++; // opening quote
      boolean plain = true;
      while (true) {
        if (pos >= n) throw error("unterminated string");
        int c = b[pos] & 0xff;
        if (c == '"') {
          pos++;
          return plain;
        }
        if (c < 0x20) throw error("unescaped control character in string");
        if (c == '\\') {
          plain = false;
          pos++;
          if (pos >= n) throw error("unterminated escape");
          byte e = b[pos++];
          switch (e) {
            case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> { }
            case 'u' -> {
              if (pos + 4 > n) throw error("truncated \\u escape");
              for (int i = 0; i < 4; i++) {
                if (Character.digit(b[pos + i], 16) < 0) throw error("invalid \\u escape");
              }
              pos += 4;
            }
            default -> throw error("invalid escape");
          }
        } else if (c < 0x80) {
          pos++;
        } else {
          pos += utf8Length(pos);
        }
      }
    }

    /** Length of the valid UTF-8 sequence at {@code i}, or a syntax error (invalid UTF-8). */
    int utf8Length(int i) throws Malformed {
      int c = b[i] & 0xff;
      int len;
      int lo = 0x80;
      int hi = 0xbf;
      if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
      } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
      } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
      } else {
        throw new Malformed("invalid UTF-8");
      }
      if (i + len > n) throw new Malformed("invalid UTF-8");
      int second = b[i + 1] & 0xff;
      if (second < lo || second > hi) throw new Malformed("invalid UTF-8");
      for (int k = 2; k < len; k++) {
        int x = b[i + k] & 0xff;
        if (x < 0x80 || x > 0xbf) throw new Malformed("invalid UTF-8");
      }
      return len;
    }

    boolean asciiOnly(int from, int to) {
      for (int i = from; i < to; i++) if (b[i] < 0) return false;
      return true;
    }

    /** Decodes an (already scanned) string token starting at its opening quote. */
    String decodeString(int quote) throws Malformed {
      int saved = pos;
      pos = quote + 1;
      StringBuilder s = new StringBuilder();
      while (true) {
        int c = b[pos] & 0xff;
        if (c == '"') break;
        if (c == '\\') {
          byte e = b[pos + 1];
          pos += 2;
          switch (e) {
            case '"' -> s.append('"');
            case '\\' -> s.append('\\');
            case '/' -> s.append('/');
            case 'b' -> s.append('\b');
            case 'f' -> s.append('\f');
            case 'n' -> s.append('\n');
            case 'r' -> s.append('\r');
            case 't' -> s.append('\t');
            default -> { // 'u', checked by scanString
              s.append((char) Integer.parseInt(new String(b, pos, 4, StandardCharsets.ISO_8859_1), 16));
              pos += 4;
            }
          }
        } else if (c < 0x80) {
          s.append((char) c);
          pos++;
        } else {
          int len = utf8Length(pos);
          s.append(new String(b, pos, len, StandardCharsets.UTF_8));
          pos += len;
        }
      }
      pos = saved;
      return s.toString();
    }

    String jsonType(byte c) {
      return switch (c) {
        case '"' -> "a string";
        case 't', 'f' -> "a boolean";
        case '{' -> "an object";
        case '[' -> "an array";
        default -> "a number";
      };
    }

    static boolean isDigit(byte c) {
      return c >= '0' && c <= '9';
    }

    /** Top-level keys in document order (each once) as far as the record parses. */
    static List<String> names(byte[] value) {
      List<String> out = new ArrayList<>();
      Parse p = new Parse(EMPTY, value);
      try {
        p.skipWs();
        if (p.pos >= p.n || p.b[p.pos] != '{') return out;
        p.pos++;
        p.skipWs();
        if (p.pos < p.n && p.b[p.pos] == '}') return out;
        while (true) {
          p.skipWs();
          if (p.pos >= p.n || p.b[p.pos] != '"') return out;
          int start = p.pos;
          p.scanString();
          String k = p.decodeString(start);
          if (!out.contains(k)) out.add(k);
          p.skipWs();
          if (p.pos >= p.n || p.b[p.pos] != ':') return out;
          p.pos++;
          p.skipWs();
          p.skipValue(1);
          p.skipWs();
          if (p.pos >= p.n || p.b[p.pos++] != ',') return out;
        }
      } catch (Malformed | RuntimeException e) {
        return out;
      }
    }
  }
}
