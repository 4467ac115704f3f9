/**
 * Atomic file replacement for files sluice writes outside its state store (plan files,
 * mounted runner plans): write a temporary file beside the target, fsync it, rename it over
 * the target, fsync the directory. A crash leaves the old file or the new one, never a torn
 * one. (The local state backend has its own writer with crash points: lib/state/local.)
 *
 * @example
 * ```ts
 * import { writeFileAtomic } from "./atomic_file.ts";
 * await writeFileAtomic("/tmp/plan.json", new TextEncoder().encode("{}"));
 * ```
 * @module
 */
import { dirname } from "node:path";

/** Write `bytes` to `path` atomically with the given file mode (default 0644). */
export async function writeFileAtomic(
  path: string,
  bytes: Uint8Array,
  mode = 0o644,
): Promise<void> {
  const tmp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  const f = await Deno.open(tmp, { write: true, createNew: true, mode });
  try {
    let off = 0;
    while (off < bytes.length) off += await f.write(bytes.subarray(off));
    await f.sync();
  } catch (error) {
    f.close();
    await Deno.remove(tmp).catch(() => {});
    throw error;
  }
  f.close();
  await Deno.rename(tmp, path);
  const dir = await Deno.open(dirname(path), { read: true });
  try {
    await dir.sync();
  } catch {
    // some filesystems cannot fsync a directory; the rename is still atomic
  } finally {
    dir.close();
  }
}
