/**
 * Durable file writes for the local backend, in one helper: write a temp file, fsync it,
 * rename it over the target, fsync the directory. Removal is unlink + directory fsync.
 * This is also the only place where crash fault points fire: with
 * `SLUICE_STATE_CRASH_AT=<n>` (and `SLUICE_STATE_CRASH_SIDE=before|mid|after`, default
 * before) the n-th durable write of the process kills the process with SIGKILL: before it
 * starts, after the temp file is written and fsynced but before the rename (`mid`), or
 * after the directory fsync.
 *
 * @example
 * ```ts
 * import { atomicReplace } from "./atomic_write.ts";
 * const dir = await Deno.makeTempDir();
 * await atomicReplace(`${dir}/state.json`, "{}");
 * ```
 * @module
 */
import { dirname } from "node:path";

let durableWrites = 0;

function envGet(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // no env permission: fault injection is off
  }
}

/** Fire the crash fault point for the current durable write, if configured. */
function crashPoint(side: "before" | "mid" | "after"): void {
  const at = envGet("SLUICE_STATE_CRASH_AT");
  if (at === undefined) return;
  const wanted = envGet("SLUICE_STATE_CRASH_SIDE") ?? "before";
  if (Number(at) === durableWrites && wanted === side) {
    // a real process death, not an exception
    Deno.kill(Deno.pid, "SIGKILL");
  }
}

/**
 * fsync a directory so a rename or unlink inside it is durable.
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
 * Atomically replace `path` with `text` (temp file, fsync, rename, fsync dir).
 *
 * @example
 * ```ts
 * import { atomicReplace } from "./atomic_write.ts";
 * const dir = await Deno.makeTempDir();
 * await atomicReplace(`${dir}/a.json`, '{"a":1}');
 * ```
 */
export async function atomicReplace(path: string, text: string): Promise<void> {
  durableWrites++;
  crashPoint("before");
  const tmp = `${path}.tmp-${crypto.randomUUID()}`;
  const f = await Deno.open(tmp, { write: true, createNew: true, mode: 0o644 });
  try {
    const bytes = new TextEncoder().encode(text);
    let off = 0;
    while (off < bytes.length) off += await f.write(bytes.subarray(off));
    await f.sync();
  } catch (e) {
    f.close();
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  f.close();
  crashPoint("mid");
  await Deno.rename(tmp, path);
  await fsyncDir(dirname(path));
  crashPoint("after");
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
export async function durableRemove(path: string): Promise<void> {
  durableWrites++;
  crashPoint("before");
  crashPoint("mid"); // nothing is half-done before an unlink
  try {
    await Deno.remove(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  await fsyncDir(dirname(path));
  crashPoint("after");
}
