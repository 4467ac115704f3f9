/**
 * How the PostgreSQL state backend reaches its server over TLS: the DSN's own libpq parameters
 * (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`), read by sluice with libpq's meaning and handed
 * to node-postgres as explicit TLS options. The DSN comes from the variable `state.dsn_env`
 * names (or a flag), so every path it holds is the operator's, never the project's.
 *
 * node-postgres reads these parameters itself, but not with libpq's meaning (its `require`
 * verifies like `verify-full`, with a warning on the console), and it reads the files while the
 * client is made, where a missing one is a bare `ENOENT`. So sluice removes them from the
 * connection string and decides:
 *
 * | `sslmode`                   | TLS                                       | certificate chain checked                 | host name checked |
 * | --------------------------- | ----------------------------------------- | ----------------------------------------- | ----------------- |
 * | absent (and no other ssl*)  | as node-postgres decides (`PGSSLMODE`)    | as node-postgres decides                  | idem              |
 * | `disable`                   | no                                        | —                                         | —                 |
 * | `require`                   | yes                                       | only when `sslrootcert` is given          | no                |
 * | `verify-ca`                 | yes                                       | yes (`sslrootcert`, else the system's)    | no                |
 * | `verify-full`               | yes                                       | yes (`sslrootcert`, else the system's)    | yes               |
 *
 * `sslrootcert`, `sslcert` or `ssl=true` without `sslmode` mean `verify-full`. `allow` and
 * `prefer` (fall back to no TLS) are refused: sluice never silently drops encryption. A bad
 * value, a file that cannot be read, or a certificate without its key is
 * `ENV_STATE_DSN_INVALID`, naming the parameter and where the DSN came from, never the DSN.
 *
 * @example
 * ```ts
 * import { pgConnectionOptions } from "./pg_tls.ts";
 * const o = await pgConnectionOptions("postgres://db:5432/x?sslmode=require", {});
 * console.log(o.connectionString, o.sslmode); // postgres://db:5432/x require
 * ```
 * @module
 */
import type { ConnectionOptions } from "node:tls";
import { SluiceError } from "../../errors.ts";
import { type AddressOrigin, describeOrigin } from "../../providers/errors.ts";

/** The libpq modes sluice accepts. */
export const SSL_MODES = ["disable", "require", "verify-ca", "verify-full"] as const;
/** One of {@link SSL_MODES}. */
export type SslMode = typeof SSL_MODES[number];

/** The DSN's parameters sluice reads (and removes before node-postgres sees the string). */
const TLS_PARAMS = ["ssl", "sslmode", "sslrootcert", "sslcert", "sslkey", "uselibpqcompat"];

/** What node-postgres's client is given. */
export interface PgConnectionOptions {
  /** The DSN without its TLS parameters. */
  connectionString: string;
  /** The TLS options (false: none), or undefined: the DSN says nothing of TLS. */
  ssl?: false | ConnectionOptions;
  /** The mode in force, or null when the DSN says nothing of TLS. */
  sslmode: SslMode | null;
}

/** How a file named by the DSN is read (a test gives its own). */
export type ReadText = (path: string) => Promise<string>;

function invalid(origin: AddressOrigin, why: string, evidence: Record<string, unknown>) {
  return new SluiceError(
    "ENV_STATE_DSN_INVALID",
    `the PostgreSQL state DSN (${describeOrigin(origin)}) ${why}; its value is not shown`,
    { evidence: { origin, ...evidence } },
  );
}

/**
 * The client options for `url`: its TLS parameters read with libpq's meaning, their files read
 * now. Throws `ENV_STATE_DSN_INVALID` for a mode sluice refuses or a file it cannot read.
 *
 * @example
 * ```ts
 * import { pgConnectionOptions } from "./pg_tls.ts";
 * const o = await pgConnectionOptions("postgres://db/x", {});
 * console.log(o.ssl, o.sslmode); // undefined null
 * ```
 */
export async function pgConnectionOptions(
  url: string,
  origin: AddressOrigin,
  readText: ReadText = Deno.readTextFile,
): Promise<PgConnectionOptions> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // node-postgres reports it (without the value) when it connects
    return { connectionString: url, sslmode: null };
  }
  const params = parsed.searchParams;
  if (!TLS_PARAMS.some((p) => params.has(p))) return { connectionString: url, sslmode: null };
  const given = new Map(TLS_PARAMS.map((p) => [p, params.get(p) || null]));
  const get = (p: string) => given.get(p) ?? null;
  const written = get("sslmode");
  const ssl = get("ssl");
  let mode: SslMode;
  if (written !== null) {
    if (!(SSL_MODES as readonly string[]).includes(written)) {
      const fallback = written === "allow" || written === "prefer";
      throw invalid(
        origin,
        fallback
          ? `has sslmode=${written}, which falls back to an unencrypted connection; sluice ` +
            `takes ${SSL_MODES.join(", ")}`
          : `has sslmode=${written}; sluice takes ${SSL_MODES.join(", ")}`,
        { parameter: "sslmode", sslmode: written },
      );
    }
    mode = written as SslMode;
  } else if (ssl === "0" || ssl === "false") {
    mode = "disable";
  } else {
    mode = "verify-full";
  }
  for (const p of TLS_PARAMS) params.delete(p);
  const connectionString = parsed.href;
  if (mode === "disable") return { connectionString, ssl: false, sslmode: mode };

  const file = async (p: "sslrootcert" | "sslcert" | "sslkey"): Promise<string | undefined> => {
    const path = get(p);
    if (path === null) return undefined;
    try {
      return await readText(path);
    } catch (error) {
      const why = error instanceof Deno.errors.NotFound ? "no file there" : "it cannot be read";
      throw invalid(origin, `has ${p} naming a file sluice cannot use (${why})`, {
        parameter: p,
      });
    }
  };
  const [ca, cert, key] = [
    await file("sslrootcert"),
    await file("sslcert"),
    await file("sslkey"),
  ];
  if ((cert === undefined) !== (key === undefined)) {
    throw invalid(origin, "has only one of sslcert and sslkey; a client certificate needs both", {
      parameter: cert === undefined ? "sslcert" : "sslkey",
    });
  }
  const options: ConnectionOptions = {
    ...(ca !== undefined ? { ca } : {}),
    ...(cert !== undefined ? { cert, key } : {}),
  };
  if (mode === "require" && ca === undefined) options.rejectUnauthorized = false;
  // libpq: require with a root certificate checks the chain as verify-ca does
  if (mode === "verify-ca" || mode === "require") options.checkServerIdentity = () => undefined;
  return { connectionString, ssl: options, sslmode: mode };
}
