/**
 * The local files backend's storage primitive. Layout under the state directory:
 * `store.json` (store identity), and for the scope (`<project>/` for a single-environment
 * project, `<project>/environments/<env>/` otherwise) `ownership.json`,
 * `control.json`, `history.json` and `lock.json`. A write group is applied one atomic file
 * replacement at a time, in the order given (`atomicWrites: false`).
 *
 * @example
 * ```ts
 * import { LocalPrimitive } from "./local_primitive.ts";
 * const p = new LocalPrimitive(await Deno.makeTempDir(), "orders", null);
 * const id = await p.init();
 * console.log(id.backend, id.address);
 * ```
 * @module
 */
import { join, resolve } from "node:path";
import { SluiceError } from "../../errors.ts";
import { canonicalJson, sha256Hex } from "../_canonical.ts";
import { conflictError } from "../_stored.ts";
import type { StoreIdentity } from "../journal.ts";
import type {
  DocName,
  DocWrite,
  LockOwner,
  LockStatus,
  StatePrimitive,
  StoredBodies,
} from "../primitive.ts";
import { atomicReplace, durableRemove } from "./atomic_write.ts";
import {
  acquireLockFile,
  breakStaleLockFile,
  inspectLockFile,
  releaseLockFile,
  verifyLockFile,
} from "./lock_file.ts";

const ENV_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * The scope directory of a project environment: `<root>/<project>` for a single-environment
 * project (no invented "default" directory), `<root>/<project>/environments/<env>` otherwise.
 *
 * @example
 * ```ts
 * import { scopeDir } from "./local_primitive.ts";
 * scopeDir("/state", "orders", null); // "/state/orders"
 * ```
 */
export function scopeDir(root: string, project: string, environment: string | null): string {
  if (!ENV_NAME.test(project)) {
    throw new SluiceError("USAGE_PROJECT", `invalid project name ${project}`);
  }
  if (environment === null) return resolve(root, project);
  if (!ENV_NAME.test(environment)) {
    throw new SluiceError("USAGE_ENVIRONMENT", `invalid environment name ${environment}`);
  }
  return resolve(root, project, "environments", environment);
}

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/**
 * Local files storage primitive.
 *
 * @example
 * ```ts
 * import { LocalPrimitive } from "./local_primitive.ts";
 * new LocalPrimitive("/state", "orders", "prod").dir; // "/state/orders/environments/prod"
 * ```
 */
export class LocalPrimitive implements StatePrimitive {
  readonly backend = "local" as const;
  readonly atomicWrites = false;
  readonly root: string;
  readonly dir: string;
  readonly project: string;

  constructor(root: string, project: string, environment: string | null) {
    this.root = resolve(root);
    this.dir = scopeDir(root, project, environment);
    this.project = project;
  }

  #path(name: DocName | "lock"): string {
    return join(this.dir, `${name}.json`);
  }

  async init(): Promise<StoreIdentity> {
    const existing = await this.identity();
    if (existing) {
      await Deno.mkdir(this.dir, { recursive: true });
      return existing;
    }
    await Deno.mkdir(this.dir, { recursive: true });
    const doc = {
      format: "sluice.store",
      version: 1,
      store_id: crypto.randomUUID(),
      created_at: new Date().toISOString(),
    };
    await atomicReplace(join(this.root, "store.json"), canonicalJson(doc));
    return (await this.identity())!;
  }

  async identity(): Promise<StoreIdentity | null> {
    const path = join(this.root, "store.json");
    const text = await readOrNull(path);
    if (text === null) return null;
    let doc: { format?: unknown; store_id?: unknown };
    try {
      doc = JSON.parse(text);
    } catch {
      throw new SluiceError("STATE_CORRUPT_STORE", `${path} is not valid JSON (truncated?)`);
    }
    if (doc?.format !== "sluice.store" || typeof doc.store_id !== "string") {
      throw new SluiceError("STATE_CORRUPT_STORE", `${path} is not a sluice store identity`);
    }
    return { store_id: doc.store_id, backend: "local", address: this.dir };
  }

  async acquireLock(owner: LockOwner): Promise<void> {
    await Deno.mkdir(this.dir, { recursive: true });
    await acquireLockFile(this.#path("lock"), owner);
    // under the lock, temp files of a writer that died before its rename are garbage
    for await (const e of Deno.readDir(this.dir)) {
      if (/\.json\.tmp-[0-9a-f-]{36}$/.test(e.name)) {
        await Deno.remove(join(this.dir, e.name)).catch(() => {});
      }
    }
  }

  releaseLock(lockId: string): Promise<void> {
    return releaseLockFile(this.#path("lock"), lockId);
  }

  verifyLock(lockId: string): Promise<void> {
    return verifyLockFile(this.#path("lock"), lockId);
  }

  inspectLock(): Promise<LockStatus> {
    return inspectLockFile(this.#path("lock"));
  }

  breakStaleLock(lockId: string): Promise<void> {
    return breakStaleLockFile(this.#path("lock"), lockId);
  }

  async read(): Promise<StoredBodies> {
    return {
      ownership: await readOrNull(this.#path("ownership")),
      control: await readOrNull(this.#path("control")),
      history: await readOrNull(this.#path("history")),
    };
  }

  async commit(writes: DocWrite[], lockId: string): Promise<void> {
    // every expectation is checked before the first write (the lock excludes other writers)
    await this.verifyLock(lockId);
    for (const w of writes) await this.#expect(w);
    // not one transaction: each file is replaced atomically, in the caller's order
    for (const w of writes) {
      await this.verifyLock(lockId); // a lost lock stops further mutations
      await this.#expect(w);
      const path = this.#path(w.name);
      if (w.body === null) await durableRemove(path);
      else await atomicReplace(path, w.body);
    }
  }

  async #expect(w: DocWrite): Promise<void> {
    const current = await readOrNull(this.#path(w.name));
    const actual = current === null ? null : sha256Hex(current);
    if (actual !== w.expectedSha256) throw conflictError(w.name, w.expectedRevision, current);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
