/**
 * Helpers for the runner's real-broker tests and measurements: build the runner image, write a
 * mounted plan, start/stop/wait runner containers and read their status file. Every container
 * and volume created here carries the environment's labels plus `sluice.test=1`.
 *
 * @example
 * ```ts
 * import { buildRunnerImage, writePlan } from "./runner_fixture.ts";
 * const image = await buildRunnerImage();
 * const plan = await writePlan(dir, { ... });
 * ```
 * @module
 */
import { canonicalJson, sha256Hex } from "../lib/artifact/canonical.ts";
import { dockerCli } from "../harness/docker.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** Output of one CLI command. */
export interface CmdResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a command and collect its output. */
export async function run(cmd: string, args: string[], stdin?: string): Promise<CmdResult> {
  const p = new Deno.Command(cmd, {
    args,
    stdout: "piped",
    stderr: "piped",
    stdin: stdin === undefined ? "null" : "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = p.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await p.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Run the Docker CLI; throws with its stderr when `check` and the exit code is not 0. */
export async function docker(args: string[], check = true): Promise<CmdResult> {
  const r = await run(dockerCli(), args);
  if (check && r.code !== 0) {
    throw new Error(`docker ${args.join(" ")} → ${r.code}: ${r.stderr.trim()}`);
  }
  return r;
}

/**
 * Run the Docker CLI, which must succeed; its stdout and stderr as one text (`docker logs`
 * gives a container's stderr on its own).
 */
export async function dockerText(args: string[]): Promise<string> {
  const r = await docker(args);
  return r.stdout + r.stderr;
}

/** Build (or find) the runner image with runner/build.sh; returns its `sha256:` ID. */
export async function buildRunnerImage(): Promise<string> {
  const r = await run("bash", [`${ROOT}runner/build.sh`]);
  if (r.code !== 0) throw new Error(`runner/build.sh failed (${r.code}): ${r.stderr}`);
  const id = r.stdout.trim();
  if (!/^sha256:[0-9a-f]{64}$/.test(id)) throw new Error(`runner/build.sh printed '${r.stdout}'`);
  return id;
}

/** A predicate AST: `amount >= N AND paid = TRUE`. */
export function amountAtLeastAndPaid(n: number): unknown {
  return {
    kind: "and",
    args: [
      {
        kind: "compare",
        op: ">=",
        left: { kind: "column", name: "amount", type: "BIGINT" },
        right: { kind: "literal", type: "BIGINT", value: String(n) },
      },
      {
        kind: "compare",
        op: "=",
        left: { kind: "column", name: "paid", type: "BOOLEAN" },
        right: { kind: "literal", type: "BOOLEAN", value: true },
      },
    ],
  };
}

/** What a test plan varies. */
export interface PlanSpec {
  applicationId: string;
  inputTopic: string;
  outputTopic: string;
  predicate: unknown;
  image: string;
  network: string;
  bootstrap: string;
  clusterId: string;
  inputTopicId: string;
  outputTopicId: string;
  /** `on_invalid: dead_letter` to this topic, bound with its ID (absent: stop). */
  deadLetter?: { topic: string; id: string };
}

/** The orders schema used by the runner tests. */
export const ORDERS_SCHEMA = [
  { name: "order_id", type: "STRING", nullable: false },
  { name: "amount", type: "BIGINT", nullable: false },
  { name: "paid", type: "BOOLEAN", nullable: false },
  { name: "note", type: "STRING", nullable: true },
];

/** Canonical plan bytes and their sha256 for a spec. */
export function planBytes(spec: PlanSpec): { text: string; sha256: string } {
  const artifact = {
    format: "sluice.runner-artifact",
    version: 1,
    project: "rt",
    environment: null,
    model: "eligible_orders",
    application_id: spec.applicationId,
    input: { topic: spec.inputTopic },
    output: { topic: spec.outputTopic },
    schema: ORDERS_SCHEMA,
    projection: [
      { source: "order_id", name: "order_id" },
      { source: "amount", name: "amount" },
    ],
    predicate: spec.predicate,
    image: spec.image,
    network: spec.network,
    initial_offsets: "earliest",
    ownership: { managed_by: "sluice", project: "rt", environment: null },
    ...(spec.deadLetter
      ? { on_invalid: { policy: "dead_letter", topic: spec.deadLetter.topic } }
      : {}),
  };
  const plan = {
    format: "sluice.runner-plan",
    version: 1,
    artifact,
    artifact_sha256: sha256Hex(canonicalJson(artifact)),
    bootstrap_servers: spec.bootstrap,
    identity: {
      cluster_id: spec.clusterId,
      input_topic_id: spec.inputTopicId,
      output_topic_id: spec.outputTopicId,
      ...(spec.deadLetter ? { dead_letter_topic_id: spec.deadLetter.id } : {}),
    },
  };
  const text = canonicalJson(plan);
  return { text, sha256: sha256Hex(text) };
}

/** Write a plan file into `dir` and return its path and sha256. */
export async function writePlan(
  dir: string,
  name: string,
  spec: PlanSpec,
): Promise<{ path: string; sha256: string }> {
  const { text, sha256 } = planBytes(spec);
  const path = `${dir}/${name}.json`;
  await Deno.writeTextFile(path, text);
  await Deno.chmod(path, 0o644);
  return { path, sha256 };
}

/** Options of one runner container. */
export interface RunnerContainer {
  name: string;
  image: string;
  network: string;
  volume: string;
  planPath: string;
  planSha256: string;
  generation: string;
  labels: Record<string, string>;
  env?: Record<string, string>;
  /** Arguments after the image (default: none → `run`). */
  args?: string[];
}

function runArgs(c: RunnerContainer): string[] {
  const a = ["--name", c.name, "--network", c.network];
  for (const [k, v] of Object.entries({ ...c.labels, "sluice.test": "1" })) {
    a.push("--label", `${k}=${v}`);
  }
  a.push("-v", `${c.planPath}:/etc/sluice/plan.json:ro`, "-v", `${c.volume}:/var/lib/sluice`);
  a.push("-e", `SLUICE_PLAN_SHA256=${c.planSha256}`, "-e", `SLUICE_GENERATION=${c.generation}`);
  for (const [k, v] of Object.entries(c.env ?? {})) a.push("-e", `${k}=${v}`);
  a.push(c.image, ...(c.args ?? []));
  return a;
}

/** Start a runner container in the background. */
export async function startRunner(c: RunnerContainer): Promise<void> {
  await docker(["run", "-d", ...runArgs(c)]);
}

/** Run a runner container to completion (kept for its logs); returns exit code and stdout. */
export async function runRunnerToExit(c: RunnerContainer): Promise<CmdResult> {
  await docker(["run", "-d", ...runArgs(c)]);
  const code = Number((await docker(["wait", c.name])).stdout.trim());
  const logs = await docker(["logs", c.name]);
  return { code, stdout: logs.stdout, stderr: logs.stderr };
}

/** Create a labelled volume. */
export async function createVolume(name: string, labels: Record<string, string>): Promise<void> {
  const a = ["volume", "create"];
  for (const [k, v] of Object.entries({ ...labels, "sluice.test": "1" })) {
    a.push("--label", `${k}=${v}`);
  }
  await docker([...a, name]);
}

/** Poll until `fn` returns a value other than undefined, or throw after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  intervalMs = 200,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last}` : ""}`);
}

/** Wait for the container's stdout to contain the marker line for `state`. */
export function waitForState(name: string, state: string, timeoutMs = 90_000): Promise<true> {
  return waitFor(`${name} to report ${state}`, async () => {
    const logs = await docker(["logs", name], false);
    if (logs.stdout.split("\n").some((l) => l.startsWith(`SLUICE_RUNNER_STATE ${state} `))) {
      return true;
    }
    const state2 = await docker(["inspect", "-f", "{{.State.Status}}", name], false);
    if (state2.stdout.trim() === "exited") {
      throw new Error(
        `${name} exited before ${state}:\n${logs.stdout}\n${logs.stderr.slice(-3000)}`,
      );
    }
    return undefined;
  }, timeoutMs);
}

/** Exit code of a stopped container. */
export async function exitCode(name: string): Promise<number> {
  return Number((await docker(["inspect", "-f", "{{.State.ExitCode}}", name])).stdout.trim());
}

/** The last non-empty stdout line of a container, parsed as JSON. */
export async function lastStdoutJson(name: string): Promise<Record<string, unknown>> {
  const logs = await docker(["logs", name]);
  const lines = logs.stdout.split("\n").filter((l) => l.trim() !== "");
  return JSON.parse(lines[lines.length - 1]);
}

/** The runner's status file in a volume, read through a throw-away container. */
export async function readStatus(
  image: string,
  volume: string,
  labels: Record<string, string>,
): Promise<Record<string, unknown>> {
  const a = ["run", "--rm"];
  for (const [k, v] of Object.entries({ ...labels, "sluice.test": "1" })) {
    a.push("--label", `${k}=${v}`);
  }
  const r = await docker([
    ...a,
    "-v",
    `${volume}:/v:ro`,
    "--entrypoint",
    "cat",
    image,
    "/v/status.json",
  ]);
  return JSON.parse(r.stdout);
}

let testClasses: Promise<string> | undefined;

/**
 * Compile the runner's test tree once per process (`mvn test-compile`) and return the directory
 * of its classes. DevTools lives there, not in the production jar.
 */
function runnerTestClasses(): Promise<string> {
  testClasses ??= (async () => {
    const r = await run("mvn", [
      "-B",
      "-q",
      "-Dstyle.color=never",
      "-f",
      `${ROOT}runner/pom.xml`,
      "test-compile",
    ]);
    if (r.code !== 0) {
      throw new Error(`mvn test-compile failed (${r.code}): ${r.stdout}${r.stderr}`);
    }
    return `${ROOT}runner/target/test-classes`;
  })();
  return testClasses;
}

/**
 * Run a DevTools command (runner/src/test/java: produce, consume, offsets) inside the runner
 * image on the network, with the compiled test classes mounted read-only (no host Java run);
 * `stdin` is piped to it (`produce`, `produce-json`).
 */
export async function devTools(
  image: string,
  network: string,
  labels: Record<string, string>,
  args: string[],
  stdin?: string,
): Promise<string> {
  const classes = await runnerTestClasses();
  const a = ["run", "--rm", ...(stdin === undefined ? [] : ["-i"]), "--network", network];
  for (const [k, v] of Object.entries({ ...labels, "sluice.test": "1" })) {
    a.push("--label", `${k}=${v}`);
  }
  a.push(
    "-v",
    `${classes}:/opt/sluice/test-classes:ro`,
    "--entrypoint",
    "java",
    image,
    "-cp",
    "/opt/sluice/lib/*:/opt/sluice/test-classes",
    "dev.sluice.runner.DevTools",
    ...args,
  );
  const r = await run(dockerCli(), a, stdin);
  if (r.code !== 0) throw new Error(`DevTools ${args.join(" ")} → ${r.code}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Remove containers (with their anonymous volumes) and named volumes; ignores absent ones. */
export async function removeAll(containers: string[], volumes: string[]): Promise<void> {
  if (containers.length > 0) await docker(["rm", "-fv", ...containers], false);
  if (volumes.length > 0) await docker(["volume", "rm", "-f", ...volumes], false);
}
