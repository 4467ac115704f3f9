/**
 * A Docker daemon that accepts and never answers (stopped, hung, cut off mid-connection), for the
 * tests of what a bounded call makes of it: a unix socket that accepts every connection and never
 * writes.
 *
 * @example
 * ```ts
 * import { silentDaemon } from "./silent_daemon.ts";
 * await using daemon = await silentDaemon();
 * console.log(daemon.path.endsWith("/silent.sock")); // true
 * ```
 * @module
 */

/** A listening unix socket at `path` that says nothing; disposing it closes and removes it. */
export interface SilentDaemon {
  path: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Listen on a fresh unix socket that accepts every connection and never writes. */
export async function silentDaemon(): Promise<SilentDaemon> {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/silent.sock`;
  const listener = Deno.listen({ transport: "unix", path });
  const open: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) open.push(conn);
  })();
  return {
    path,
    async [Symbol.asyncDispose]() {
      listener.close();
      await accepting.catch(() => {});
      for (const c of open) c.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
