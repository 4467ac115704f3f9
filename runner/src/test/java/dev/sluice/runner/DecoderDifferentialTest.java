package dev.sluice.runner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The optimized {@link RecordDecoder} against the tree-based {@link ReferenceDecoder} on records
 * generated from the shared vectors: structured records (schema and unknown keys, every JSON
 * type, escapes, multi-byte UTF-8, 64-bit boundaries, nesting) and byte-level mutations of them
 * (invalid UTF-8, truncation, stray characters). For every input both give the same row, or the
 * same code and field.
 */
class DecoderDifferentialTest {
  private static final String[] VALUES = {
      "0", "-0", "1", "-1", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
      "-9223372036854775809", "99999999999999999999", "1.5", "1e3", "1E+2", "-0.0", "1e999", "-1e999",
      "0.1e-400", "12345678901234567", "\"x\"", "\"\"", "\"a\\\"b\"", "\"\\u00e9\\ud83d\\ude00\"", "\"\\ud800\"",
      "\"é\"", "\"😀\"", "\"\\/\\b\\f\\n\\r\\t\"", "true", "false", "null", "{}", "[]", "[1,[2,{\"a\":null}]]",
      "{\"amount\":1}", "{\"a\":1,\"a\":2}"};
  private static final String[] KEYS = {
      "order_id", "amount", "paid", "score", "region", "qty", "other", "\\u0061mount", "Amount", "é"};
  private static final byte[] NOISE = "{}[]\":,\\ 0123456789-+.eEtrufalsn\u0000\t\n"
      .getBytes(StandardCharsets.ISO_8859_1);
  private static final int[] HIGH = {0x80, 0xbf, 0xc0, 0xc3, 0xa9, 0xe0, 0xed, 0xa0, 0xef, 0xf0, 0xf4, 0x90, 0xf5, 0xff};

  @Test
  void bothDecodersAgreeOnGeneratedAndMutatedRecords() throws Exception {
    Map<?, ?> v = Vectors.load();
    List<Field> schema = Vectors.schema(v);
    RecordDecoder fast = new RecordDecoder(schema);
    ReferenceDecoder reference = new ReferenceDecoder(schema);
    List<byte[]> seeds = new ArrayList<>();
    for (String group : List.of("decode_rejects", "decode_accepts")) {
      for (Object o : (List<?>) v.get(group)) {
        seeds.add(((String) ((Map<?, ?>) o).get("record")).getBytes(StandardCharsets.UTF_8));
      }
    }
    Random r = new Random(20261201L);
    for (int i = 0; i < 3000; i++) seeds.add(generate(r).getBytes(StandardCharsets.UTF_8));
    int rows = 0;
    int codes = 0;
    int checked = 0;
    for (byte[] seed : seeds) {
      for (int m = 0; m < 8; m++) {
        byte[] input = m == 0 ? seed : mutate(r, seed);
        Object want;
        try {
          want = reference.decode(input);
        } catch (DecodeException e) {
          want = e;
        }
        Object got;
        try {
          got = fast.decode(input);
        } catch (DecodeException e) {
          got = e;
        }
        String what = new String(input, StandardCharsets.ISO_8859_1);
        if (want instanceof DecodeException we) {
          assertTrue(got instanceof DecodeException, "expected " + we.code + " for " + what);
          DecodeException ge = (DecodeException) got;
          assertEquals(we.code, ge.code, what);
          if (!we.code.equals("DECODE_MALFORMED")) assertEquals(we.field, ge.field, what);
          codes++;
        } else {
          assertTrue(got instanceof Object[], "expected a row for " + what + ", got " + got);
          assertArrayEquals((Object[]) want, (Object[]) got, what);
          rows++;
        }
        checked++;
      }
    }
    // the generator must exercise both outcomes, or the comparison proves little
    assertTrue(rows > 1000, "rows: " + rows);
    assertTrue(codes > 10000, "codes: " + codes);
    assertEquals(seeds.size() * 8, checked);
  }

  private static String generate(Random r) {
    StringBuilder b = new StringBuilder("{");
    String[] order = {"order_id", "amount", "paid", "score", "region", "qty"};
    int members = r.nextInt(8);
    boolean plausible = r.nextInt(3) > 0;
    for (int i = 0; i < members || (plausible && i < order.length); i++) {
      if (i > 0) b.append(r.nextInt(20) == 0 ? " , " : ",");
      String key = plausible && i < order.length ? order[i] : KEYS[r.nextInt(KEYS.length)];
      b.append('"').append(key).append('"').append(r.nextInt(10) == 0 ? " : " : ":");
      b.append(plausible ? plausibleValue(r, key) : VALUES[r.nextInt(VALUES.length)]);
    }
    return b.append(r.nextInt(30) == 0 ? "} " : "}").toString();
  }

  private static String plausibleValue(Random r, String key) {
    if (r.nextInt(6) == 0) return VALUES[r.nextInt(VALUES.length)];
    return switch (key) {
      case "order_id", "region" -> r.nextBoolean() ? "\"o-" + r.nextInt(1000) + "\"" : "\"ré\\u0067ion\"";
      case "amount", "qty" -> Long.toString(r.nextLong() >> r.nextInt(64));
      case "paid" -> r.nextBoolean() ? "true" : "false";
      default -> r.nextBoolean() ? Double.toString(r.nextDouble() * 1000) : "null";
    };
  }

  private static byte[] mutate(Random r, byte[] in) {
    if (in.length == 0) return new byte[] {NOISE[r.nextInt(NOISE.length)]};
    int at = r.nextInt(in.length);
    byte x = r.nextInt(3) == 0 ? (byte) HIGH[r.nextInt(HIGH.length)] : NOISE[r.nextInt(NOISE.length)];
    switch (r.nextInt(4)) {
      case 0: { // replace
        byte[] out = in.clone();
        out[at] = x;
        return out;
      }
      case 1: { // insert
        byte[] out = new byte[in.length + 1];
        System.arraycopy(in, 0, out, 0, at);
        out[at] = x;
        System.arraycopy(in, at, out, at + 1, in.length - at);
        return out;
      }
      case 2: { // delete
        byte[] out = new byte[in.length - 1];
        System.arraycopy(in, 0, out, 0, at);
        System.arraycopy(in, at + 1, out, at, in.length - at - 1);
        return out;
      }
      default: { // truncate
        byte[] out = new byte[at];
        System.arraycopy(in, 0, out, 0, at);
        return out;
      }
    }
  }
}
