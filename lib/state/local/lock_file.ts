/**
 * The local deployment lock: a lock file created exclusively (a fully written temp file
 * hard-linked into place, so the lock is never seen half-written) holding its owner's
 * metadata. A lock whose holder is a dead process on this host is diagnosed as stale and
 * reported; it is removed only by an explicit {@link breakStaleLockFile}.
 *
 * @example
 * ```ts
 * import { acquireLockFile, releaseLockFile } from "./lock_file.ts";
 * const dir = await Deno.makeTempDir();
 * const owner = {
 *   lock_id: crypto.randomUUID(), project: "orders", environment: null, actor: "me",
 *   host: "h", pid: Deno.pid, acquired_at: new Date().toISOString(),
 * };
 * await acquireLockFile(`${dir}/lock.json`, owner);
 * await releaseLockFile(`${dir}/lock.json`, owner.lock_id);
 * ```
 * @module
 */
import { hostname } from "node:os";
import process from "node:process";
import { dirname } from "node:path";
import { SluiceError } from "../../errors.ts";
import { canonicalJson } from "../_canonical.ts";
import type { LockOwner, LockStatus } from "../primitive.ts";
import { fsyncDir } from "../../fs/atomic_write.ts";

async function readHolder(path: string): Promise<LockOwner | null | "unreadable"> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
  try {
    const o = JSON.parse(text) as LockOwner;
    return typeof o?.lock_id === "string" ? o : "unreadable";
  } catch {
    return "unreadable";
  }
}

/**
 * Whether process `pid` of this host is alive: signal 0 asks the kernel without sending anything
 * (`ESRCH`: no such process; `EPERM`: it exists, owned by someone else). Null when it cannot
 * tell: no permission to ask (`--allow-run` missing) or a pid no process has (zero or negative
 * would name a process group). `/proc/<pid>` is not read: Deno requires `--allow-all` for it,
 * which the installed command does not have (docs/cli.md, "Install"), so an installed sluice
 * never saw a dead holder's lock as stale.
 */
function pidAlive(pid: number): boolean | null {
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ESRCH") return false;
    if (code === "EPERM") return true;
    return null;
  }
}

/**
 * Diagnose the lock file (read-only).
 *
 * @example
 * ```ts
 * import { inspectLockFile } from "./lock_file.ts";
 * const s = await inspectLockFile(`${await Deno.makeTempDir()}/lock.json`);
 * s.held; // false
 * ```
 */
export async function inspectLockFile(path: string): Promise<LockStatus> {
  const holder = await readHolder(path);
  if (holder === null) return { held: false, holder: null, stale: false, diagnosis: "not held" };
  if (holder === "unreadable") {
    return {
      held: true,
      holder: null,
      stale: false,
      diagnosis: `lock file ${path} is unreadable; inspect it by hand`,
    };
  }
  const since =
    `held by ${holder.actor} (pid ${holder.pid} on ${holder.host}) since ${holder.acquired_at}`;
  if (holder.host === hostname()) {
    const alive = pidAlive(holder.pid);
    if (alive === false) {
      return {
        held: true,
        holder,
        stale: true,
        diagnosis:
          `${since}; that process is dead: the lock is stale (break it explicitly with its lock ID ${holder.lock_id})`,
      };
    }
  }
  return { held: true, holder, stale: false, diagnosis: since };
}

/**
 * Create the lock file exclusively or throw STATE_LOCK_HELD naming the holder.
 *
 * @example
 * ```ts
 * import { acquireLockFile } from "./lock_file.ts";
 * const dir = await Deno.makeTempDir();
 * await acquireLockFile(`${dir}/lock.json`, {
 *   lock_id: crypto.randomUUID(), project: "p", environment: null, actor: "a", host: "h",
 *   pid: Deno.pid, acquired_at: new Date().toISOString(),
 * });
 * ```
 */
export async function acquireLockFile(path: string, owner: LockOwner): Promise<void> {
  const tmp = `${path}.${owner.lock_id}.tmp`;
  const f = await Deno.open(tmp, { write: true, createNew: true, mode: 0o644 });
  try {
    await f.write(new TextEncoder().encode(canonicalJson(owner)));
    await f.sync();
  } finally {
    f.close();
  }
  try {
    await Deno.link(tmp, path); // atomic, fails when the lock exists (O_EXCL semantics)
    await fsyncDir(dirname(path));
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) {
      const status = await inspectLockFile(path);
      throw new SluiceError(
        "STATE_LOCK_HELD",
        `deployment lock for ${owner.project}${
          owner.environment === null ? "" : `/${owner.environment}`
        } is ${status.diagnosis}`,
        { evidence: { holder: status.holder, stale: status.stale, path } },
      );
    }
    throw e;
  } finally {
    await Deno.remove(tmp).catch(() => {});
  }
}

/**
 * Throw STATE_LOCK_LOST unless the lock file still holds `lockId`.
 *
 * @example
 * ```ts
 * import { verifyLockFile } from "./lock_file.ts";
 * await verifyLockFile("/tmp/none/lock.json", "x").catch((e) => e.code); // "STATE_LOCK_LOST"
 * ```
 */
export async function verifyLockFile(path: string, lockId: string): Promise<void> {
  const holder = await readHolder(path);
  if (holder === null || holder === "unreadable" || holder.lock_id !== lockId) {
    throw new SluiceError(
      "STATE_LOCK_LOST",
      `deployment lock ${lockId} was lost (${
        holder === null
          ? "lock file is gone"
          : holder === "unreadable"
          ? "lock file unreadable"
          : `now held by ${holder.actor} pid ${holder.pid} since ${holder.acquired_at}`
      }); no further mutation is allowed`,
      { evidence: { lock_id: lockId, holder: typeof holder === "object" ? holder : null } },
    );
  }
}

/**
 * Release our own lock (STATE_LOCK_LOST when it is no longer ours).
 *
 * @example
 * ```ts
 * import { releaseLockFile } from "./lock_file.ts";
 * await releaseLockFile("/tmp/none/lock.json", "x").catch((e) => e.code);
 * ```
 */
export async function releaseLockFile(path: string, lockId: string): Promise<void> {
  await verifyLockFile(path, lockId);
  await Deno.remove(path);
  await fsyncDir(dirname(path));
}

/**
 * Remove a lock only when it is still `lockId` and diagnosed stale.
 *
 * @example
 * ```ts
 * import { breakStaleLockFile } from "./lock_file.ts";
 * await breakStaleLockFile("/tmp/none/lock.json", "x").catch((e) => e.code);
 * ```
 */
export async function breakStaleLockFile(path: string, lockId: string): Promise<void> {
  const status = await inspectLockFile(path);
  if (!status.held || status.holder?.lock_id !== lockId) {
    throw new SluiceError(
      "STATE_LOCK_NOT_STALE",
      `lock ${lockId} is not the current lock (${status.diagnosis})`,
    );
  }
  if (!status.stale) {
    throw new SluiceError(
      "STATE_LOCK_NOT_STALE",
      `lock ${lockId} is not stale: ${status.diagnosis}`,
    );
  }
  await Deno.remove(path);
  await fsyncDir(dirname(path));
}
