/**
 * A private PostgreSQL server for disruptions that restart the server itself: `initdb` into a
 * temporary directory, started with `pg_ctl` on its own port and socket directory, trust auth on
 * loopback only. Restarting or stopping it never touches the machine's server. As root the
 * server runs as the `postgres` user (PostgreSQL refuses root).
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

/** A started private server. */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust auth, no password). */
  url: string;
  port: number;
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
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
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
  let port = 0;
  const log = `${dataDir}/server.log`;
  const options = () =>
    `-p ${port} -k ${dataDir} -c listen_addresses=127.0.0.1 -c max_connections=40`;
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
      options(),
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
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
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
        options(),
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
