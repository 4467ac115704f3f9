/**
 * A bounded reachability check: open a TCP connection to each `host:port` (concurrently) and
 * close it at once. A refused connection, an unknown host or a connection that does not open
 * within the bound is known in milliseconds (or at the bound), where a client library's own
 * retries would take seconds to say the same. Used before a client's first request.
 *
 * @example
 * ```ts
 * import { reachAny } from "./reach.ts";
 * const failure = await reachAny(["127.0.0.1:1"], 5_000);
 * console.log(failure?.kind); // "unreachable"
 * ```
 * @module
 */
import { connect } from "node:net";
import { type Failure, transportFailure } from "./errors.ts";

/** `host:port` (or `[v6]:port`) split; null when there is no port. */
function split(address: string): { host: string; port: number } | null {
  const m = /^\[?(.+?)\]?:(\d+)$/.exec(address.trim());
  return m ? { host: m[1], port: Number(m[2]) } : null;
}

function reach(address: string, timeoutMs: number): Promise<string | null> {
  const hp = split(address);
  if (!hp) return Promise.resolve(`${address} has no port`);
  return new Promise((resolve) => {
    const socket = connect({ host: hp.host, port: hp.port });
    const done = (why: string | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(
      () => done(`connecting to ${address} timed out after ${timeoutMs} ms`),
      timeoutMs,
    );
    socket.once("connect", () => done(null));
    socket.once("error", (e) => done(transportFailure(e)?.detail ?? String(e)));
  });
}

/**
 * Null when at least one address accepts a TCP connection within `timeoutMs`; otherwise the
 * `unreachable` failure naming why each one did not.
 *
 * @example
 * ```ts
 * import { reachAny } from "./reach.ts";
 * console.log(await reachAny(["no-such-host.invalid:9092"], 2_000));
 * ```
 */
export async function reachAny(addresses: string[], timeoutMs: number): Promise<Failure | null> {
  const results = await Promise.all(addresses.map((a) => reach(a, timeoutMs)));
  if (results.some((r) => r === null)) return null;
  return { kind: "unreachable", detail: [...new Set(results)].join("; ") };
}
