package dev.sluice.runner;

/**
 * A record failed strict decoding. {@link #code} is one of the stable {@code DECODE_*} codes of
 * docs/artifact-format.md. Thrown from the processor, it stops the runner (exit 13) before
 * anything past the record is committed.
 */
public final class DecodeException extends RuntimeException {
  /** Stable code, e.g. {@code DECODE_WRONG_TYPE}. */
  public final String code;

  public DecodeException(String code, String detail) {
    super(code + ": " + detail);
    this.code = code;
  }

  /** The detail without the code prefix. */
  public String detail() {
    return getMessage().substring(code.length() + 2);
  }
}
