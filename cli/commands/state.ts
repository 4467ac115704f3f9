/**
 * `sluice state show` and `sluice state init`. The store is the one declared in the
 * project's `sluice.yaml` (`--project DIR`, with `--env ENV` for a multi-environment
 * project), or named explicitly: `--state-dir DIR` (local files) or `--pg-url URL`
 * (PostgreSQL, optional `--schema`), with `--project-name NAME` and optional `--env ENV`
 * (omitted for a single-environment project; never "default").
 *
 * @example
 * ```sh
 * sluice state init --pg-url postgres://postgres@127.0.0.1:5432/postgres --project-name orders
 * sluice -o json state show --state-dir .sluice/state --project-name orders
 * ```
 * @module
 */
import type { Command } from "commander";
import { resolve } from "node:path";
import { SluiceError } from "../../lib/errors.ts";
import { loadProject } from "../../lib/project/load.ts";
import { openStateStore, type StateStoreConfig } from "../../lib/state/open.ts";
import type { IntegrityReport, StateSnapshot, StateStore } from "../../lib/state/store.ts";
import type { LockStatus } from "../../lib/state/primitive.ts";
import { outputFormat } from "../main.ts";
import { printResult } from "../output.ts";

interface StoreFlags {
  stateDir?: string;
  pgUrl?: string;
  schema?: string;
  projectName?: string;
  project?: string;
  env?: string;
}

function addStoreFlags(cmd: Command): Command {
  return cmd
    .option("--state-dir <dir>", "local state directory")
    .option("--pg-url <url>", "PostgreSQL URL (or SLUICE_PG_URL)")
    .option("--schema <name>", "PostgreSQL schema", "sluice")
    .option("--project-name <name>", "project name")
    .option("--project <dir>", "project directory: the store declared in its sluice.yaml")
    .option("--env <name>", "environment (omit for a single-environment project)");
}

/** Build a store config from explicit store flags (exported for tests). */
export function storeConfigFromFlags(flags: StoreFlags): StateStoreConfig {
  if (!flags.projectName) {
    throw new SluiceError(
      "USAGE_PROJECT",
      "name the project: --project DIR (reads sluice.yaml) or --project-name NAME",
    );
  }
  const environment = flags.env ?? null;
  const pgUrl = flags.pgUrl ?? (flags.stateDir ? undefined : envPgUrl());
  if (flags.stateDir && pgUrl) {
    throw new SluiceError("USAGE_STATE", "give either --state-dir or --pg-url, not both");
  }
  if (flags.stateDir) {
    return { backend: "local", dir: flags.stateDir, project: flags.projectName, environment };
  }
  if (pgUrl) {
    return {
      backend: "postgres",
      url: pgUrl,
      schema: flags.schema ?? "sluice",
      project: flags.projectName,
      environment,
    };
  }
  throw new SluiceError("USAGE_STATE", "name the state store with --state-dir or --pg-url");
}

/** The store a project manifest declares (`state:` in sluice.yaml). */
export async function storeConfigFromProject(flags: StoreFlags): Promise<StateStoreConfig> {
  if (flags.stateDir || flags.pgUrl || flags.projectName) {
    throw new SluiceError(
      "USAGE_STATE",
      "--project reads the store from sluice.yaml; do not combine it with --state-dir, --pg-url or --project-name",
    );
  }
  const project = await loadProject(flags.project, { environment: flags.env ?? null });
  const m = project.manifest;
  if (m.state.backend === "local") {
    return {
      backend: "local",
      dir: resolve(project.dir, m.state.dir),
      project: m.project,
      environment: m.environment,
    };
  }
  let url: string | undefined;
  try {
    url = Deno.env.get(m.state.dsnEnv) || undefined;
  } catch {
    url = undefined;
  }
  if (!url) {
    throw new SluiceError(
      "ENV_POSTGRES_DSN",
      `sluice.yaml names the PostgreSQL state DSN in $${m.state.dsnEnv}, which is not set`,
    );
  }
  return {
    backend: "postgres",
    url,
    schema: flags.schema ?? "sluice",
    project: m.project,
    environment: m.environment,
  };
}

function envPgUrl(): string | undefined {
  try {
    return Deno.env.get("SLUICE_PG_URL") || undefined;
  } catch {
    return undefined;
  }
}

/** The `state show` view: a summary, not the raw documents. */
export interface StateView {
  store: { store_id: string; backend: string; address: string };
  project: string;
  environment: string | null;
  revision: string;
  lock: LockStatus;
  ownership: {
    serial: number;
    state_checksum: string;
    topics: string[];
    runners: Array<{ model: string; application_id: string; artifact_sha256: string }>;
    /** Owned connectors (present when the ownership document has its connector section). */
    connectors?: Array<{ name: string; cluster: string; config_fingerprint: string }>;
  } | null;
  pending_operation: {
    operation_id: string;
    kind: string;
    envelope_version: number;
    status: string;
    last_checkpoint: string | null;
    incidents: number;
    resume_authorizations: number;
  } | null;
  history: { envelope_version: number; events: number; last_event: string | null };
}

/** Summarize a snapshot for `state show` (exported for tests). */
export function stateView(snap: StateSnapshot, lock: LockStatus): StateView {
  const c = snap.control?.opened ?? null;
  return {
    store: snap.identity,
    project: snap.project,
    environment: snap.environment,
    revision: snap.revision,
    lock,
    ownership: snap.ownership
      ? {
        serial: snap.ownership.document.serial,
        state_checksum: snap.ownership.checksum,
        topics: snap.ownership.document.topics.map((t) => t.name),
        runners: snap.ownership.document.runners.map((r) => ({
          model: r.model,
          application_id: r.application_id,
          artifact_sha256: r.artifact_sha256,
        })),
        ...(snap.ownership.document.connectors
          ? {
            connectors: snap.ownership.document.connectors.map((c) => ({
              name: c.name,
              cluster: c.cluster,
              config_fingerprint: c.config_fingerprint,
            })),
          }
          : {}),
      }
      : null,
    pending_operation: c
      ? {
        operation_id: c.operation_id,
        kind: c.kind,
        envelope_version: c.version,
        status: c.status,
        last_checkpoint: c.checkpoints.at(-1)?.name ?? null,
        incidents: c.incidents.length,
        resume_authorizations: c.resume_history.length,
      }
      : null,
    history: {
      envelope_version: snap.history.document.version,
      events: snap.history.events.length,
      last_event: snap.history.events.at(-1)?.kind ?? null,
    },
  };
}

function renderView(data: unknown): string {
  const v = data as StateView;
  const lines = [
    `store       ${v.store.backend} ${v.store.store_id} at ${v.store.address}`,
    `scope       ${v.project}${v.environment === null ? "" : ` / ${v.environment}`}`,
    `revision    ${v.revision}`,
    `lock        ${v.lock.diagnosis}${v.lock.holder ? ` [lock ${v.lock.holder.lock_id}]` : ""}`,
  ];
  if (v.ownership) {
    lines.push(`ownership   serial ${v.ownership.serial}, checksum ${v.ownership.state_checksum}`);
    for (const r of v.ownership.runners) {
      lines.push(`  runner    ${r.model} (${r.application_id}) artifact ${r.artifact_sha256}`);
    }
    for (const t of v.ownership.topics) lines.push(`  topic     ${t}`);
    for (const c of v.ownership.connectors ?? []) {
      lines.push(`  connector ${c.name} (cluster ${c.cluster}) config ${c.config_fingerprint}`);
    }
  } else {
    lines.push("ownership   none");
  }
  const p = v.pending_operation;
  lines.push(
    p
      ? `pending     ${p.kind} ${p.operation_id} (v${p.envelope_version}, ${p.status}, last boundary ${
        p.last_checkpoint ?? "intent"
      }, ${p.incidents} incidents, ${p.resume_authorizations} resumes)`
      : "pending     none",
  );
  lines.push(
    `history     v${v.history.envelope_version}, ${v.history.events} events${
      v.history.last_event ? `, last ${v.history.last_event}` : ""
    }`,
  );
  return lines.join("\n");
}

async function withStore<T>(flags: StoreFlags, fn: (s: StateStore) => Promise<T>): Promise<T> {
  const config = flags.project !== undefined
    ? await storeConfigFromProject(flags)
    : storeConfigFromFlags(flags);
  const store = openStateStore(config);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * Verify every stored byte of the project's state store (read-only, no lock): the report
 * `sluice status` renders before it observes anything.
 */
export async function storeIntegrity(
  flags: { project: string; env?: string },
): Promise<IntegrityReport> {
  return await withStore(
    { project: flags.project, env: flags.env },
    (store) => store.verifyIntegrity(),
  );
}

/** Register `sluice state show|init`. */
export function register(program: Command): void {
  // other groups (runner-status, resume) may add to the same `state` command
  const state = program.commands.find((c) => c.name() === "state") ??
    program.command("state").description("inspect and initialize deployment state");

  addStoreFlags(
    state.command("show").description(
      "show ownership, the pending operation, history and the lock",
    ),
  ).action(async (flags: StoreFlags, cmd: Command) => {
    const view = await withStore(flags, async (store) => {
      // read-only: no lock is taken, so `show` works while someone else holds it
      const snap = await store.load();
      return stateView(snap, await store.inspectLock());
    });
    printResult(outputFormat(cmd), "state show", view, renderView);
  });

  addStoreFlags(
    state.command("init").description(
      "create the state store (PostgreSQL schema with versioned migrations); idempotent",
    ),
  ).action(async (flags: StoreFlags, cmd: Command) => {
    const identity = await withStore(flags, (store) => store.init());
    printResult(
      outputFormat(cmd),
      "state init",
      identity,
      (d) => {
        const i = d as typeof identity;
        return `initialized ${i.backend} state store ${i.store_id} at ${i.address}`;
      },
    );
  });
}
