/**
 * Network addresses for tests of unreachable providers: a TCP port on 127.0.0.1 that nothing
 * listens on, and a unix socket path that does not exist.
 *
 * @example
 * ```ts
 * import { closedPort, missingSocket } from "./net.ts";
 * console.log(`127.0.0.1:${await closedPort()}`, missingSocket());
 * ```
 * @module
 */

/** A port on 127.0.0.1 that nothing listens on: bound by the system, then released. */
export async function closedPort(): Promise<number> {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  // let the kernel finish releasing the socket
  await new Promise((r) => setTimeout(r, 10));
  return port;
}

/** A unix socket path under a directory that does not exist (nothing is created). */
export function missingSocket(): string {
  return `${Deno.env.get("TMPDIR") ?? "/tmp"}/sluice-nosock-${crypto.randomUUID()}/docker.sock`;
}
