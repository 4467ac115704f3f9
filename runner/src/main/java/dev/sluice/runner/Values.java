package dev.sluice.runner;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * Runtime values: STRING → {@link String}, BIGINT → {@link Long}, DOUBLE → {@link Double},
 * BOOLEAN → {@link Boolean}, SQL NULL → Java {@code null}. Ordering and the JavaScript number
 * format live here so that the decoder, the predicate and the projection agree.
 */
public final class Values {
  private Values() {}

  /** Compares two non-null STRING values by Unicode code point (not UTF-16 unit). */
  public static int compareCodePoints(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) return Integer.compare(ca, cb);
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }

  /**
   * Formats a finite double as JavaScript's {@code Number.prototype.toString} does (shortest
   * round-trip digits; {@code 100}, {@code 0.5}, {@code 1e+21}, {@code 1.5e-7}; {@code -0} is
   * {@code 0}). Java 17's {@code Double.toString} is not always shortest, so digits come from
   * {@link BigDecimal}.
   */
  public static String jsNumber(double d) {
    if (Double.isNaN(d) || Double.isInfinite(d)) throw new IllegalArgumentException("not finite");
    if (d == 0) return "0";
    boolean negative = d < 0;
    BigDecimal exact = new BigDecimal(Math.abs(d));
    BigDecimal shortest = null;
    for (int p = 1; p <= 17; p++) {
      BigDecimal r = exact.round(new MathContext(p, RoundingMode.HALF_EVEN));
      if (r.doubleValue() == Math.abs(d)) {
        shortest = r;
        break;
      }
    }
    if (shortest == null) shortest = exact.round(new MathContext(17, RoundingMode.HALF_EVEN));
    BigDecimal stripped = shortest.stripTrailingZeros();
    String digits = stripped.unscaledValue().toString();
    int k = digits.length();
    int n = k - stripped.scale(); // value = 0.digits × 10^n
    StringBuilder b = new StringBuilder();
    if (negative) b.append('-');
    if (k <= n && n <= 21) {
      b.append(digits);
      for (int i = 0; i < n - k; i++) b.append('0');
    } else if (0 < n && n <= 21) {
      b.append(digits, 0, n).append('.').append(digits, n, k);
    } else if (-6 < n && n <= 0) {
      b.append("0.");
      for (int i = 0; i < -n; i++) b.append('0');
      b.append(digits);
    } else {
      int e = n - 1;
      b.append(digits.charAt(0));
      if (k > 1) b.append('.').append(digits, 1, k);
      b.append('e').append(e >= 0 ? '+' : '-').append(Math.abs(e));
    }
    return b.toString();
  }
}
