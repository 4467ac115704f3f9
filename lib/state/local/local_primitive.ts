/**
 * The local files backend's storage primitive. Layout under the state directory:
 * `store.json` (store identity), `seal-key.json` (the plan-sealing key, mode 0600), and for the scope (`<project>/` for a single-environment
 * project, `<project>/environments/<env>/` otherwise) `ownership.json`,
 * `control.json`, `history.json` and `lock.json`. A write group is applied one atomic file
 * replacement at a time, in the transition's declared order (`atomicWrites: false`); each
 * durable step of each file and each lock operation crosses its fault site (`lib/protocol/state_sites.ts`).
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
import { atSite } from "../../fault/site.ts";
import { SluiceError } from "../../errors.ts";
import { canonicalJson, sha256Hex } from "../_canonical.ts";
import { conflictError } from "../_stored.ts";
import { newStoreRecord, openStoreRecord, sealStoreRecord } from "../identity.ts";
import { newSealKey, parseSealKey, type SealKey, sealKeyText } from "../seal_key.ts";
import type { StoreIdentity } from "../journal.ts";
import type {
  DocName,
  DocWrite,
  LockOwner,
  LockStatus,
  StatePrimitive,
  StoredBodies,
} from "../primitive.ts";
import {
  LOCAL_WRITE_ORDER,
  localWriteSites,
  lockOperationSite,
  type StateTransition,
} from "../../protocol/state_sites.ts";
import {
  atomicReplace,
  durableRemove,
  ensureDir,
  exclusiveCreate,
  TEMP_FILE,
} from "../../fs/atomic_write.ts";
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
 * The fault sites of each write of a group, checking the group follows the transition's
 * declared file order ({@link LOCAL_WRITE_ORDER}): an undeclared write is a programming error.
 */
function plannedSites(writes: DocWrite[], transition: StateTransition) {
  const order = LOCAL_WRITE_ORDER[transition];
  let at = 0;
  return writes.map((w) => {
    const kind = w.body === null ? "remove" : "replace";
    while (at < order.length && (order[at].file !== w.name || order[at].kind !== kind)) at++;
    if (at === order.length) {
      throw new Error(
        `${transition}: ${kind} ${w.name}.json is not in its declared write order ${
          order.map((o) => `${o.kind} ${o.file}`).join(", ")
        }`,
      );
    }
    at++;
    return localWriteSites(transition, w.name, kind);
  });
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
    const existing = await this.identity(); // a corrupt identity stops here: nothing written
    await ensureDir(this.dir);
    if (existing) {
      await this.#ensureSealKey(); // a store made before keyed seals gets its key here, once
      return existing;
    }
    // a missing identity beside existing documents is corruption, never a new store
    const docs = await this.read();
    const present = (Object.keys(docs) as DocName[]).filter((n) => docs[n] !== null);
    if (present.length > 0) {
      throw new SluiceError(
        "STATE_CORRUPT_STORE",
        `${this.#storePath}: store identity is missing but ${this.dir} holds ${
          present.join(", ")
        }; the identity is never re-created over existing state`,
        { evidence: { document: "store", where: this.#storePath, field: "record", present } },
      );
    }
    const record = sealStoreRecord(newStoreRecord(crypto.randomUUID(), new Date().toISOString()));
    // exclusive create: of two concurrent inits, one identity wins and both return it
    await exclusiveCreate(this.#storePath, canonicalJson(record), {
      sites: localWriteSites("init", "store", "create"),
    });
    await this.#ensureSealKey();
    return (await this.identity())!;
  }

  get #sealKeyPath(): string {
    return join(this.root, "seal-key.json");
  }

  /**
   * Create the plan-sealing key unless it exists. Exclusive and whole (temp file, link): of two
   * concurrent inits one key wins; a death before the link leaves no key, which the next init
   * (every session's first step) creates.
   */
  async #ensureSealKey(): Promise<void> {
    if ((await readOrNull(this.#sealKeyPath)) !== null) return;
    const key = newSealKey(new Date().toISOString());
    await exclusiveCreate(this.#sealKeyPath, sealKeyText(key), { mode: 0o600 });
  }

  async rotateSealKey(): Promise<SealKey> {
    const key = newSealKey(new Date().toISOString());
    await atomicReplace(this.#sealKeyPath, sealKeyText(key), { mode: 0o600 });
    return key;
  }

  async sealKey(): Promise<SealKey> {
    const path = this.#sealKeyPath;
    const text = await readOrNull(path);
    if (text === null) {
      throw new SluiceError(
        "STATE_CORRUPT_STORE",
        `${path}: the plan-sealing key is missing; 'sluice state init' creates a new one (plan files sealed with the old key are then refused: plan again)`,
        { evidence: { document: "seal_key", where: path, field: "record" } },
      );
    }
    return parseSealKey(text, path);
  }

  get #storePath(): string {
    return join(this.root, "store.json");
  }

  async identity(): Promise<StoreIdentity | null> {
    const path = this.#storePath;
    const text = await readOrNull(path);
    if (text === null) return null;
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new SluiceError(
        "STATE_CORRUPT_STORE",
        `${path}: store identity record: is not valid JSON (truncated?)`,
        { evidence: { document: "store", where: path, field: "record" } },
      );
    }
    const record = openStoreRecord(doc, path);
    if (canonicalJson(doc) !== text) {
      throw new SluiceError(
        "STATE_CORRUPT_STORE",
        `${path}: store identity record: is not in canonical form (edited by hand?)`,
        { evidence: { document: "store", where: path, field: "record" } },
      );
    }
    return { store_id: record.store_id, backend: "local", address: this.dir };
  }

  async acquireLock(owner: LockOwner): Promise<void> {
    await ensureDir(this.dir);
    await atSite(
      lockOperationSite("local", "acquire"),
      () => acquireLockFile(this.#path("lock"), owner),
    );
    // under the lock, temp files of a writer that died before its rename are garbage
    for await (const e of Deno.readDir(this.dir)) {
      if (TEMP_FILE.test(e.name)) {
        await Deno.remove(join(this.dir, e.name)).catch(() => {});
      }
    }
  }

  releaseLock(lockId: string): Promise<void> {
    return atSite(
      lockOperationSite("local", "release"),
      () => releaseLockFile(this.#path("lock"), lockId),
    );
  }

  verifyLock(lockId: string): Promise<void> {
    return verifyLockFile(this.#path("lock"), lockId);
  }

  inspectLock(): Promise<LockStatus> {
    return inspectLockFile(this.#path("lock"));
  }

  breakStaleLock(lockId: string): Promise<void> {
    return atSite(
      lockOperationSite("local", "break"),
      () => breakStaleLockFile(this.#path("lock"), lockId),
    );
  }

  locate(name: DocName): string {
    return this.#path(name);
  }

  async read(): Promise<StoredBodies> {
    return {
      ownership: await readOrNull(this.#path("ownership")),
      control: await readOrNull(this.#path("control")),
      history: await readOrNull(this.#path("history")),
    };
  }

  async commit(writes: DocWrite[], lockId: string, transition: StateTransition): Promise<void> {
    const sites = plannedSites(writes, transition);
    // every expectation is checked before the first write (the lock excludes other writers)
    await this.verifyLock(lockId);
    for (const w of writes) await this.#expect(w);
    // not one transaction: each file is replaced atomically, in the declared order
    for (const [i, w] of writes.entries()) {
      await this.verifyLock(lockId); // a lost lock stops further mutations
      await this.#expect(w);
      const path = this.#path(w.name);
      if (w.body === null) await durableRemove(path, { sites: sites[i] });
      else await atomicReplace(path, w.body, { sites: sites[i] });
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
