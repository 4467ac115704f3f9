package dev.sluice.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The offset vectors of the status file (version 3 on): what the runner found at its start, what
 * the group held after its clean close, and the previous run's close carried into the next run.
 */
class StatusFileTest {
  @TempDir Path tmp;

  private static Map<?, ?> read(Path f) throws Exception {
    return (Map<?, ?>) Json.parse(Files.readString(f)).value();
  }

  private static Map<Integer, Long> offsets(long p0, long p1) {
    Map<Integer, Long> m = new TreeMap<>();
    m.put(0, p0);
    m.put(1, p1);
    return m;
  }

  private StatusFile status(Path f) {
    StatusFile s = new StatusFile(f, "g7");
    s.setPlan("ab".repeat(32), "app", "model");
    return s;
  }

  @Test
  void theStartVectorIsWrittenFromRunningOnAndTheCloseVectorOnClosed() throws Exception {
    Path f = tmp.resolve("status.json");
    StatusFile s = status(f);
    s.write("STARTING", null, null, null);
    assertSame(Json.NULL, read(f).get("start_offsets"));
    s.setStartOffsets(offsets(5, 12));
    s.write("RUNNING", null, null, null);
    Map<?, ?> running = read(f);
    assertEquals("4", running.get("version").toString());
    assertEquals(Map.of("0", "5", "1", "12"), running.get("start_offsets"));
    assertSame(Json.NULL, running.get("close_offsets"));
    assertSame(Json.NULL, running.get("previous_close"));
    s.closed(offsets(9, 20));
    Map<?, ?> closed = read(f);
    assertEquals("CLOSED", closed.get("state"));
    assertEquals("143", closed.get("exit_code").toString());
    assertEquals("SIGTERM", closed.get("reason"));
    assertEquals(Map.of("0", "5", "1", "12"), closed.get("start_offsets"));
    assertEquals(Map.of("0", "9", "1", "20"), closed.get("close_offsets"));
    assertEquals(Files.readString(f).trim(), Json.canonical(closed));
  }

  @Test
  void aCloseWhoseOffsetsCouldNotBeReadHasNoCloseVector() throws Exception {
    Path f = tmp.resolve("status.json");
    StatusFile s = status(f);
    s.setStartOffsets(offsets(1, 2));
    s.closed(null);
    assertSame(Json.NULL, read(f).get("close_offsets"));
    // and the next run finds no close vector to carry
    assertSame(Json.NULL, read(status(f).writeStartingForTest()).get("previous_close"));
  }

  @Test
  void theNextRunCarriesTheCleanCloseItReplaces() throws Exception {
    Path f = tmp.resolve("status.json");
    StatusFile first = status(f);
    first.setStartOffsets(offsets(0, 0));
    first.write("RUNNING", null, null, null);
    first.closed(offsets(7, 8));
    String closedAt = read(f).get("updated_at").toString();

    StatusFile second = status(f);
    second.write("STARTING", null, null, null);
    Map<?, ?> prev = (Map<?, ?>) read(f).get("previous_close");
    assertEquals(Map.of("0", "7", "1", "8"), prev.get("close_offsets"));
    assertEquals(closedAt, prev.get("closed_at"));
    assertEquals("g7", prev.get("generation"));
    second.setStartOffsets(offsets(3, 8)); // partition 0 was moved back while it was stopped
    second.write("RUNNING", null, null, null);
    Map<?, ?> running = read(f);
    assertEquals(Map.of("0", "3", "1", "8"), running.get("start_offsets"));
    assertEquals(prev, running.get("previous_close"));
  }

  @Test
  void aRunThatNeverReachedRunningPassesTheOlderCloseOn() throws Exception {
    Path f = tmp.resolve("status.json");
    StatusFile first = status(f);
    first.write("RUNNING", null, null, null);
    first.closed(offsets(7, 8));
    // started again, then killed in the identity gate: STARTING, nothing consumed
    status(f).write("STARTING", null, null, null);
    Map<?, ?> third = read(status(f).writeStartingForTest());
    assertEquals(Map.of("0", "7", "1", "8"), ((Map<?, ?>) third.get("previous_close")).get("close_offsets"));
  }

  @Test
  void aRunThatConsumedAndWasKilledCarriesNoClose() throws Exception {
    Path f = tmp.resolve("status.json");
    StatusFile first = status(f);
    first.write("RUNNING", null, null, null);
    first.closed(offsets(7, 8));
    StatusFile second = status(f);
    second.write("RUNNING", null, null, null); // then SIGKILL: the file stays at RUNNING
    assertSame(Json.NULL, read(status(f).writeStartingForTest()).get("previous_close"));
    // a failed run (exit 13, 15) is no clean close either
    StatusFile fourth = status(f);
    fourth.write("RUNNING", null, null, null);
    fourth.fail(new RunnerExit("STREAMS_FATAL", "x"));
    assertSame(Json.NULL, read(status(f).writeStartingForTest()).get("previous_close"));
  }

  @Test
  void anUnreadableEarlierFileCarriesNothing() throws Exception {
    Path f = tmp.resolve("status.json");
    Files.writeString(f, "{not json");
    assertSame(Json.NULL, read(status(f).writeStartingForTest()).get("previous_close"));
  }
}
