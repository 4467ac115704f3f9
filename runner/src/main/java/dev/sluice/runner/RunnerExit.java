package dev.sluice.runner;

/**
 * A fatal outcome with its documented exit code (10–15) and stable reason code. The runner
 * prints it as the last stdout line: {@code {"sluice_runner_exit":N,"reason":"...","detail":"..."}}.
 */
public final class RunnerExit extends Exception {
  public static final int PLAN_INVALID = 10;
  public static final int PLAN_CHECKSUM = 11;
  public static final int IDENTITY = 12;
  public static final int DECODE = 13;
  public static final int OFFSETS_MISSING = 14;
  public static final int FATAL = 15;

  public final int exitCode;
  public final String reason;
  public final String detail;

  public RunnerExit(int exitCode, String reason, String detail) {
    super(reason + ": " + detail);
    this.exitCode = exitCode;
    this.reason = reason;
    this.detail = detail;
  }

  /** The one-line JSON reason. */
  public String toJsonLine() {
    return Json.object("detail", detail, "reason", reason, "sluice_runner_exit", exitCode);
  }
}
