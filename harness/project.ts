/**
 * Test projects: the orders starter written into a temporary directory and pointed at a
 * harness environment, with a unique project name so that cases sharing one broker never
 * share an application ID, a topic or a group.
 *
 * @example
 * ```ts
 * import { starterProject } from "./project.ts";
 * // const p = await starterProject(env, { image: runnerImageId });
 * ```
 * @module
 */
import { initProject } from "../lib/project/starter.ts";
import type { EnvDescriptor } from "./env.ts";

/** A starter project prepared for one test case. */
export interface TestProject {
  dir: string;
  name: string;
  /** Topic names of the starter, prefixed for this case. */
  inputTopic: string;
  outputTopic: string;
  /** Rewrite the model's WHERE clause (a predicate change). */
  setPredicate(sql: string): Promise<void>;
  /** Edit sluice.yaml text. */
  editManifest(edit: (text: string) => string): Promise<void>;
}

/** The runner image ID built by runner/build.sh (fails if it is not built). */
export async function runnerImageId(): Promise<string> {
  const root = new URL("..", import.meta.url).pathname;
  const out = await new Deno.Command("bash", {
    args: [`${root}runner/build.sh`, "--check"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (out.code !== 0 || !/^sha256:[0-9a-f]{64}$/.test(text)) {
    throw new Error(`runner image is not built (run runner/build.sh): ${text}`);
  }
  return text;
}

/** Write the orders starter for `env`, uniquely named, optionally with a PostgreSQL state DSN variable. */
export async function starterProject(
  env: EnvDescriptor,
  options: {
    image: string;
    stateDsnEnv?: string;
    initialOffsets?: "earliest" | "latest";
    /** Where to make the project's temporary directory (default: the system's). */
    parentDir?: string;
  },
): Promise<TestProject> {
  const dir = await Deno.makeTempDir({ prefix: "sluice-project-", dir: options.parentDir });
  await initProject(dir);
  return await pointStarterAt(dir, env, options);
}

/**
 * Point the orders starter written in `dir` (by `initProject` or an installed `sluice init`) at
 * `env`, with a unique project name and topics.
 */
export async function pointStarterAt(
  dir: string,
  env: EnvDescriptor,
  options: { image: string; stateDsnEnv?: string; initialOffsets?: "earliest" | "latest" },
): Promise<TestProject> {
  const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 8);
  const name = `orders${suffix}`;
  const inputTopic = `raw_orders_${suffix}`;
  const outputTopic = `eligible_orders_${suffix}`;
  const manifest = `${dir}/sluice.yaml`;
  let text = await Deno.readTextFile(manifest);
  text = text
    .replace(/^project: .*$/m, `project: ${name}`)
    .replace(/bootstrap_host: .*$/m, `bootstrap_host: ${env.bootstrapHost}`)
    .replace(/bootstrap_internal: .*$/m, `bootstrap_internal: ${env.bootstrapInternal}`)
    .replace(/^network: .*$/m, `network: ${env.network}`)
    .replace(/^image: .*$/m, `image: ${options.image}`)
    .replace(/^initial_offsets: .*$/m, `initial_offsets: ${options.initialOffsets ?? "earliest"}`)
    .replace(/^ {2}raw_orders:$/m, `  raw_orders:\n    topic: ${inputTopic}`)
    .replace(/topic: eligible_orders$/m, `topic: ${outputTopic}`);
  if (options.stateDsnEnv) {
    text = text.replace(
      / {2}backend: local\n {2}dir: \.sluice\/state\n/,
      `  backend: postgres\n  dsn_env: ${options.stateDsnEnv}\n`,
    );
  }
  await Deno.writeTextFile(manifest, text);
  const sqlPath = `${dir}/models/eligible_orders.sql`;
  return {
    dir,
    name,
    inputTopic,
    outputTopic,
    async setPredicate(sql: string) {
      const t = await Deno.readTextFile(sqlPath);
      await Deno.writeTextFile(sqlPath, t.replace(/WHERE .*$/m, `WHERE ${sql}`));
    },
    async editManifest(edit) {
      await Deno.writeTextFile(manifest, edit(await Deno.readTextFile(manifest)));
    },
  };
}
