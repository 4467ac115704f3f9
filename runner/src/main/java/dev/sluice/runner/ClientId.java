package dev.sluice.runner;

/**
 * The Kafka Streams {@code client.id} a runner takes from its generation ({@code SLUICE_GENERATION},
 * {@code <operation UUID>/<action index>}): {@code sluice-<operation UUID>-<action index>}. Streams
 * names its main consumer {@code <client.id>-StreamThread-<n>-consumer}, so the consumer group's
 * member says which generation it is, and sluice can check that the group's one member is the
 * candidate it started, not only that there is one (lib/validation/group_member.ts reads the same
 * form; tests/vectors/client_ids.json pins both sides). The status file declares the value it set
 * ({@code client_id}, version 4), so sluice can tell a runner that sets it from one built before.
 */
public final class ClientId {
  private ClientId() {}

  /** The client ID of a generation; null without one (Kafka's default client ID is kept). */
  public static String of(String generation) {
    if (generation == null || generation.isEmpty()) return null;
    return "sluice-" + generation.replace('/', '-');
  }
}
