package dev.sluice.runner;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * A small strict JSON reader and the canonical JSON writer of docs/artifact-format.md.
 *
 * <p>Values are {@link Map} (insertion-ordered), {@link List}, {@link String}, {@link Boolean},
 * {@link Num} (the number token kept verbatim, so BIGINT never passes through a double) and
 * {@link #NULL}. The reader accepts exactly RFC 8259 (as JavaScript's {@code JSON.parse} does):
 * no BOM, no comments, no trailing commas, no NaN; invalid UTF-8 is malformed. Duplicate keys
 * are not a syntax error but are reported separately ({@link Parsed#duplicateKey}), so a caller
 * can give them their own stable code after the whole text was checked for syntax.
 */
public final class Json {
  private Json() {}

  /** The JSON {@code null} (Java {@code null} never appears in a parsed tree). */
  public static final Object NULL = new Object() {
    @Override
    public String toString() {
      return "null";
    }
  };

  /** A JSON number token, verbatim. */
  public record Num(String raw) {
    private static final Pattern INTEGER = Pattern.compile("-?(0|[1-9][0-9]*)");

    /** True when the token has no fraction and no exponent. */
    public boolean isIntegerToken() {
      return INTEGER.matcher(raw).matches();
    }

    @Override
    public String toString() {
      return raw;
    }
  }

  /** A syntax error: the text is not one JSON value. */
  public static final class SyntaxError extends Exception {
    SyntaxError(String message) {
      super(message);
    }
  }

  /**
   * The result of parsing: the value, the first duplicate key seen at any depth (or null), and,
   * when the document is an object, its members in document order including repeated keys.
   */
  public record Parsed(Object value, String duplicateKey, List<Map.Entry<String, Object>> members) {}

  /** Decodes strict UTF-8 (malformed or unmappable input is an error, never replaced). */
  public static String utf8(byte[] bytes) throws SyntaxError {
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new SyntaxError("invalid UTF-8");
    }
  }

  /** Parses UTF-8 bytes holding exactly one JSON value (surrounding whitespace allowed). */
  public static Parsed parse(byte[] bytes) throws SyntaxError {
    return parse(utf8(bytes));
  }

  /** Parses a text holding exactly one JSON value (surrounding whitespace allowed). */
  public static Parsed parse(String text) throws SyntaxError {
    Reader r = new Reader(text);
    r.skipWs();
    Object v = r.value(0);
    r.skipWs();
    if (r.pos != text.length()) throw r.error("unexpected data after the JSON value");
    return new Parsed(v, r.duplicate, r.topMembers);
  }

  private static final int MAX_DEPTH = 256;

  private static final class Reader {
    final String s;
    int pos;
    String duplicate;
    List<Map.Entry<String, Object>> topMembers;

    Reader(String s) {
      this.s = s;
    }

    SyntaxError error(String what) {
      return new SyntaxError(what + " at offset " + pos);
    }

    void skipWs() {
      while (pos < s.length()) {
        char c = s.charAt(pos);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') pos++;
        else break;
      }
    }

    Object value(int depth) throws SyntaxError {
      if (depth > MAX_DEPTH) throw error("nesting deeper than " + MAX_DEPTH);
      if (pos >= s.length()) throw error("unexpected end of input");
      char c = s.charAt(pos);
      switch (c) {
        case '{':
          return object(depth);
        case '[':
          return array(depth);
        case '"':
          return string();
        case 't':
          literal("true");
          return Boolean.TRUE;
        case 'f':
          literal("false");
          return Boolean.FALSE;
        case 'n':
          literal("null");
          return NULL;
        default:
          if (c == '-' || (c >= '0' && c <= '9')) return number();
          throw error("unexpected character");
      }
    }

    void literal(String word) throws SyntaxError {
      if (!s.startsWith(word, pos)) throw error("invalid literal");
      pos += word.length();
    }

    Map<String, Object> object(int depth) throws SyntaxError {
      pos++; // {
      Map<String, Object> m = new LinkedHashMap<>();
      List<Map.Entry<String, Object>> members = new ArrayList<>();
      if (depth == 0) topMembers = members;
      skipWs();
      if (pos < s.length() && s.charAt(pos) == '}') {
        pos++;
        return m;
      }
      while (true) {
        skipWs();
        if (pos >= s.length() || s.charAt(pos) != '"') throw error("expected a string key");
        String key = string();
        skipWs();
        if (pos >= s.length() || s.charAt(pos) != ':') throw error("expected ':'");
        pos++;
        skipWs();
        Object v = value(depth + 1);
        members.add(Map.entry(key, v));
        if (m.containsKey(key)) {
          if (duplicate == null) duplicate = key;
        } else {
          m.put(key, v);
        }
        skipWs();
        if (pos >= s.length()) throw error("unexpected end of input in object");
        char c = s.charAt(pos++);
        if (c == '}') return m;
        if (c != ',') throw error("expected ',' or '}'");
      }
    }

    List<Object> array(int depth) throws SyntaxError {
      pos++; // [
      List<Object> a = new ArrayList<>();
      skipWs();
      if (pos < s.length() && s.charAt(pos) == ']') {
        pos++;
        return a;
      }
      while (true) {
        skipWs();
        a.add(value(depth + 1));
        skipWs();
        if (pos >= s.length()) throw error("unexpected end of input in array");
        char c = s.charAt(pos++);
        if (c == ']') return a;
        if (c != ',') throw error("expected ',' or ']'");
      }
    }

    String string() throws SyntaxError {
      pos++; // opening quote
      StringBuilder b = new StringBuilder();
      while (true) {
        if (pos >= s.length()) throw error("unterminated string");
        char c = s.charAt(pos++);
        if (c == '"') return b.toString();
        if (c < 0x20) throw error("unescaped control character in string");
        if (c != '\\') {
          b.append(c);
          continue;
        }
        if (pos >= s.length()) throw error("unterminated escape");
        char e = s.charAt(pos++);
        switch (e) {
          case '"' -> b.append('"');
          case '\\' -> b.append('\\');
          case '/' -> b.append('/');
          case 'b' -> b.append('\b');
          case 'f' -> b.append('\f');
          case 'n' -> b.append('\n');
          case 'r' -> b.append('\r');
          case 't' -> b.append('\t');
          case 'u' -> {
            if (pos + 4 > s.length()) throw error("truncated \\u escape");
            int v = 0;
            for (int i = 0; i < 4; i++) {
              int d = Character.digit(s.charAt(pos + i), 16);
              if (d < 0) throw error("invalid \\u escape");
              v = v * 16 + d;
            }
            pos += 4;
            b.append((char) v);
          }
          default -> throw error("invalid escape");
        }
      }
    }

    Num number() throws SyntaxError {
      int start = pos;
      if (s.charAt(pos) == '-') pos++;
      if (pos >= s.length()) throw error("truncated number");
      char c = s.charAt(pos);
      if (c == '0') {
        pos++;
      } else if (c >= '1' && c <= '9') {
        while (pos < s.length() && isDigit(s.charAt(pos))) pos++;
      } else {
        throw error("invalid number");
      }
      if (pos < s.length() && s.charAt(pos) == '.') {
        pos++;
        int d = pos;
        while (pos < s.length() && isDigit(s.charAt(pos))) pos++;
        if (pos == d) throw error("digit expected after '.'");
      }
      if (pos < s.length() && (s.charAt(pos) == 'e' || s.charAt(pos) == 'E')) {
        pos++;
        if (pos < s.length() && (s.charAt(pos) == '+' || s.charAt(pos) == '-')) pos++;
        int d = pos;
        while (pos < s.length() && isDigit(s.charAt(pos))) pos++;
        if (pos == d) throw error("digit expected in exponent");
      }
      return new Num(s.substring(start, pos));
    }

    static boolean isDigit(char c) {
      return c >= '0' && c <= '9';
    }
  }

  // ------------------------------------------------------------------------------------------
  // Canonical writer

  /** The value cannot be written canonically (a number that is not a safe integer). */
  public static final class NotCanonical extends Exception {
    NotCanonical(String message) {
      super(message);
    }
  }

  private static final long MAX_SAFE = 9007199254740991L;

  /** Canonical JSON text of a parsed tree (sorted keys, JSON.stringify escapes, safe integers). */
  public static String canonical(Object v) throws NotCanonical {
    StringBuilder b = new StringBuilder();
    writeCanonical(b, v);
    return b.toString();
  }

  /** Canonical JSON bytes (UTF-8). */
  public static byte[] canonicalBytes(Object v) throws NotCanonical {
    return canonical(v).getBytes(StandardCharsets.UTF_8);
  }

  @SuppressWarnings("unchecked")
  private static void writeCanonical(StringBuilder b, Object v) throws NotCanonical {
    if (v == NULL) {
      b.append("null");
    } else if (v instanceof Boolean bool) {
      b.append(bool ? "true" : "false");
    } else if (v instanceof String str) {
      writeString(b, str);
    } else if (v instanceof Num n) {
      if (!n.isIntegerToken() || n.raw().equals("-0")) {
        throw new NotCanonical("number " + n.raw() + " is not a canonical integer");
      }
      if (n.raw().length() > 17 || Math.abs(Long.parseLong(n.raw())) > MAX_SAFE) {
        throw new NotCanonical("number " + n.raw() + " is not a safe integer");
      }
      b.append(n.raw());
    } else if (v instanceof Map<?, ?> m) {
      // String.compareTo is UTF-16 code unit order, which is JavaScript's default sort
      TreeMap<String, Object> sorted = new TreeMap<>((Map<String, Object>) m);
      b.append('{');
      boolean first = true;
      for (Map.Entry<String, Object> e : sorted.entrySet()) {
        if (!first) b.append(',');
        first = false;
        writeString(b, e.getKey());
        b.append(':');
        writeCanonical(b, e.getValue());
      }
      b.append('}');
    } else if (v instanceof List<?> l) {
      b.append('[');
      for (int i = 0; i < l.size(); i++) {
        if (i > 0) b.append(',');
        writeCanonical(b, l.get(i));
      }
      b.append(']');
    } else {
      throw new IllegalArgumentException("not a JSON value: " + v);
    }
  }

  /** Writes a string as JavaScript's (well-formed) JSON.stringify does. */
  public static void writeString(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            appendU(b, c);
          } else if (Character.isHighSurrogate(c)) {
            if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
              b.append(c).append(s.charAt(i + 1));
              i++;
            } else {
              appendU(b, c); // lone surrogate
            }
          } else if (Character.isLowSurrogate(c)) {
            appendU(b, c); // lone surrogate
          } else {
            b.append(c);
          }
        }
      }
    }
    b.append('"');
  }

  private static void appendU(StringBuilder b, char c) {
    b.append("\\u");
    String h = Integer.toHexString(c);
    for (int k = h.length(); k < 4; k++) b.append('0');
    b.append(h);
  }

  /** Convenience for building small JSON objects to print (status file, exit line). */
  public static String object(Object... keyValues) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) m.put((String) keyValues[i], keyValues[i + 1]);
    try {
      return canonical(tree(m));
    } catch (NotCanonical e) {
      throw new IllegalArgumentException(e);
    }
  }

  /**
   * A JSON tree of plain Java values: null → {@link #NULL}, Integer/Long → {@link Num}, maps and
   * lists converted element by element; strings, booleans and trees pass through.
   */
  public static Object tree(Object v) {
    if (v == null) return NULL;
    if (v instanceof Integer || v instanceof Long) return new Num(v.toString());
    if (v instanceof Map<?, ?> m) {
      Map<String, Object> out = new LinkedHashMap<>();
      m.forEach((k, x) -> out.put((String) k, tree(x)));
      return out;
    }
    if (v instanceof List<?> l) {
      List<Object> out = new ArrayList<>();
      for (Object x : l) out.add(tree(x));
      return out;
    }
    return v;
  }
}
