package dev.sluice.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ValuesTest {
  @Test
  void doublesAreFormattedAsJavaScriptNumbers() {
    String[][] cases = {
        {"0", "0"}, {"-0.0", "0"}, {"1", "1"}, {"100", "100"}, {"0.5", "0.5"}, {"-1.5", "-1.5"},
        {"1e21", "1e+21"}, {"1e20", "100000000000000000000"}, {"123456789012345680000", "123456789012345680000"},
        {"0.000001", "0.000001"}, {"0.0000001", "1e-7"}, {"1.5e-7", "1.5e-7"}, {"0.1", "0.1"},
        {"0.30000000000000004", "0.30000000000000004"}, {"5e-324", "5e-324"},
        {"1.7976931348623157e308", "1.7976931348623157e+308"}, {"9007199254740993", "9007199254740992"},
        {"2e-3", "0.002"}, {"1.2345e25", "1.2345e+25"},
    };
    for (String[] c : cases) assertEquals(c[1], Values.jsNumber(Double.parseDouble(c[0])), c[0]);
  }

  @Test
  void stringsCompareByCodePointNotUtf16Unit() {
    // U+FF5E (one unit, 0xFF5E) sorts before U+1F600 (surrogates 0xD83D…) by code point
    assertTrue(Values.compareCodePoints("\uFF5E", "\uD83D\uDE00") < 0);
    assertTrue("\uFF5E".compareTo("\uD83D\uDE00") > 0);
    assertTrue(Values.compareCodePoints("a", "ab") < 0);
    assertEquals(0, Values.compareCodePoints("é", "é"));
  }

  @Test
  void canonicalJsonSortsByUtf16AndEscapesAsJsonStringify() throws Exception {
    Object v = Json.parse("{\"b\":1,\"a\":[true,null,\"\\u0007\\u2028\"],\"\\uD83D\\uDE00\":0,\"\\uFF5E\":0}").value();
    assertEquals("{\"a\":[true,null,\"\\u0007\u2028\"],\"b\":1,\"\uD83D\uDE00\":0,\"\uFF5E\":0}", Json.canonical(v));
  }
}
