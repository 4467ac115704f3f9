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

/**
 * The readiness/exit record an observer reads without exec (docs/runner.md): the status file
 * (written atomically: temp file, fsync, rename, fsync of the directory) and a marker line on
 * stdout, {@code SLUICE_RUNNER_STATE <STATE> <generation> <plan_sha256>}.
 */
public final class StatusFile {
  private final Path path;
  private final String generation;
  private final String startedAt = Instant.now().toString();
  private String planSha256;
  private String applicationId;
  private String model;
  private String runningAt;

  public StatusFile(Path path, String generation) {
    this.path = path;
    this.generation = generation;
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
        "version", 2,
        "generation", generation,
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
        "stop", stop);
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
