package dev.sluice.runner;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The runner's exit codes and stop reasons, read from {@code runner-exits.json} in the jar: the
 * one table the runner and the TypeScript side share (lib/artifact/runner_exits.ts imports the
 * same file; docs/runner.md shows it). A reason that is not in the table is a bug and fails
 * loudly, so the runner cannot stop with a reason the table does not document.
 */
public final class ExitTable {
  private ExitTable() {}

  private static final Map<String, Integer> REASONS = new LinkedHashMap<>();
  private static final Map<Integer, String> EXITS = new LinkedHashMap<>();

  static {
    try (InputStream in = ExitTable.class.getResourceAsStream("/runner-exits.json")) {
      if (in == null) throw new IllegalStateException("runner-exits.json is missing from the class path");
      Map<?, ?> table = (Map<?, ?>) Json.parse(in.readAllBytes()).value();
      for (Object o : (List<?>) table.get("exits")) {
        Map<?, ?> row = (Map<?, ?>) o;
        EXITS.put(Integer.parseInt(((Json.Num) row.get("code")).raw()), (String) row.get("kind"));
      }
      for (Object o : (List<?>) table.get("reasons")) {
        Map<?, ?> row = (Map<?, ?>) o;
        REASONS.put((String) row.get("reason"), Integer.parseInt(((Json.Num) row.get("exit")).raw()));
      }
    } catch (IOException | Json.SyntaxError e) {
      throw new IllegalStateException("runner-exits.json cannot be read", e);
    }
  }

  /** The exit code of a documented reason; an undocumented reason is a bug. */
  public static int exitOf(String reason) {
    Integer code = REASONS.get(reason);
    if (code == null) throw new IllegalArgumentException("stop reason " + reason + " is not in runner-exits.json");
    return code;
  }

  /** The kind of an exit code ({@code decode}, {@code identity}, …), or null if undocumented. */
  public static String kindOf(int exitCode) {
    return EXITS.get(exitCode);
  }

  /** Every documented reason and its exit code, in table order. */
  public static Map<String, Integer> reasons() {
    return Map.copyOf(REASONS);
  }

  /** Every documented exit code and its kind. */
  public static Map<Integer, String> exits() {
    return Map.copyOf(EXITS);
  }
}
