/**
 * Private helper: files as a container sees them. A path under a volume mount is a file of
 * that volume (kept in the world); a bind mount reads the real host file (the mounted plan is
 * a real file sluice wrote); anything else is the container's own filesystem.
 * @module
 */
import { Buffer } from "node:buffer";
import type { FakeContainer, FakeMount, World } from "./world.ts";

/** The mount that holds `path`, and the path relative to the mount's root ("" for itself). */
function mountOf(c: FakeContainer, path: string): { m: FakeMount; rel: string } | null {
  let best: { m: FakeMount; rel: string } | null = null;
  for (const m of c.mounts) {
    if (path === m.destination) return { m, rel: "" };
    if (path.startsWith(m.destination + "/")) {
      if (!best || m.destination.length > best.m.destination.length) {
        best = { m, rel: path.slice(m.destination.length + 1) };
      }
    }
  }
  return best;
}

function readHost(path: string): Uint8Array | null {
  try {
    return Deno.readFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.IsADirectory) return null;
    throw e;
  }
}

/** Bytes of `path` inside container `c`, or null when there is no such file. */
export function readContainerPath(w: World, c: FakeContainer, path: string): Uint8Array | null {
  const at = mountOf(c, path);
  if (at?.m.type === "bind") {
    return readHost(at.rel === "" ? at.m.source : `${at.m.source}/${at.rel}`);
  }
  if (at?.m.type === "volume") {
    const v = w.docker.volumes[at.m.source];
    const b64 = v?.files[at.rel];
    return b64 === undefined ? null : new Uint8Array(Buffer.from(b64, "base64"));
  }
  const own = c.rootfs[path];
  return own === undefined ? null : new Uint8Array(Buffer.from(own, "base64"));
}

/** Write `path` inside container `c` (a volume file, or the container's own filesystem). */
export function writeContainerPath(
  w: World,
  c: FakeContainer,
  path: string,
  bytes: Uint8Array,
): void {
  const at = mountOf(c, path);
  const b64 = Buffer.from(bytes).toString("base64");
  if (at?.m.type === "volume") {
    const v = w.docker.volumes[at.m.source];
    if (v && at.rel !== "") v.files[at.rel] = b64;
    return;
  }
  if (at?.m.type === "bind") {
    throw new Error(`fake: ${path} is on a read-only bind mount of ${c.name}`);
  }
  c.rootfs[path] = b64;
}

/** The file of a volume mounted at `dirname(path)`, by its base name (as a scratch container sees it). */
export function volumeKeyOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Bytes as stored in the world. */
export function toB64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64");
}

/** Bytes back from the world. */
export function fromB64(b64: string): Uint8Array {
  return new Uint8Array(Buffer.from(b64, "base64"));
}
