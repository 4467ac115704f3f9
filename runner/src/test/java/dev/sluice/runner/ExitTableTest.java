package dev.sluice.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** runner-exits.json against the runner's code: the reasons it can stop with are the table's. */
class ExitTableTest {
  /** Every place the runner's code names a stop reason. */
  private static final Pattern USE = Pattern.compile(
      "new RunnerExit\\(\"([A-Z_0-9]+)\"|new DecodeException\\(\"([A-Z_0-9]+)\"|invalid\\(\"([A-Z_0-9]+)\""
          + "|new InvalidAst\\(\"([A-Z_0-9]+)\"|status\\.write\\(\"(?:CLOSED|FAILED)\", [0-9]+, \"([A-Z_0-9]+)\"");

  @Test
  void theReasonsInTheCodeAreExactlyTheTablesReasons() throws Exception {
    Set<String> used = new TreeSet<>();
    try (Stream<Path> files = Files.walk(Path.of("src", "main", "java"))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        Matcher m = USE.matcher(Files.readString(f));
        while (m.find()) {
          for (int g = 1; g <= m.groupCount(); g++) if (m.group(g) != null) used.add(m.group(g));
        }
      }
    }
    assertEquals(new TreeSet<>(ExitTable.reasons().keySet()), used);
  }

  @Test
  void exitCodesComeFromTheTable() {
    assertEquals(13, new RunnerExit("DECODE_WRONG_TYPE", "x").exitCode);
    assertEquals(12, new RunnerExit("IDENTITY_TOPIC_MISSING", "x").exitCode);
    assertEquals(15, new RunnerExit("KAFKA_UNREACHABLE", "x").exitCode);
    assertEquals("decode", ExitTable.kindOf(13));
    assertThrows(IllegalArgumentException.class, () -> new RunnerExit("NOT_DOCUMENTED", "x"));
  }
}
