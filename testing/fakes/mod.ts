/**
 * Fakes of sluice's provider ports for unit tests and the fast crash sweep: a fake Docker
 * Engine, Kafka cluster and Kafka Connect cluster over one world document (in memory, or a file that survives
 * process death), a simulated runner, an injected clock and a seeded ID source.
 *
 * @example
 * ```ts
 * import { createFakeWorld } from "./mod.ts";
 * const world = createFakeWorld({ seed: "example" });
 * const kafka = world.kafka(world.env.bootstrapHost);
 * await kafka.createTopic("raw_orders", 3);
 * console.log(await world.docker.daemonId());
 * ```
 * @module
 */
export * from "./clock.ts";
export * from "./ids.ts";
export * from "./world.ts";
export * from "./lifecycle.ts";
export * from "./engine.ts";
export * from "./broker.ts";
export * from "./control.ts";
export * from "./connect.ts";
export * from "./fake_world.ts";
export { FakeProviderError } from "./_port_call.ts";
export type { FakeContext } from "./_port_call.ts";
