package dev.sluice.runner;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The readiness/exit record an observer reads without exec (docs/runner.md): the status file
 * (written atomically: temp file, fsync, rename, fsync of the directory) and a marker line on
 * stdout, {@code SLUICE_RUNNER_STATE <STATE> <generation> <plan_sha256>}.
 *
 * <p>Version 3 adds the offset vectors sluice compares to find offsets moved while the runner was
 * not looking (docs/runner.md, "Offset vectors"): {@code start_offsets}, the group's committed
 * offset per input partition the identity gate found at this start; {@code close_offsets}, the
 * group's committed offsets read after a clean close (CLOSED, 143: the close's own EOS commit
 * included); {@code previous_close}, the close vector of the run before this one, carried over
 * from the status file this run replaces when that run closed cleanly (or never reached RUNNING,
 * so consumed nothing, and carried one itself).
 *
 * <p>Version 4 adds {@code client_id}: the Kafka Streams client ID this run set from its generation
 * ({@link ClientId#of}; null without a generation), so sluice can check that the group's member is
 * this run's. A status file without the field was written by an older runner.
 */
public final class StatusFile {
  private final Path path;
  private final String generation;
  private final String startedAt = Instant.now().toString();
  private String planSha256;
  private String applicationId;
  private String model;
  private String runningAt;
  private Map<String, Object> startOffsets;
  private Map<String, Object> closeOffsets;
  private final Map<String, Object> previousClose;

  public StatusFile(Path path, String generation) {
    this.path = path;
    this.generation = generation;
    this.previousClose = previousCloseOf(path);
  }

  /** The committed offsets (partition → offset) the identity gate found at this start. */
  public synchronized void setStartOffsets(Map<Integer, Long> offsets) {
    this.startOffsets = vector(offsets);
  }

  /**
   * Records CLOSED (143, SIGTERM) with the group's committed offsets read after the clean close,
   * or without them ({@code null}: the read failed; sluice then has no close vector to compare).
   */
  public synchronized void closed(Map<Integer, Long> offsets) {
    this.closeOffsets = offsets == null ? null : vector(offsets);
    write("CLOSED", 143, "SIGTERM", "closed and committed", null);
  }

  /** Writes STARTING and returns the file's path (tests). */
  Path writeStartingForTest() {
    write("STARTING", null, null, null);
    return path;
  }

  /** Partition → offset as decimal strings (the form sluice compares), sorted by partition. */
  static Map<String, Object> vector(Map<Integer, Long> offsets) {
    Map<String, Object> out = new TreeMap<>();
    offsets.forEach((p, o) -> out.put(Integer.toString(p), Long.toString(o)));
    return out;
  }

  /**
   * The close vector of the run before this one, from the status file this run is about to
   * replace: its own {@code close_offsets} when it closed cleanly (CLOSED, exit 143), or the
   * {@code previous_close} it carried when it never reached RUNNING (it consumed nothing, so the
   * older close still describes where the group was left). Null otherwise, or when unreadable.
   */
  @SuppressWarnings("unchecked")
  static Map<String, Object> previousCloseOf(Path path) {
    Object v;
    try {
      if (!Files.exists(path)) return null;
      v = Json.parse(Files.readAllBytes(path)).value();
    } catch (IOException | Json.SyntaxError e) {
      return null;
    }
    if (!(v instanceof Map<?, ?> m)) return null;
    Object state = m.get("state");
    Object exit = m.get("exit_code");
    if ("CLOSED".equals(state) && exit instanceof Json.Num n && n.raw().equals("143")
        && m.get("close_offsets") instanceof Map<?, ?> offsets) {
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("close_offsets", offsets);
      out.put("closed_at", m.get("updated_at"));
      out.put("generation", m.get("generation"));
      out.put("plan_sha256", m.get("plan_sha256"));
      return out;
    }
    if (m.get("running_at") == Json.NULL && m.get("previous_close") instanceof Map<?, ?> carried) {
      return (Map<String, Object>) carried;
    }
    return null;
  }

  public synchronized void setPlan(String planSha256, String applicationId, String model) {
    this.planSha256 = planSha256;
    this.applicationId = applicationId;
    this.model = model;
  }

  /** Records a state; {@code exit} is null unless the runner is about to exit. */
  public void write(String state, Integer exitCode, String reason, String detail) {
    write(state, exitCode, reason, detail, null);
  }

  /**
   * Records FAILED with the exit's code, reason, detail and its stop context (the model and
   * application ID are added when the plan was read): why it stopped, without a record value.
   */
  public synchronized void fail(RunnerExit e) {
    if (model != null && !e.context().containsKey("model")) e.with("model", model);
    if (applicationId != null && !e.context().containsKey("application_id")) e.with("application_id", applicationId);
    write("FAILED", e.exitCode, e.reason, e.detail, e.contextTree());
  }

  private synchronized void write(String state, Integer exitCode, String reason, String detail, Object stop) {
    String now = Instant.now().toString();
    if (state.equals("RUNNING")) runningAt = now;
    String json = Json.object(
        "format", "sluice.runner-status",
        "version", 4,
        "generation", generation,
        "client_id", ClientId.of(generation),
        "plan_sha256", planSha256,
        "application_id", applicationId,
        "state", state,
        "pid", ProcessHandle.current().pid(),
        "started_at", startedAt,
        "running_at", runningAt,
        "updated_at", now,
        "exit_code", exitCode,
        "reason", reason,
        "detail", detail,
        "stop", stop,
        "start_offsets", startOffsets,
        "close_offsets", closeOffsets,
        "previous_close", previousClose);
    try {
      Files.createDirectories(path.getParent());
      Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        ch.write(ByteBuffer.wrap((json + "\n").getBytes(StandardCharsets.UTF_8)));
        ch.force(true);
      }
      Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      try (FileChannel dir = FileChannel.open(path.getParent(), StandardOpenOption.READ)) {
        dir.force(true);
      } catch (IOException ignored) {
        // some filesystems cannot fsync a directory; the rename is still atomic
      }
    } catch (IOException e) {
      System.err.println("sluice-runner: cannot write status file " + path + ": " + e);
    }
    System.out.println("SLUICE_RUNNER_STATE " + state + " " + (generation == null ? "-" : generation) + " " + (planSha256 == null ? "-" : planSha256));
    System.out.flush();
  }
}
