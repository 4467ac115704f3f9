package dev.sluice.runner;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A fatal outcome: a stable reason, its exit code from the shared table ({@link ExitTable},
 * runner-exits.json), a detail, and — when known — the context of the stop (model, application
 * ID; for a record: topic, partition, offset, sizes, field names, the field and rule that
 * failed; never a value of the record). The runner prints it as the last stdout line
 * ({@code {"context":…,"detail":"…","reason":"…","sluice_runner_exit":N}}) and writes the same
 * context to the status file's {@code stop}.
 */
public final class RunnerExit extends Exception {
  public final int exitCode;
  public final String reason;
  public final String detail;
  private final Map<String, Object> context = new LinkedHashMap<>();

  public RunnerExit(String reason, String detail) {
    super(reason + ": " + detail);
    this.exitCode = ExitTable.exitOf(reason);
    this.reason = reason;
    this.detail = detail;
  }

  /** Adds a context entry (values: String, Long, Integer, Boolean, List, Map; null is null). */
  public RunnerExit with(String key, Object value) {
    context.put(key, value);
    return this;
  }

  /** The stop context (insertion order; canonical JSON sorts it). */
  public Map<String, Object> context() {
    return java.util.Collections.unmodifiableMap(context);
  }

  /** The context as a JSON-ready tree (Json.Num for numbers, Json.NULL for null). */
  Object contextTree() {
    return Json.tree(context);
  }

  /** The one-line JSON reason. */
  public String toJsonLine() {
    return Json.object("context", contextTree(), "detail", detail, "reason", reason, "sluice_runner_exit", exitCode);
  }
}
