package dev.sluice.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one SIGTERM handler: the early close before Streams starts, the Streams close after. */
class TermHandlerTest {
  @Test
  void aTermBeforeStreamsRunsTheEarlyCloseAndRefusesTheStreamsClose() {
    List<String> ran = new ArrayList<>();
    TermHandler h = new TermHandler(() -> ran.add("early"));
    h.fire();
    assertFalse(h.install(() -> ran.add("streams")), "Streams must not start after a TERM");
    h.fire();
    assertEquals(List.of("early"), ran);
  }

  @Test
  void aTermAfterTheHandOverRunsOnlyTheStreamsClose() {
    List<String> ran = new ArrayList<>();
    TermHandler h = new TermHandler(() -> ran.add("early"));
    assertTrue(h.install(() -> ran.add("streams")));
    h.fire();
    h.fire();
    assertEquals(List.of("streams"), ran);
  }
}
