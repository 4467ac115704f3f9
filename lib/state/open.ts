/**
 * `openStateStore(config)`: the one factory for both backends.
 *
 * @example
 * ```ts
 * import { openStateStore } from "./open.ts";
 * const store = openStateStore({
 *   backend: "local", dir: await Deno.makeTempDir(), project: "orders", environment: null,
 * });
 * await store.init();
 * await store.acquireLock({ actor: "me" });
 * const snap = await store.load();
 * console.log(snap.revision);
 * await store.close();
 * ```
 * @module
 */
import { type EngineOptions, StateEngine } from "./engine.ts";
import { LocalPrimitive } from "./local/local_primitive.ts";
import { PgPrimitive } from "./postgres/pg_primitive.ts";
import type { StateStore } from "./store.ts";
import { type AddressOrigin, describeOrigin } from "../providers/errors.ts";
import { SluiceError } from "../errors.ts";

/** Where the state lives. `environment: null` is a single-environment project. */
export type StateStoreConfig =
  | { backend: "local"; dir: string; project: string; environment: string | null }
  | {
    backend: "postgres";
    url: string;
    /** Schema holding sluice's tables (default `sluice`). */
    schema?: string;
    /** Where `url` came from (named when PostgreSQL cannot be reached). */
    origin?: AddressOrigin;
    project: string;
    environment: string | null;
  };

/**
 * Open a state store (PostgreSQL connects lazily, on first use).
 *
 * @example
 * ```ts
 * import { openStateStore } from "./open.ts";
 * const store = openStateStore({
 *   backend: "postgres", url: "postgres://postgres@127.0.0.1:5432/postgres",
 *   project: "orders", environment: "prod",
 * });
 * await store.close();
 * ```
 */
export function openStateStore(config: StateStoreConfig, options: EngineOptions = {}): StateStore {
  if (config.backend === "postgres") requireDsnUrl(config.url, config.origin ?? {});
  const primitive = config.backend === "local"
    ? new LocalPrimitive(config.dir, config.project, config.environment)
    : new PgPrimitive(config);
  return new StateEngine(primitive, config.project, config.environment, options);
}

/**
 * A state DSN must be a URL (`postgres://` or `postgresql://`). A libpq key/value string
 * (`host=db dbname=sluice ...`) is named as such, never shown: it may hold a password.
 */
function requireDsnUrl(url: string, origin: AddressOrigin): void {
  if (/^postgres(ql)?:\/\//i.test(url.trim())) return;
  const keyValue = /^\s*[a-z_]+\s*=/i.test(url);
  throw new SluiceError(
    "ENV_STATE_DSN_INVALID",
    `the PostgreSQL state DSN (${describeOrigin(origin)}) ${
      keyValue
        ? "is a key/value connection string (host=... dbname=...)"
        : "is not a postgres:// URL"
    }; sluice takes a URL, postgres://HOST:PORT/DBNAME with the user and password in it (or in ` +
      `PGUSER, PGPASSWORD, ~/.pgpass); its value is not shown`,
    { evidence: { origin, form: keyValue ? "key/value" : "unknown" } },
  );
}
