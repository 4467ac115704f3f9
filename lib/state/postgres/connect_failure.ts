/**
 * Why the PostgreSQL state backend could not connect, as a provider error
 * (`lib/providers/errors.ts`) naming the redacted address and where the DSN came from:
 * `ENV_POSTGRES_UNREACHABLE` (nothing answered, or it closed before the session was ready) or
 * `ENV_POSTGRES_DENIED` (the server refused the role, the password or the database: SQLSTATE
 * class 28 and 3D000) or `ENV_POSTGRES_TLS` (the TLS handshake failed: the server's certificate
 * is not signed by the CA trusted, is for another host name or expired; or the server does not
 * speak TLS at all). All exit 7.
 *
 * @example
 * ```ts
 * import { connectFailure } from "./connect_failure.ts";
 * const e = connectFailure(Object.assign(new Error('database "x" does not exist'), { code: "3D000" }), {
 *   provider: "postgres", address: "postgres://db:5432/x?schema=sluice", origin: { flag: "--pg-url" },
 * });
 * console.log((e as { code: string }).code); // ENV_POSTGRES_DENIED
 * ```
 * @module
 */
import { errorChain, type Failure, providerFailure } from "../../providers/errors.ts";
import type { ProviderTarget } from "../../providers/errors.ts";

/** How long connecting (TCP, TLS, authentication) may take before PostgreSQL is unreachable. */
export const PG_CONNECT_TIMEOUT_MS = 10_000;

/** The server's refusal (SQLSTATE), or any other reason the session did not open. */
function pgConnectFailure(error: unknown): Failure | null {
  for (const e of errorChain(error)) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) {
      const detail = `${String(message)} (SQLSTATE ${code})`;
      return { kind: code.startsWith("28") || code === "3D000" ? "denied" : "unreachable", detail };
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  // node-postgres's words when the server answers the TLS request with 'N'
  if (/does not support SSL/i.test(message)) {
    return { kind: "untrusted", detail: `${message}: TLS was asked for (sslmode)` };
  }
  return {
    kind: "unreachable",
    detail: /timeout/i.test(message)
      ? `connecting timed out after ${PG_CONNECT_TIMEOUT_MS / 1000} s (${message})`
      : message,
  };
}

/**
 * The error for a failed connection attempt (what the client threw, classified).
 *
 * @example
 * ```ts
 * import { connectFailure } from "./connect_failure.ts";
 * const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"),
 *   { code: "ECONNREFUSED", syscall: "connect", address: "127.0.0.1", port: 1 });
 * const e = connectFailure(refused, { provider: "postgres",
 *   address: "postgres://127.0.0.1:1/postgres?schema=sluice", origin: { variable: "SLUICE_PG_URL" } });
 * console.log((e as { code: string }).code); // ENV_POSTGRES_UNREACHABLE
 * ```
 */
export function connectFailure(error: unknown, target: ProviderTarget): unknown {
  return providerFailure(
    error,
    target,
    { operation: "connect", mutation: false },
    pgConnectFailure,
  );
}
