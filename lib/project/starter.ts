/**
 * The `sluice init` starter: the orders project (a managed `raw_orders` source, the
 * `eligible_orders` model, the external `fraud_app` consumer and sample records).
 * Never overwrites a file unless forced; a dry run only lists what would be written.
 *
 * @example
 * ```ts
 * import { initProject } from "./starter.ts";
 * const result = await initProject("/tmp/orders", { dryRun: true });
 * console.log(result.files.map((f) => `${f.action} ${f.path}`));
 * ```
 * @module
 */
import { stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { SluiceError } from "../errors.ts";
import { atomicReplace, ensureDir } from "../fs/atomic_write.ts";

/** The placeholder image ID of the starter: valid syntax, no real image. */
export const PLACEHOLDER_IMAGE = `sha256:${"0".repeat(64)}`;

const MANIFEST = `# sluice project manifest: see docs/project-format.md
project: orders

kafka:
  # address of the broker for the sluice CLI on this machine
  bootstrap_host: localhost:19092
  # address of the broker for runner containers on the Docker network
  bootstrap_internal: kafka:9092
network: sluice-net

# The runner image, as an immutable image ID (or name@sha256:<digest>). This placeholder
# passes validation but names no image: run \`sluice runtime build\` and paste the ID it prints.
image: ${PLACEHOLDER_IMAGE}

# where a new consumer group starts reading: earliest or latest
initial_offsets: earliest

state:
  backend: local
  dir: .sluice/state
  # or, shared by a team (the DSN is read from the variable, never written here):
  # backend: postgres
  # dsn_env: SLUICE_STATE_DSN

sources:
  raw_orders:
    kind: managed
    partitions: 3
    schema:
      - { name: order_id, type: STRING }
      - { name: amount, type: BIGINT }
      - { name: paid, type: BOOLEAN }
      - { name: customer, type: STRING, nullable: true }

models:
  eligible_orders:
    sql: models/eligible_orders.sql
    output:
      topic: eligible_orders

# downstream applications (metadata only: sluice never touches them)
externals:
  fraud_app:
    consumes: eligible_orders
    columns:
      - { name: order_id, type: STRING }
      - { name: amount, type: BIGINT }
`;

const MODEL = `-- Orders worth reviewing: paid orders of at least 100.
SELECT order_id, amount, paid
FROM raw_orders
WHERE amount >= 100 AND paid = TRUE
`;

const SAMPLES = [
  { key: "o-1001", value: { order_id: "o-1001", amount: 250, paid: true, customer: "c-17" } },
  { key: "o-1002", value: { order_id: "o-1002", amount: 40, paid: true, customer: "c-03" } },
  { key: "o-1003", value: { order_id: "o-1003", amount: 120, paid: false, customer: null } },
  { key: "o-1004", value: { order_id: "o-1004", amount: 100, paid: true, customer: null } },
  { key: "o-1005", value: { order_id: "o-1005", amount: 99, paid: true, customer: "c-17" } },
  { key: "o-1006", value: { order_id: "o-1006", amount: 5000, paid: true, customer: "c-42" } },
].map((r) => JSON.stringify(r)).join("\n") + "\n";

const GITIGNORE = `# local sluice state and compiled artifacts
.sluice/
`;

/** One starter file: a path relative to the project directory and its content. */
export interface StarterFile {
  path: string;
  content: string;
}

/** The starter's files, in the order they are written. */
export function starterFiles(): StarterFile[] {
  return [
    { path: "sluice.yaml", content: MANIFEST },
    { path: "models/eligible_orders.sql", content: MODEL },
    { path: "samples/raw_orders.jsonl", content: SAMPLES },
    { path: ".gitignore", content: GITIGNORE },
  ];
}

/** What `init` did (or would do) with each file. */
export interface InitResult {
  /** The project directory. */
  dir: string;
  /** True when nothing was written (the `dryRun` option was given). */
  dry_run: boolean;
  /** Each file, created or overwritten. */
  files: Array<{ path: string; action: "create" | "overwrite" }>;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Write the starter project into `dir` (created if missing). Throws `PROJECT_EXISTS`,
 * listing the files, when any would be overwritten without `force`; writes nothing then.
 * @example
 * ```ts
 * import { initProject } from "./starter.ts";
 * const { files } = await initProject("inventory", { force: false });
 * console.log(files.length);
 * ```
 */
export async function initProject(
  dir: string,
  options: {
    /** Overwrite existing files. */
    force?: boolean;
    /** Only report what would be written. */
    dryRun?: boolean;
  } = {},
): Promise<InitResult> {
  const files = starterFiles();
  const plan: InitResult["files"] = [];
  const existing: string[] = [];
  for (const f of files) {
    const present = await exists(join(dir, f.path));
    if (present) existing.push(f.path);
    plan.push({ path: f.path, action: present ? "overwrite" : "create" });
  }
  if (existing.length > 0 && !options.force) {
    throw new SluiceError(
      "PROJECT_EXISTS",
      `${resolve(dir)} already has ${
        existing.join(", ")
      }; nothing was written (use --force to overwrite)`,
      { evidence: { dir: resolve(dir), existing } },
    );
  }
  if (!options.dryRun) {
    for (const f of files) {
      const path = join(dir, f.path);
      await ensureDir(dirname(path));
      // each file whole or not at all: an interrupted init never leaves a torn sluice.yaml
      await atomicReplace(path, f.content);
    }
  }
  return { dir: resolve(dir), dry_run: options.dryRun === true, files: plan };
}

/** Options of {@link initProject}. */
export type InitOptions = NonNullable<Parameters<typeof initProject>[1]>;
