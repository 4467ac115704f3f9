/**
 * A starter project on a file-backed fake world, with the `sluice` CLI run in child processes
 * against the same world (`fake_cli.ts`): what the way-out tests use to kill the CLI at a fault
 * site and finish with fresh public commands in seconds, and what the unit tests on fakes use
 * for their project (in-process SDK calls through `deps`, or `../in_process_cli.ts`). The
 * real-service tests (`tests/*_docker_kafka*_test.ts`) prove the same ways out on Docker and
 * Kafka.
 *
 * @example
 * ```ts
 * import { fakeProject, runnerGrants } from "./fake_project.ts";
 * await using f = await fakeProject("example", {
 *   security: { adminPasswordEnv: "ADMIN_PW", runnerPasswordEnv: "RUNNER_PW" },
 * });
 * f.world.store.transact((w) => {
 *   w.kafka.acls = runnerGrants(f.p);
 * });
 * const shown = await f.cli(["-o", "json", "state", "show", "--project", f.p.dir]);
 * console.log(shown.code);
 * ```
 * @module
 */
import { starterProject, type TestProject } from "../../harness/project.ts";
import type { DockerPort } from "../../lib/providers/docker/port.ts";
import type { AclBinding, KafkaPort } from "../../lib/providers/kafka/port.ts";
import type { Clock, UuidSource } from "../../lib/runtime/deps.ts";
import { createFakeWorld, type FakeWorld } from "../fakes/fake_world.ts";
import type { WorldConfig } from "../fakes/world.ts";
import { apply, plan } from "../../lib/runtime/session.ts";
import { openStateStore } from "../../lib/state/open.ts";
import { SETS_GATE } from "../../lib/plan/instances.ts";
import { writePlanFile } from "../../lib/plan/plan_file.ts";
import { LABEL } from "../../lib/runtime/labels.ts";
import type { StateSnapshot } from "../../lib/state/store.ts";

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

/** How {@link fakeProject} makes its world and project. */
export interface FakeProjectOptions {
  /**
   * A clock for this process's ports instead of the world's stored one (e.g. `systemClock()`
   * from `../fakes/clock.ts`); the child processes of `cli` keep the world's.
   */
  clock?: Clock;
  /**
   * Declare `kafka.security` in the manifest: SASL_SSL, SCRAM-SHA-512, the admin `sluice-admin`
   * and the runner `orders-runner` ({@link RUNNER_PRINCIPAL}), their passwords read from the
   * variables named here (the test gives their values).
   */
  security?: { adminPasswordEnv: string; runnerPasswordEnv: string };
  /** The world's configuration (world-time delays of the simulated runners). */
  config?: Partial<WorldConfig>;
}

/** The runner principal of a project made with {@link FakeProjectOptions.security}. */
export const RUNNER_PRINCIPAL = "User:orders-runner";

/** The `kafka.security` block, to go under `kafka:` in the starter's manifest. */
function securityYaml(o: NonNullable<FakeProjectOptions["security"]>): string {
  return `  security:
    protocol: SASL_SSL
    admin:
      sasl_mechanism: SCRAM-SHA-512
      username: sluice-admin
      password_env: ${o.adminPasswordEnv}
    runner:
      sasl_mechanism: SCRAM-SHA-512
      username: orders-runner
      password_env: ${o.runnerPasswordEnv}
`;
}

/**
 * Every ACL the starter's runner needs, granted to {@link RUNNER_PRINCIPAL}: READ of the input
 * topic, WRITE of the output topic, READ of its consumer group (the application ID) and WRITE
 * of its transactional IDs (prefixed by the application ID). A test grants them with
 * `world.store.transact((w) => { w.kafka.acls = runnerGrants(p); })`, or a filtered copy to
 * take one away.
 */
export function runnerGrants(p: TestProject): AclBinding[] {
  const appId = `sluice-${p.name}-eligible_orders`;
  const allow = (
    resourceType: AclBinding["resourceType"],
    resourceName: string,
    operation: string,
    patternType: AclBinding["patternType"] = "LITERAL",
  ): AclBinding => ({
    resourceType,
    resourceName,
    patternType,
    principal: RUNNER_PRINCIPAL,
    host: "*",
    operation,
    permission: "ALLOW",
  });
  return [
    allow("TOPIC", p.inputTopic, "READ"),
    allow("TOPIC", p.outputTopic, "WRITE"),
    allow("GROUP", appId, "READ"),
    allow("TRANSACTIONAL_ID", appId, "WRITE", "PREFIXED"),
  ];
}

/**
 * Write the orders starter pointed at `world`'s broker, network and runner image (the caller
 * removes `p.dir`).
 */
export async function starterOnWorld(
  world: FakeWorld,
  options: { runId?: string; stateDsnEnv?: string; parentDir?: string } = {},
): Promise<TestProject> {
  return await starterProject({
    runId: options.runId ?? "fake",
    bootstrapHost: world.env.bootstrapHost,
    bootstrapInternal: world.env.bootstrapInternal,
    network: world.env.network,
    clusterId: world.env.clusterId,
    pgUrl: "",
    brokerContainerId: "",
    labels: {},
    connect: null,
  }, {
    image: world.env.runnerImage,
    stateDsnEnv: options.stateDsnEnv,
    parentDir: options.parentDir,
  });
}

/** Create a world and a starter project on it (both removed on dispose). */
export async function fakeProject(
  seed: string,
  options: FakeProjectOptions = {},
): Promise<FakeProject> {
  const dir = await Deno.makeTempDir({ prefix: "sluice-ways-" });
  const path = `${dir}/world.json`;
  const world = createFakeWorld({ seed, path, clock: options.clock, config: options.config });
  const p = await starterOnWorld(world);
  if (options.security) {
    const block = securityYaml(options.security);
    await p.editManifest((t) => t.replace(/(bootstrap_internal: .*\n)/, `$1${block}`));
  }
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

/**
 * A fake project whose starter is created (planned and applied through the SDK's journeys): its
 * one runner running, nothing produced yet, its application ID at hand.
 */
export async function createdStarter(
  seed: string,
  options: FakeProjectOptions = {},
): Promise<FakeProject & { applicationId: string }> {
  const f = await fakeProject(seed, options);
  try {
    const created = await plan({ dir: f.p.dir, ...f.deps });
    const c = await apply({
      dir: f.p.dir,
      plan: created.plan,
      planSha256: created.sha256,
      ...f.deps,
    });
    return Object.assign(f, { applicationId: c.runners[0].application_id });
  } catch (error) {
    await f[Symbol.asyncDispose]();
    throw error;
  }
}

/**
 * A fake project's local state, read directly (verified as every load is), by means of its own:
 * what a test checks a journey's commits against.
 */
export async function localState(
  f: { p: { dir: string; name: string } },
): Promise<StateSnapshot> {
  const store = openStateStore({
    backend: "local",
    dir: `${f.p.dir}/.sluice/state`,
    project: f.p.name,
    environment: null,
  });
  try {
    return await store.load();
  } finally {
    await store.close();
  }
}

/**
 * `f`'s model declared as a set of two instances over two daemons: east (the world's default
 * daemon, where a single runner runs) and west (a daemon added to the world). Returns `f` with
 * the session's port of each endpoint (`dockerEndpoint`: the world's daemon of that name).
 */
export async function asSetOfTwo<F extends FakeProject>(
  f: F,
): Promise<F & { dockerEndpoint: (name: string) => DockerPort }> {
  f.world.control.addDaemon("west");
  await f.p.editManifest((t) =>
    t.replace(
      "    sql: models/eligible_orders.sql\n",
      "    sql: models/eligible_orders.sql\n    instances: 2\n",
    ) +
    `docker:\n  endpoints:\n    east: { endpoint: "unix:///var/run/docker.sock" }\n` +
    `    west: { endpoint: "unix:///run/sluice-west/docker.sock" }\n`
  );
  return Object.assign(f, { dockerEndpoint: (name: string) => f.world.endpoint(name).docker });
}

/**
 * The starter declared as a set of two ({@link asSetOfTwo}) and created through the CLI with the
 * set journeys open, with its application ID; with `spare`, a second model of one instance beside
 * it (that a removal leaves in the project); `config`, the world's (its simulated runners' delays).
 */
export async function createdSetOfTwo(
  seed: string,
  options: { spare?: boolean; config?: Partial<WorldConfig> } = {},
) {
  const f = await asSetOfTwo(await fakeProject(seed, { config: options.config }));
  if (options.spare) {
    await f.p.editManifest((t) =>
      t.replace(
        "models:\n",
        `models:\n  spare_orders:\n    sql: models/eligible_orders.sql\n    output:\n      topic: spare_${f.p.outputTopic}\n`,
      )
    );
  }
  const path = `${f.p.dir}/create.plan.json`;
  const planned = await withSetsOpen(() =>
    plan({ dir: f.p.dir, ...f.deps, dockerEndpoint: f.dockerEndpoint })
  );
  if (planned.plan.blockers.length > 0) {
    throw new Error(`the set's plan is blocked: ${JSON.stringify(planned.plan.blockers)}`);
  }
  await writePlanFile(path, planned.plan);
  const created = await f.cli(
    ["-o", "json", "apply", "--project", f.p.dir, "--plan", path],
    SETS_OPEN,
  );
  if (created.code !== 0) {
    throw new Error(`the set's create failed (exit ${created.code}):\n${created.stdout}`);
  }
  const app = (created.json().data!.runners as Array<{ model: string; application_id: string }>)
    .find((r) => r.model === "eligible_orders")!.application_id;
  return Object.assign(f, { app });
}

/** The environment of a CLI run with the set journeys open (`SLUICE_TEST_ONLY_SETS=1`). */
export const SETS_OPEN: Record<string, string> = { [SETS_GATE]: "1" };

/** Run `body` with the set journeys open in this process (each test file has its own). */
export async function withSetsOpen<T>(body: () => Promise<T>): Promise<T> {
  Deno.env.set(SETS_GATE, "1");
  try {
    return await body();
  } finally {
    Deno.env.delete(SETS_GATE);
  }
}

/** The names of `applicationId`'s containers on the world's daemon `daemon`, sorted. */
export function containersOn(f: Pick<FakeProject, "world">, daemon: string, applicationId: string) {
  const w = f.world.endpoint(daemon).control.snapshot();
  return Object.values(w.docker.containers)
    .filter((c) => c.labels[LABEL.applicationId] === applicationId).map((c) => c.name).sort();
}

/**
 * `apply` of `args` (the CLI's arguments, sets open) killed by SIGKILL at `point`
 * (`site:side@n`), asserted; then what `state show` says: the pending operation and the
 * arguments that break the stale lock the kill left (none when it left none).
 */
export async function killedApply(
  f: FakeProject,
  args: string[],
  point: string,
): Promise<{ pending: { operation_id: string } | null; lockArgs: string[] }> {
  const killed = await f.cli(args, {
    ...SETS_OPEN,
    SLUICE_FAULT_POINT: point,
    SLUICE_TEST_ONLY_ALLOW_FAULTS: "1",
  });
  if (killed.signal !== "SIGKILL") {
    throw new Error(`${point}: not killed (exit ${killed.code})\n${killed.stderr}`);
  }
  const shown = (await f.cli(["-o", "json", "state", "show", "--project", f.p.dir])).json().data!;
  const lock = shown.lock as { stale: boolean; holder: { lock_id: string } | null };
  return {
    pending: shown.pending_operation as { operation_id: string } | null,
    lockArgs: lock.stale ? ["--break-stale-lock", lock.holder!.lock_id] : [],
  };
}
