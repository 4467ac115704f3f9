package dev.sluice.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner names its group member after its generation: the client ID of the shared vectors
 * (tests/vectors/client_ids.json, also read by lib/validation/group_member_test.ts), set as the
 * Streams client.id and declared in the status file.
 */
class ClientIdTest {
  @TempDir Path tmp;

  private static Map<?, ?> vectors() throws Exception {
    return (Map<?, ?>) Json.parse(Files.readAllBytes(Path.of("..", "tests", "vectors", "client_ids.json"))).value();
  }

  @Test
  void theClientIdOfAGenerationIsTheSharedVectorsOne() throws Exception {
    List<?> cases = (List<?>) vectors().get("client_ids");
    assertFalse(cases.isEmpty());
    for (Object o : cases) {
      Map<?, ?> c = (Map<?, ?>) o;
      assertEquals(c.get("client_id"), ClientId.of((String) c.get("generation")));
    }
    assertNull(ClientId.of(null));
    assertNull(ClientId.of(""));
  }

  @Test
  void theStreamsConfigurationCarriesTheClientIdOnlyWithAGeneration() throws Exception {
    Plan plan = TestPlans.valid(TestPlans.STARTER);
    Properties named = Main.streamsProps(plan, tmp, "internal", ClientId.of("op/3"));
    assertEquals("sluice-op-3", named.get("client.id"));
    assertFalse(Main.streamsProps(plan, tmp, "internal").containsKey("client.id"));
  }

  @Test
  void theStatusFileDeclaresTheClientIdItSet() throws Exception {
    Path f = tmp.resolve("status.json");
    StatusFile s = new StatusFile(f, "op/3");
    s.setPlan("ab".repeat(32), "app", "model");
    s.write("RUNNING", null, null, null);
    Map<?, ?> written = (Map<?, ?>) Json.parse(Files.readAllBytes(f)).value();
    assertEquals("4", written.get("version").toString());
    assertEquals("sluice-op-3", written.get("client_id"));
    Path g = tmp.resolve("none.json");
    new StatusFile(g, null).write("STARTING", null, null, null);
    Map<?, ?> none = (Map<?, ?>) Json.parse(Files.readAllBytes(g)).value();
    assertTrue(none.containsKey("client_id"));
    assertEquals(Json.NULL, none.get("client_id"));
  }
}
