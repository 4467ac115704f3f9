/**
 * Durable file writes, the one writer of every file sluice writes: write a temp file beside the
 * target, fsync it, rename it over the target (or hard-link it into place for an exclusive
 * create), fsync the directory. Removal is unlink + directory fsync. A crash leaves the old file
 * or the new one, never a torn one; a temp file left by a crash is never read as the file.
 *
 * Each durable step can be a fault site (`lib/fault/site.ts`): the local state backend passes
 * the sites of the write it is making (`lib/protocol/state_sites.ts`), so a test can kill the process
 * after the temp file, after the rename or after the directory fsync. Without sites this is
 * the plain atomic writer for any other file (plan files, mounted plans, compiled artifacts,
 * the starter's project files).
 *
 * @example
 * ```ts
 * import { atomicReplace } from "./atomic_write.ts";
 * const dir = await Deno.makeTempDir();
 * await atomicReplace(`${dir}/plan.json`, "{}", { mode: 0o600 });
 * ```
 * @module
 */
import { dirname } from "node:path";
import { atSite, type FaultSite } from "../fault/site.ts";

/** The fault sites of one write's durable steps (any may be absent). */
export interface DurableStepSites {
  /** The temp file written and fsynced. */
  temp?: FaultSite;
  /** The temp file renamed over the target. */
  rename?: FaultSite;
  /** The temp file hard-linked into place (exclusive create). */
  link?: FaultSite;
  /** The directory fsynced (the rename, link or unlink is durable). */
  dirsync?: FaultSite;
  /** The target unlinked. */
  unlink?: FaultSite;
}

/** Options of a durable write. */
export interface DurableWriteOptions {
  /** File mode of a new file (default 0644). */
  mode?: number;
  /** Fault sites of the steps (state writes only). */
  sites?: DurableStepSites;
}

function step<T>(site: FaultSite | undefined, call: () => Promise<T>): Promise<T> {
  return site ? atSite(site, call) : call();
}

/** The temp file name pattern of {@link atomicReplace} (`<file>.tmp-<uuid>`). */
export const TEMP_FILE = /\.tmp-[0-9a-f-]{36}$/;

/**
 * fsync a directory so a rename, link or unlink inside it is durable.
 *
 * @example
 * ```ts
 * import { fsyncDir } from "./atomic_write.ts";
 * await fsyncDir(await Deno.makeTempDir());
 * ```
 */
export async function fsyncDir(dir: string): Promise<void> {
  const f = await Deno.open(dir, { read: true });
  try {
    await f.sync();
  } finally {
    f.close();
  }
}

/**
 * Create a directory (and its missing parents) durably: each parent of a directory created
 * here is fsynced, so the new entries survive a power loss. Existing directories are fine.
 *
 * @example
 * ```ts
 * import { ensureDir } from "./atomic_write.ts";
 * await ensureDir(`${await Deno.makeTempDir()}/a/b`);
 * ```
 */
export async function ensureDir(dir: string): Promise<void> {
  try {
    if ((await Deno.stat(dir)).isDirectory) return;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const parent = dirname(dir);
  if (parent !== dir) await ensureDir(parent);
  try {
    await Deno.mkdir(dir);
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    return;
  }
  await fsyncDir(parent);
}

async function writeTemp(path: string, data: string | Uint8Array, mode: number): Promise<string> {
  const tmp = `${path}.tmp-${crypto.randomUUID()}`;
  const f = await Deno.open(tmp, { write: true, createNew: true, mode });
  try {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    let off = 0;
    while (off < bytes.length) off += await f.write(bytes.subarray(off));
    await f.sync();
  } catch (e) {
    f.close();
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  f.close();
  return tmp;
}

/**
 * Atomically replace `path` with `data` (temp file, fsync, rename, fsync dir).
 *
 * @example
 * ```ts
 * import { atomicReplace } from "./atomic_write.ts";
 * const dir = await Deno.makeTempDir();
 * await atomicReplace(`${dir}/a.json`, '{"a":1}');
 * ```
 */
export async function atomicReplace(
  path: string,
  data: string | Uint8Array,
  options: DurableWriteOptions = {},
): Promise<void> {
  const s = options.sites ?? {};
  const tmp = await step(s.temp, () => writeTemp(path, data, options.mode ?? 0o644));
  try {
    await step(s.rename, () => Deno.rename(tmp, path));
  } catch (e) {
    // the rename did not happen: the old file stands, and the temp file is litter
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  await step(s.dirsync, () => fsyncDir(dirname(path)));
}

/**
 * Create `path` with `data` only if it does not exist (temp file, fsync, hard link, fsync
 * dir): never seen half-written, never overwriting. Returns false when `path` existed.
 *
 * @example
 * ```ts
 * import { exclusiveCreate } from "./atomic_write.ts";
 * const p = `${await Deno.makeTempDir()}/id.json`;
 * console.log(await exclusiveCreate(p, "{}"), await exclusiveCreate(p, "{}")); // true false
 * ```
 */
export async function exclusiveCreate(
  path: string,
  data: string | Uint8Array,
  options: DurableWriteOptions = {},
): Promise<boolean> {
  const s = options.sites ?? {};
  const tmp = await step(s.temp, () => writeTemp(path, data, options.mode ?? 0o644));
  try {
    await step(s.link, () => Deno.link(tmp, path));
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) return false;
    throw e;
  } finally {
    await Deno.remove(tmp).catch(() => {});
  }
  await step(s.dirsync, () => fsyncDir(dirname(path)));
  return true;
}

/**
 * Durably remove `path` (unlink, fsync dir). Missing files are fine.
 *
 * @example
 * ```ts
 * import { durableRemove } from "./atomic_write.ts";
 * await durableRemove(`${await Deno.makeTempDir()}/gone.json`);
 * ```
 */
export async function durableRemove(
  path: string,
  options: Pick<DurableWriteOptions, "sites"> = {},
): Promise<void> {
  const s = options.sites ?? {};
  await step(s.unlink, async () => {
    try {
      await Deno.remove(path);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  });
  await step(s.dirsync, () => fsyncDir(dirname(path)));
}
