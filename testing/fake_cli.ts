/**
 * The real `sluice` command over a file-backed fake world, in its own OS process (test support
 * for the crash sweep and the journeys' tests on fakes).
 *
 * Run as a script, `deno run -A testing/fake_cli.ts --world FILE <sluice arguments...>` opens the
 * world ({@link openFakeWorld}) and calls the CLI's own {@link runCli} with the world's Docker,
 * Kafka and Connect ports, its clock and its ID source — so `plan`, `apply --plan`, `state show`,
 * `state runner-status` and `state resume` run exactly the production code, on fakes. The state
 * store is the real one the project's `sluice.yaml` names (local files, or PostgreSQL through the
 * DSN variable in the environment). The fault switch is honoured as by `bin/sluice`
 * (`SLUICE_FAULT_POINT` with `SLUICE_TEST_ONLY_ALLOW_FAULTS=1`), because it is `runCli` that
 * checks it.
 *
 * From a test, {@link fakeCli} spawns it and reports how the process ended.
 *
 * @example
 * ```ts
 * import { fakeCli } from "./fake_cli.ts";
 * // const r = await fakeCli(worldPath, ["-o", "json", "state", "show", "--project", dir]);
 * // r.code === 0 && r.json?.data
 * ```
 * @module
 */
import { fileURLToPath } from "node:url";
import { runCli } from "../cli/main.ts";
import { FAULT_ENV } from "../lib/fault/site.ts";
import { openFakeWorld } from "./fakes/fake_world.ts";

const SELF = fileURLToPath(import.meta.url);
const CONFIG = fileURLToPath(new URL("../deno.json", import.meta.url));

/** The CLI's `-o json` envelope (docs/cli.md). */
export interface CliEnvelope {
  ok: boolean;
  command: string;
  data: unknown;
  errors: Array<{ code: string; message: string; evidence?: unknown }>;
}

/** How one fake CLI process ended. */
export interface FakeCliResult {
  args: string[];
  /** The armed fault point, if any. */
  fault: string | null;
  /** Exit status; 137 when killed by SIGKILL (128 + 9). */
  code: number;
  signal: Deno.Signal | null;
  stdout: string;
  stderr: string;
  /** The `-o json` envelope, when stdout holds one. */
  json: CliEnvelope | null;
  /** The crossing named by the `SLUICE_FAULT_FIRED <site>:<side>@<n>` line on stderr. */
  fired: string | null;
  /** Died by SIGKILL after printing the marker of exactly the armed point. */
  killedAtFault: boolean;
  /** Killed by the parent because it ran past `timeoutMs` (never a fired fault). */
  timedOut: boolean;
  ms: number;
}

/** Options of {@link fakeCli}. */
export interface FakeCliOptions {
  /** `<site>:<before|after>[@n]`, armed for this process only. */
  fault?: string | null;
  /** Extra environment (e.g. the PostgreSQL DSN variable the manifest names). */
  env?: Record<string, string>;
  /** SIGKILL the process when it runs longer (default 300 s); reported as `timedOut`. */
  timeoutMs?: number;
}

/**
 * Run `sluice args...` over the world file in a fresh process.
 *
 * @example
 * ```ts
 * import { fakeCli } from "./fake_cli.ts";
 * // const r = await fakeCli("/tmp/w.json", ["apply", "--project", dir, "--plan", "plan.json"],
 * //   { fault: "docker.remove_old:after" });
 * // r.killedAtFault === true
 * ```
 */
export async function fakeCli(
  worldPath: string,
  args: string[],
  options: FakeCliOptions = {},
): Promise<FakeCliResult> {
  const env: Record<string, string> = { ...(options.env ?? {}), NO_COLOR: "1" };
  // a process is armed only explicitly: a switch in the parent's environment never leaks
  env[FAULT_ENV.point] = options.fault ?? "";
  if (options.fault) env[FAULT_ENV.allow] = "1";
  const started = Date.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "-A", "--config", CONFIG, SELF, "--world", worldPath, ...args],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
  const proc = child.spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      proc.kill("SIGKILL");
    } catch {
      // already gone
    }
  }, options.timeoutMs ?? 300_000);
  let out: Deno.CommandOutput;
  try {
    out = await proc.output();
  } finally {
    clearTimeout(timer);
  }
  const dec = new TextDecoder();
  const stdout = dec.decode(out.stdout);
  const stderr = dec.decode(out.stderr);
  const fired = /^SLUICE_FAULT_FIRED (\S+)$/m.exec(stderr)?.[1] ?? null;
  const signal = out.signal ?? null;
  let json: CliEnvelope | null = null;
  const text = stdout.trim();
  if (text.startsWith("{")) {
    try {
      json = JSON.parse(text) as CliEnvelope;
    } catch {
      json = null;
    }
  }
  const armed = options.fault ?? null;
  const firedMatches = armed !== null && fired !== null &&
    (fired === armed || (!/@\d+$/.test(armed) && fired === `${armed}@1`));
  return {
    args,
    fault: armed,
    code: signal === "SIGKILL" ? 137 : out.code,
    signal,
    stdout,
    stderr,
    json,
    fired,
    killedAtFault: !timedOut && signal === "SIGKILL" && firedMatches,
    timedOut,
    ms: Date.now() - started,
  };
}

/** The world file and the CLI arguments of this process's command line. */
function splitArgs(argv: string[]): { world: string; args: string[] } {
  if (argv[0] !== "--world" || !argv[1]) {
    throw new Error("usage: fake_cli.ts --world FILE <sluice arguments...>");
  }
  return { world: argv[1], args: argv.slice(2) };
}

/**
 * The body of this script's process: `--world FILE <sluice arguments...>` run through the CLI over
 * the world; returns the exit status (for a test entry point that observes the same run, e.g. the
 * sweep's lock-loss child, testing/sweep/lock_loss.ts).
 *
 * @example
 * ```ts
 * import { fakeCliMain } from "./fake_cli.ts";
 * // Deno.exit(await fakeCliMain(["--world", "/tmp/w.json", "state", "show", "--project", dir]));
 * ```
 */
export async function fakeCliMain(argv: string[]): Promise<number> {
  const { world: path, args } = splitArgs(argv);
  const world = openFakeWorld(path);
  const kafka = world.kafka(world.env.bootstrapHost);
  try {
    return await runCli(args, {
      docker: world.docker,
      // a docker.endpoints daemon is the world's daemon of that name (control.addDaemon)
      dockerEndpoint: (name) => world.endpoint(name).docker,
      kafka,
      // a declared Connect cluster is the world's, reached at the manifest's rest_host
      connect: (cluster) => world.connect(cluster.restHost),
      clock: world.clock,
      uuids: world.ids,
    });
  } finally {
    await kafka.close();
  }
}

if (import.meta.main) Deno.exit(await fakeCliMain(Deno.args));
