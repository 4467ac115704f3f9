/**
 * A private PostgreSQL server for disruptions that restart the server itself: `initdb` into a
 * temporary directory, started with `pg_ctl` on its own port and socket directory, trust auth on
 * loopback only. Restarting or stopping it never touches the machine's server. As root the
 * server runs as the `postgres` user (PostgreSQL refuses root).
 *
 * Secured ({@link PrivatePostgresOptions.secure}): TLS on (`ssl=on`, the certificate and key
 * given, e.g. made by `tls_certs.ts`), TCP connections only over TLS and only with a password
 * (`hostssl … scram-sha-256`; plain TCP is rejected), and a login role with a generated
 * password and a database of its own. The socket stays trusted, for the harness's own administration.
 *
 * @example
 * ```ts
 * import { startPrivatePostgres } from "./postgres.ts";
 * // const pg = await startPrivatePostgres();
 * // await pg.restart("immediate"); // a crash restart: recovery from the WAL
 * // await pg.stop();
 * ```
 * @module
 */

/** How {@link startPrivatePostgres} sets the server up. */
export interface PrivatePostgresOptions {
  /** TLS and a password role (see the module doc). */
  secure?: {
    /** The server's certificate and key (PEM files; copied into the data directory). */
    certFile: string;
    keyFile: string;
    /** The login role to create (default `sluice`). */
    role?: string;
  };
}

/** A started private server. */
export interface PrivatePostgres {
  /**
   * `postgres://postgres@127.0.0.1:<port>/postgres` (trust auth, no password); secured,
   * `postgres://<role>:<password>@localhost:<port>/<role>` (a database the role owns; no
   * `sslmode`: the test adds it).
   */
  url: string;
  /** The secured server's login role and its password (null when not secured). */
  login: { role: string; password: string } | null;
  /** The server's TCP port on 127.0.0.1. */
  port: number;
  /** The server's data directory (removed when it stops). */
  dataDir: string;
  /** The server's version string (`SHOW server_version` as `postgres --version` reports it). */
  version: string;
  /**
   * Restart the server: `fast` (clean shutdown, sessions terminated) or `immediate` (a crash:
   * no shutdown checkpoint, WAL recovery at start). Resolves once it accepts connections again.
   */
  restart(mode: "fast" | "immediate"): Promise<{ ms: number; log: string }>;
  /** Stop the server and remove its directory. Idempotent. */
  stop(): Promise<void>;
}

async function bindir(): Promise<string> {
  for (const v of ["17", "16", "15", "14", "13"]) {
    const d = `/usr/lib/postgresql/${v}/bin`;
    try {
      await Deno.stat(`${d}/initdb`);
      return d;
    } catch {
      // not this version
    }
  }
  const o = await new Deno.Command("pg_config", { args: ["--bindir"], stdout: "piped" }).output()
    .catch(() => null);
  const d = o ? new TextDecoder().decode(o.stdout).trim() : "";
  if (d) return d;
  throw new Error("private PostgreSQL: no initdb found (/usr/lib/postgresql/*/bin, pg_config)");
}

function isRoot(): boolean {
  try {
    return Deno.uid() === 0;
  } catch {
    return false;
  }
}

async function run(bin: string, args: string[]): Promise<{ code: number; out: string }> {
  // as root, run the server's tools as the postgres user
  const [cmd, argv] = isRoot() ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  const o = await new Deno.Command(cmd, { args: argv, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: o.code, out: dec.decode(o.stdout) + dec.decode(o.stderr) };
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** initdb + start a private server on a free port. The caller must `stop()` it. */
export async function startPrivatePostgres(
  options: PrivatePostgresOptions = {},
): Promise<PrivatePostgres> {
  const bin = await bindir();
  const dataDir = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "sluice-pg-" });
  if (isRoot()) {
    const o = await new Deno.Command("chown", { args: ["postgres:postgres", dataDir] }).output();
    if (o.code !== 0) throw new Error(`private PostgreSQL: cannot chown ${dataDir}`);
  }
  await Deno.chmod(dataDir, 0o700);
  const init = await run(`${bin}/initdb`, [
    "-D",
    dataDir,
    "-A",
    "trust",
    "-U",
    "postgres",
    "-E",
    "UTF8",
  ]);
  if (init.code !== 0) {
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    throw new Error(`private PostgreSQL: initdb failed: ${init.out.slice(-800)}`);
  }
  if (options.secure) await secureServer(dataDir, options.secure);
  let port = 0;
  const log = `${dataDir}/server.log`;
  const serverOptions = () =>
    `-p ${port} -k ${dataDir} -c listen_addresses=127.0.0.1 -c max_connections=40` +
    (options.secure ? " -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key" : "");
  let stopped = false;
  const start = async (): Promise<void> => {
    const r = await run(`${bin}/pg_ctl`, [
      "-D",
      dataDir,
      "-l",
      log,
      "-w",
      "-t",
      "60",
      "-o",
      serverOptions(),
      "start",
    ]);
    if (r.code !== 0) {
      throw new Error(`private PostgreSQL: pg_ctl start failed: ${r.out.slice(-800)}`);
    }
  };
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    port = freePort();
    try {
      await start();
      lastError = undefined;
      break;
    } catch (e) {
      lastError = e; // the port was taken in between: another one
    }
  }
  if (lastError) {
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    throw lastError;
  }
  const version = (await run(`${bin}/postgres`, ["--version"])).out.trim();
  let login: PrivatePostgres["login"] = null;
  if (options.secure) {
    login = { role: options.secure.role ?? "sluice", password: crypto.randomUUID() };
    for (
      const sql of [
        `CREATE ROLE "${login.role}" LOGIN PASSWORD '${login.password}'`,
        `CREATE DATABASE "${login.role}" OWNER "${login.role}"`,
      ]
    ) {
      const r = await run(`${bin}/psql`, [
        "-h",
        dataDir,
        "-p",
        String(port),
        "-U",
        "postgres",
        "-c",
        sql,
      ]);
      if (r.code !== 0) throw new Error(`private PostgreSQL: setting up the role failed: ${r.out}`);
    }
  }
  return {
    url: login
      ? `postgres://${login.role}:${login.password}@localhost:${port}/${login.role}`
      : `postgres://postgres@127.0.0.1:${port}/postgres`,
    login,
    port,
    dataDir,
    version,
    async restart(mode) {
      const t0 = Date.now();
      const r = await run(`${bin}/pg_ctl`, [
        "-D",
        dataDir,
        "-l",
        log,
        "-m",
        mode,
        "-w",
        "-t",
        "60",
        "-o",
        serverOptions(),
        "restart",
      ]);
      if (r.code !== 0) throw new Error(`private PostgreSQL: restart failed: ${r.out.slice(-800)}`);
      return { ms: Date.now() - t0, log: r.out.trim().split("\n").slice(-3).join("\n") };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await run(`${bin}/pg_ctl`, ["-D", dataDir, "-m", "fast", "-w", "-t", "60", "stop"]);
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * TLS on and passwords over TCP: the certificate and key copied where the server reads them
 * (readable by its user only, as it demands), and pg_hba.conf allowing TCP only over TLS with a
 * SCRAM password.
 */
async function secureServer(
  dataDir: string,
  secure: NonNullable<PrivatePostgresOptions["secure"]>,
): Promise<void> {
  await Deno.copyFile(secure.certFile, `${dataDir}/server.crt`);
  await Deno.copyFile(secure.keyFile, `${dataDir}/server.key`);
  await Deno.chmod(`${dataDir}/server.key`, 0o600);
  await Deno.writeTextFile(
    `${dataDir}/pg_hba.conf`,
    [
      "local all all trust",
      "hostssl all all 127.0.0.1/32 scram-sha-256",
      "hostnossl all all 127.0.0.1/32 reject",
      "",
    ].join("\n"),
  );
  if (isRoot()) {
    for (const f of ["server.crt", "server.key", "pg_hba.conf"]) {
      const o = await new Deno.Command("chown", { args: ["postgres:postgres", `${dataDir}/${f}`] })
        .output();
      if (o.code !== 0) throw new Error(`private PostgreSQL: cannot chown ${f}`);
    }
  }
}
