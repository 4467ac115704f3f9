/**
 * `sluice state show` and `sluice state init`. The store is the one declared in the
 * project's `sluice.yaml` (`--project DIR`, default the current directory as for `plan` and
 * `apply`, with `--env ENV` for a multi-environment project), or named explicitly: `--state-dir DIR` (local files) or `--pg-url URL`
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
import type { Command } from "npm:commander@15.1.0";
import {
  initStateStore,
  resolveStateStore,
  rotateSealKeyOf,
  showStateStore,
  SluiceError,
} from "../../mod.ts";
import type { StateStoreConfig, StateView } from "../../mod.ts";
import { outputFormat, printResult } from "../output.ts";

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
    .option(
      "--project <dir>",
      "project directory: the store declared in its sluice.yaml (default: the current directory)",
    )
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
      origin: flags.pgUrl ? { flag: "--pg-url" } : { variable: "SLUICE_PG_URL" },
      schema: flags.schema ?? "sluice",
      project: flags.projectName,
      environment,
    };
  }
  throw new SluiceError("USAGE_STATE", "name the state store with --state-dir or --pg-url");
}

/** The store a project manifest declares (`state:` in sluice.yaml). */
async function storeConfigFromProject(flags: StoreFlags): Promise<StateStoreConfig> {
  if (flags.stateDir || flags.pgUrl || flags.projectName) {
    throw new SluiceError(
      "USAGE_STATE",
      "--project reads the store from sluice.yaml; do not combine it with --state-dir, --pg-url or --project-name",
    );
  }
  return await resolveStateStore({
    dir: flags.project,
    environment: flags.env ?? null,
    schema: flags.schema,
  });
}

function envPgUrl(): string | undefined {
  try {
    return Deno.env.get("SLUICE_PG_URL") || undefined;
  } catch {
    return undefined;
  }
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
    for (const r of v.ownership.retained ?? []) {
      lines.push(
        `  kept      ${r.model} (${r.application_id}): volume ${r.volume} and the group's offsets, kept by removal ${r.removed_by}`,
      );
    }
  } else {
    lines.push("ownership   none");
  }
  const p = v.pending_operation;
  lines.push(
    p
      ? `pending     ${p.kind} ${p.operation_id} (v${p.envelope_version}, ${p.status}, last boundary ${
        p.last_checkpoint ?? "intent"
      }, ${p.incidents} incidents, ${p.resume_authorizations} resumes${
        p.receipt_archived ? ", receipt archived: state resume finishes its finalization" : ""
      })`
      : "pending     none",
  );
  lines.push(
    `history     v${v.history.envelope_version}, ${v.history.events} events${
      v.history.last_event ? `, last ${v.history.last_event}` : ""
    }`,
  );
  return lines.join("\n");
}

/**
 * The store named by the flags: the one given explicitly (`--state-dir`, `--pg-url` or
 * `--project-name`), else the project's, in the current directory unless `--project` names one.
 */
export function storeSource(flags: StoreFlags): "explicit" | "project" {
  return flags.project === undefined && (flags.stateDir || flags.pgUrl || flags.projectName)
    ? "explicit"
    : "project";
}

async function storeConfig(flags: StoreFlags): Promise<StateStoreConfig> {
  return storeSource(flags) === "project"
    ? await storeConfigFromProject({ ...flags, project: flags.project ?? "." })
    : storeConfigFromFlags(flags);
}

/** Register `sluice state show|init|rotate-seal-key`. */
export function register(program: Command): void {
  // other groups (runner-status, resume) may add to the same `state` command
  const state = program.commands.find((c) => c.name() === "state") ??
    program.command("state").description("inspect and initialize deployment state");

  addStoreFlags(
    state.command("show").description(
      "show ownership, the pending operation, history and the lock",
    ),
  ).action(async (flags: StoreFlags, cmd: Command) => {
    // read-only: no lock is taken, so `show` works while someone else holds it
    const view = await showStateStore(await storeConfig(flags));
    printResult(outputFormat(cmd), "state show", view, renderView);
  });

  addStoreFlags(
    state.command("init").description(
      "create the state store (PostgreSQL schema with versioned migrations); idempotent",
    ),
  ).action(async (flags: StoreFlags, cmd: Command) => {
    const identity = await initStateStore(await storeConfig(flags));
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

  addStoreFlags(
    state.command("rotate-seal-key").description(
      "replace the store's plan-sealing key: plan files sealed before are refused (plan again)",
    ),
  ).action(async (flags: StoreFlags, cmd: Command) => {
    const r = await rotateSealKeyOf(await storeConfig(flags));
    printResult(outputFormat(cmd), "state rotate-seal-key", r, (d) => {
      const x = d as typeof r;
      return `rotated the plan-sealing key of state store ${x.store_id}: ${x.previous_key_id} → ${x.key_id}; plan files sealed with ${x.previous_key_id} are refused from now on (plan again), except the plan of a pending operation`;
    });
  });
}
