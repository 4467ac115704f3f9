/**
 * The state store a project's manifest declares (`state:` in sluice.yaml): the one place that
 * turns it into a store configuration. Local files resolve against the project directory; a
 * PostgreSQL DSN is read from the variable the manifest names (never from the manifest itself),
 * and a variable that is not set is `ENV_STATE_DSN_MISSING` (exit 7).
 *
 * @example
 * ```ts
 * import { loadProject } from "../project/load.ts";
 * import { projectStoreConfig } from "./state_store.ts";
 * const project = await loadProject("./orders", { environment: null });
 * console.log(projectStoreConfig(project).backend);
 * ```
 * @module
 */
import { join, resolve } from "node:path";
import { SluiceError } from "../errors.ts";
import { loadProject, type Project } from "../project/load.ts";
import type { SettingsOverride } from "../project/settings_override.ts";
import type { StateStoreConfig } from "../state/open.ts";

/** Options of {@link projectStoreConfig}. */
export interface StoreResolution {
  /** PostgreSQL schema (default `sluice`). */
  schema?: string;
  /** How variables are read (default: the process environment). */
  env?: (name: string) => string | undefined;
}

/**
 * The store configuration a loaded project declares.
 *
 * @example
 * ```ts
 * import { projectStoreConfig } from "./state_store.ts";
 * // projectStoreConfig(project, { env: (n) => n === "SLUICE_STATE_DSN" ? "postgres://..." : undefined })
 * ```
 */
export function projectStoreConfig(
  project: Project,
  options: StoreResolution = {},
): StateStoreConfig {
  const m = project.manifest;
  if (m.state.backend === "local") {
    return {
      backend: "local",
      dir: resolve(project.dir, m.state.dir),
      project: m.project,
      environment: m.environment,
    };
  }
  const url = (options.env ?? readEnv)(m.state.dsnEnv);
  if (!url) {
    throw new SluiceError(
      "ENV_STATE_DSN_MISSING",
      `${
        join(project.dir, "sluice.yaml")
      }: state.dsn_env names $${m.state.dsnEnv} for the PostgreSQL state DSN, which is not set`,
      { evidence: { variable: m.state.dsnEnv } },
    );
  }
  return {
    backend: "postgres",
    url,
    origin: { ...m.addressSources["state.dsn_env"], variable: m.state.dsnEnv },
    schema: options.schema ?? "sluice",
    project: m.project,
    environment: m.environment,
  };
}

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    // without --allow-env the variable cannot be read: it is as good as unset
    return undefined;
  }
}

/**
 * Load the project's manifest and return the store it declares ({@link projectStoreConfig}).
 *
 * @example
 * ```ts
 * import { resolveStateStore } from "./state_store.ts";
 * const config = await resolveStateStore({ dir: "./orders" });
 * console.log(config.backend, config.project);
 * ```
 */
export async function resolveStateStore(
  ref: {
    /** Project directory (default "."). */
    dir?: string;
    /** Environment (required when the manifest declares environments). */
    environment?: string | null;
    /** PostgreSQL schema (default `sluice`). */
    schema?: string;
    /** A settings override given in code (`lib/project/settings_override.ts`). */
    settings?: SettingsOverride;
  } = {},
): Promise<StateStoreConfig> {
  const project = await loadProject(resolve(ref.dir ?? "."), {
    environment: ref.environment ?? null,
    settings: ref.settings,
  });
  return projectStoreConfig(project, { schema: ref.schema });
}

/** Which project's store to resolve ({@link resolveStateStore}). */
export type ProjectStoreRef = NonNullable<Parameters<typeof resolveStateStore>[0]>;
