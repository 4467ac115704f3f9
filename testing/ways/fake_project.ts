/**
 * A starter project on a file-backed fake world, with the `sluice` CLI run in child processes
 * against the same world (`fake_cli.ts`): what the way-out tests use to kill the CLI at a fault
 * site and finish with fresh public commands in seconds. The real-service tests
 * (`tests/*_docker_kafka*_test.ts`) prove the same ways out on Docker and Kafka.
 *
 * @example
 * ```ts
 * import { fakeProject } from "./fake_project.ts";
 * await using f = await fakeProject("example");
 * const shown = await f.cli(["-o", "json", "state", "show", "--project", f.p.dir]);
 * console.log(shown.code);
 * ```
 * @module
 */
import { starterProject, type TestProject } from "../../harness/project.ts";
import type { DockerPort } from "../../lib/providers/docker/port.ts";
import type { KafkaPort } from "../../lib/providers/kafka/port.ts";
import type { Clock, UuidSource } from "../../lib/runtime/deps.ts";
import { createFakeWorld, type FakeWorld } from "../fakes/fake_world.ts";

/** One CLI run. */
export interface CliRun {
  code: number;
  signal: Deno.Signal | null;
  stdout: string;
  stderr: string;
  /** The `-o json` envelope (throws when stdout is not JSON). */
  json(): {
    ok: boolean;
    data: Record<string, unknown> | null;
    errors: Array<{ code: string; message: string }>;
  };
}

/** A fake world, a starter project pointed at it, and the CLI on it. */
export interface FakeProject extends AsyncDisposable {
  world: FakeWorld;
  p: TestProject;
  /** The ports, clock and UUID source for in-process SDK calls. */
  deps: { docker: DockerPort; kafka: KafkaPort; clock: Clock; uuids: UuidSource };
  /**
   * Run `sluice args...` in a child process on the world (extra environment: fault switches;
   * `cwd`: the working directory, default this process's).
   */
  cli(args: string[], env?: Record<string, string>, cwd?: string): Promise<CliRun>;
}

const ENTRY = new URL("./fake_cli.ts", import.meta.url).pathname;
/** The repository's configuration (import map), named explicitly: a child's cwd may be elsewhere. */
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

/** Create a world and a starter project on it (removed on dispose). */
export async function fakeProject(seed: string): Promise<FakeProject> {
  const dir = await Deno.makeTempDir({ prefix: "sluice-ways-" });
  const path = `${dir}/world.json`;
  const world = createFakeWorld({ seed, path });
  const p = await starterProject({
    runId: "fake",
    bootstrapHost: world.env.bootstrapHost,
    bootstrapInternal: world.env.bootstrapInternal,
    network: world.env.network,
    clusterId: world.env.clusterId,
    pgUrl: "",
    brokerContainerId: "",
    labels: {},
    connect: null,
  }, { image: world.env.runnerImage });
  const kafka = world.kafka(world.env.bootstrapHost);
  return {
    world,
    p,
    deps: { docker: world.docker, kafka, clock: world.clock, uuids: world.ids },
    async cli(args, env = {}, cwd) {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--quiet", "--config", CONFIG, ENTRY, ...args],
        env: { SLUICE_FAKE_WORLD: path, ...env },
        ...(cwd ? { cwd } : {}),
        stdout: "piped",
        stderr: "piped",
      }).output();
      const dec = new TextDecoder();
      const stdout = dec.decode(out.stdout);
      const stderr = dec.decode(out.stderr);
      return {
        code: out.code,
        signal: out.signal,
        stdout,
        stderr,
        json() {
          try {
            return JSON.parse(stdout);
          } catch {
            throw new Error(`not JSON (exit ${out.code}, ${out.signal}):\n${stdout}\n${stderr}`);
          }
        },
      };
    },
    async [Symbol.asyncDispose]() {
      await kafka.close();
      await Deno.remove(p.dir, { recursive: true });
      await Deno.remove(dir, { recursive: true });
    },
  };
}
