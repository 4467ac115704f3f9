/**
 * The sweep's lock-loss pass (issue 26 item 2): one process of a journey loses its deployment
 * lock at a fault site — taken over by another holder — and goes on.
 *
 * {@link lockLossCli} runs the real CLI over the case's world in a child process (this module is
 * its entry point) with {@link LOCK_LOSS_ENV} naming `<site>:<side>`. At the site's first
 * crossing on that side the child stops itself (SIGSTOP: the crash sweep's site, the same
 * crossing, but no death); the parent notes the provider mutations and the state documents as
 * they are, takes the lock over ({@link takeOver}: the local lock file replaced by another live
 * holder's; on PostgreSQL the holding session terminated and the advisory lock taken by another
 * session, its metadata row written by sluice's own primitive), lets the child continue
 * (SIGCONT) and waits for its end. The other holder releases only after the child ended, so the
 * recovery that follows runs as an operator's would once the lock is free again.
 *
 * What the child did after the loss is in {@link LockLoss}: its provider mutations (none is
 * allowed after the loss; on the `before` side of a provider site the site's own call was
 * already authorized, and the child reports where that call ended) and the state documents it
 * changed (none, but the file a local write was in the middle of).
 *
 * @example
 * ```ts
 * import { lockLossCli } from "./lock_loss.ts";
 * // const { result, loss } = await lockLossCli(cw, ["-o", "json", "apply", ...], "docker.remove_old:after");
 * // loss?.after.length === 0
 * ```
 * @module
 */
import { hostname } from "node:os";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { SluiceError } from "../../lib/errors.ts";
import { FAULT_ENV, onCrossing } from "../../lib/fault/site.ts";
import { acquireLockFile, releaseLockFile } from "../../lib/state/local/lock_file.ts";
import { advisoryKey, PgPrimitive } from "../../lib/state/postgres/pg_primitive.ts";
import type { LockOwner } from "../../lib/state/primitive.ts";
import type { MutationRecord, World } from "../fakes/world.ts";
import { type CliEnvelope, fakeCliMain, type FakeCliResult } from "../fake_cli.ts";
import type { CaseWorld } from "./fixture.ts";
import { readWorldFile } from "./reads.ts";

const SELF = fileURLToPath(import.meta.url);
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

/** The child's switch: `<site>:<before|after>`, the crossing at which it stops for the loss. */
export const LOCK_LOSS_ENV = "SLUICE_SWEEP_LOCK_LOSS";
const STOPPED = "SLUICE_SWEEP_LOCK_LOSS_STOPPED";
const SITE_DONE = "SLUICE_SWEEP_LOCK_LOSS_SITE_DONE";
/** The actor of the other holder. */
export const OTHER_HOLDER = "sweep: another holder";

/** The state documents compared across the loss. */
const DOCS = ["ownership", "control", "history"] as const;

/** What one process did around the loss of its lock. */
export interface LockLoss {
  /** `<site>:<side>`. */
  point: string;
  /**
   * How the lock was lost: `taken` from the process (or from whoever held it), `held` by the
   * other holder while the process held none (it never had it, or had not yet taken it).
   */
  how: "taken" | "held";
  /** The world's last mutation sequence number at the loss. */
  lossSeq: number;
  /**
   * On the `before` side of a site whose call went on: the sequence number when that call
   * returned (its mutations were authorized before the loss). Null otherwise.
   */
  siteDoneSeq: number | null;
  /** The process's provider mutations after the loss (beyond the site's own call). */
  after: MutationRecord[];
  /** The operation pending in the state at the loss, if any. */
  pendingAtLoss: string | null;
  /** The state documents the process changed after the loss. */
  changed: string[];
  /** The operation the process's answer names (its result's, or an error's evidence's). */
  named: string | null;
  /** The operation the command line named (`--operation-id`), if any. */
  given: string | null;
}

/** The operation ID an answer names: the result's, or the first error evidence's that has one. */
function namedOperation(json: CliEnvelope | null): string | null {
  const data = json?.data as { operation_id?: unknown } | null | undefined;
  if (typeof data?.operation_id === "string") return data.operation_id;
  for (const e of json?.errors ?? []) {
    const ev = e.evidence as
      | { operation_id?: unknown; result?: { operation_id?: unknown } }
      | undefined;
    const id = ev?.operation_id ?? ev?.result?.operation_id;
    if (typeof id === "string") return id;
  }
  return null;
}

/** The provider mutations of a world (runner processes and test controls excluded). */
function providerLog(w: World): MutationRecord[] {
  return w.log.filter((m) => m.by === "docker" || m.by === "kafka" || m.by === "connect");
}

function lastSeq(w: World): number {
  return w.log.at(-1)?.seq ?? 0;
}

/** The raw state documents (bodies as stored), for a byte comparison across the loss. */
async function rawState(cw: CaseWorld): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {};
  if (cw.state.backend === "local") {
    for (const d of DOCS) {
      try {
        out[d] = Deno.readTextFileSync(`${cw.state.dir}/${cw.state.project}/${d}.json`);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
        out[d] = null;
      }
    }
    return out;
  }
  const c = new pg.Client({ connectionString: cw.state.url });
  await c.connect();
  try {
    const exists = await c.query("SELECT to_regclass('sluice.sluice_documents') IS NOT NULL AS e");
    const rows = exists.rows[0].e
      ? (await c.query("SELECT name, body FROM sluice.sluice_documents WHERE scope = $1", [
        JSON.stringify([cw.state.project, null]),
      ])).rows
      : [];
    for (const d of DOCS) out[d] = rows.find((r) => r.name === d)?.body ?? null;
    return out;
  } finally {
    await c.end();
  }
}

function pendingOf(raw: Record<string, string | null>): string | null {
  if (!raw.control) return null;
  const doc = JSON.parse(raw.control) as {
    document?: { operation_id?: string; opened?: { operation_id?: string } };
  };
  return doc.document?.operation_id ?? doc.document?.opened?.operation_id ?? null;
}

/** A lock held by the other holder; release it once the process it was taken from ended. */
export interface OtherHolder {
  how: "taken" | "held";
  release(): Promise<void>;
}

function otherOwner(project: string): LockOwner {
  return {
    lock_id: crypto.randomUUID(),
    project,
    environment: null,
    actor: OTHER_HOLDER,
    host: hostname(),
    pid: Deno.pid, // alive: the lock is never diagnosed stale
    acquired_at: new Date().toISOString(),
  };
}

/**
 * Take the case's deployment lock for another holder: local, the lock file replaced by one of
 * this (live) process; PostgreSQL, the session holding the advisory lock terminated and the
 * lock taken by another session through sluice's own primitive (before the store's tables
 * exist, the advisory lock alone: "held, metadata not yet written").
 *
 * @example
 * ```ts
 * import { takeOver } from "./lock_loss.ts";
 * // const other = await takeOver(cw); ...; await other.release();
 * ```
 */
export async function takeOver(cw: CaseWorld): Promise<OtherHolder> {
  const owner = otherOwner(cw.state.project);
  if (cw.state.backend === "local") {
    const path = `${cw.state.dir}/${cw.state.project}/lock.json`;
    let how: OtherHolder["how"] = "taken";
    try {
      Deno.removeSync(path);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      how = "held";
    }
    await acquireLockFile(path, owner);
    return { how, release: () => releaseLockFile(path, owner.lock_id) };
  }
  const url = cw.state.url;
  const [a, b] = advisoryKey("sluice", cw.state.project, null);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  let how: OtherHolder["how"];
  try {
    const r = await admin.query(
      `SELECT pg_terminate_backend(pid) AS t FROM pg_locks WHERE locktype = 'advisory'
         AND classid = $1::int::oid AND objid = $2::int::oid AND objsubid = 2 AND granted`,
      [a, b],
    );
    how = r.rows.length > 0 ? "taken" : "held";
  } finally {
    await admin.end();
  }
  const other = new PgPrimitive({ url, project: cw.state.project, environment: null });
  const deadline = Date.now() + 30_000;
  let metadata = true;
  for (;;) {
    try {
      await other.acquireLock(owner);
      break;
    } catch (e) {
      if (e instanceof SluiceError && e.code === "STATE_LOCK_HELD" && Date.now() < deadline) {
        // the terminated session is still ending
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      // no store yet: the advisory lock is this session's, its metadata row cannot be written
      if ((e as { code?: string }).code === "42P01") {
        metadata = false;
        break;
      }
      await other.close();
      throw e;
    }
  }
  return {
    how,
    async release() {
      try {
        if (metadata) await other.releaseLock(owner.lock_id);
      } finally {
        await other.close(); // the session's end releases the advisory lock in any case
      }
    },
  };
}

/** Whether process `pid` is stopped (state `T` in /proc). */
function stopped(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("T");
  } catch {
    return false;
  }
}

async function collect(stream: ReadableStream<Uint8Array>, into: { text: string }) {
  const dec = new TextDecoder();
  for await (const chunk of stream) into.text += dec.decode(chunk, { stream: true });
}

/**
 * Run `sluice args...` over the case's world in a child process that loses its lock at `point`
 * (`<site>:<side>`): see the module documentation. `loss` is null when the process never
 * crossed the point.
 *
 * @example
 * ```ts
 * import { lockLossCli } from "./lock_loss.ts";
 * // const { result, loss } = await lockLossCli(cw, ["-o", "json", "state", "resume", ...], "journal.resume:before");
 * ```
 */
export async function lockLossCli(
  cw: CaseWorld,
  args: string[],
  point: string,
  timeoutMs = 300_000,
): Promise<{ result: FakeCliResult; loss: LockLoss | null }> {
  const started = Date.now();
  const proc = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "-A", "--config", CONFIG, SELF, "--world", cw.worldPath, ...args],
    env: { ...cw.env, NO_COLOR: "1", [FAULT_ENV.point]: "", [LOCK_LOSS_ENV]: point },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = { text: "" };
  const err = { text: "" };
  const reading = Promise.all([collect(proc.stdout, out), collect(proc.stderr, err)]);
  let exited = false;
  const status = proc.status.then((s) => {
    exited = true;
    return s;
  });
  let timedOut = false;
  let loss: LockLoss | null = null;
  let other: OtherHolder | null = null;
  let atLoss: Record<string, string | null> = {};
  try {
    // wait for the stop at the point, or the end
    while (!exited) {
      if (Date.now() - started > timeoutMs) {
        timedOut = true;
        proc.kill("SIGKILL");
        break;
      }
      if (err.text.includes(STOPPED) && stopped(proc.pid)) {
        const w = readWorldFile(cw.worldPath);
        try {
          atLoss = await rawState(cw);
          other = await takeOver(cw);
        } catch (error) {
          proc.kill("SIGKILL"); // never leave the stopped process behind
          await status;
          throw error;
        }
        loss = {
          point,
          how: other.how,
          lossSeq: lastSeq(w),
          siteDoneSeq: null,
          after: [],
          pendingAtLoss: pendingOf(atLoss),
          changed: [],
          named: null,
          given: args[args.indexOf("--operation-id") + 1] ?? null,
        };
        proc.kill("SIGCONT");
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        proc.kill("SIGKILL");
      } catch {
        // already gone
      }
    }, Math.max(1, timeoutMs - (Date.now() - started)));
    let s: Deno.CommandStatus;
    try {
      s = await status;
      await reading;
    } finally {
      clearTimeout(timer);
    }
    if (loss) {
      const done = new RegExp(`^${SITE_DONE} (\\d+)$`, "m").exec(err.text);
      loss.siteDoneSeq = done ? Number(done[1]) : null;
      const bound = loss.siteDoneSeq ?? loss.lossSeq;
      loss.after = providerLog(readWorldFile(cw.worldPath)).filter((m) => m.seq > bound);
      const now = await rawState(cw);
      loss.changed = DOCS.filter((d) => now[d] !== atLoss[d]);
    }
    let json: CliEnvelope | null = null;
    const text = out.text.trim();
    if (text.startsWith("{")) {
      try {
        json = JSON.parse(text) as CliEnvelope;
      } catch {
        json = null;
      }
    }
    if (loss) loss.named = namedOperation(json);
    const signal = s.signal ?? null;
    return {
      result: {
        args,
        fault: null,
        code: signal === "SIGKILL" ? 137 : s.code,
        signal,
        stdout: out.text,
        stderr: err.text,
        json,
        fired: loss ? point : null,
        killedAtFault: false,
        timedOut,
        ms: Date.now() - started,
      },
      loss,
    };
  } finally {
    await other?.release();
  }
}

/** The child: stop at the point's first crossing (and say where the site's own call ended). */
function armChild(point: string, worldPath: string): void {
  const m = /^(.+):(before|after)$/.exec(point);
  if (!m) throw new Error(`${LOCK_LOSS_ENV} must be <site>:<before|after>, not ${point}`);
  const [, site, side] = m;
  let lost = false;
  onCrossing((c) => {
    if (c.site.name !== site || c.occurrence !== 1) return;
    if (!lost && c.side === side) {
      lost = true;
      console.error(`${STOPPED} ${point}`);
      Deno.kill(Deno.pid, "SIGSTOP"); // the parent takes the lock over, then continues us
    } else if (lost && c.side === "after") {
      console.error(`${SITE_DONE} ${lastSeq(readWorldFile(worldPath))}`);
    }
  });
}

if (import.meta.main) {
  armChild(Deno.env.get(LOCK_LOSS_ENV) ?? "", Deno.args[1]);
  Deno.exit(await fakeCliMain(Deno.args));
}
