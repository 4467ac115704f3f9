/**
 * What a Docker daemon restart can leave of a start that was in flight, and the runbook's way of
 * clearing it (docs/runbook.md, `BLOCKED_CANDIDATE_START_REFUSED`), as an operator takes it.
 *
 * When the daemon (and its managed containerd) stops while a container's start is in flight,
 * Docker records the container as never started, but containerd's side of the start may
 * survive: the task in the new containerd's list, a shim the old containerd started (it outlives
 * its containerd, and the next start reuses it because its socket still answers, so every start
 * answers "task … already exists"), the shim's child (`runc init`, created and waiting for a
 * start that never comes), runc's state directory for the container's ID, and containerd's bundle
 * directory for the task (a start refused after the restart creates it, and its shim, killed
 * mid-`runc create`, leaves it: the next start then fails "mkdir …/<id>: file exists"). Each is
 * read here from its own source, and cleared until none is left, within a bound.
 *
 * @module
 */
import type { PrivateDocker } from "./dockerd.ts";
import { sh, shimsOf } from "./dockerd.ts";

/** One container ID's traces in containerd and runc, each read from its own source. */
export interface StartTraces {
  /** `ctr task ls` of the daemon's containerd lists a task for the ID (with its status). */
  task: string | null;
  /** Shims started for the ID, with each child's command line. */
  shims: Array<{ pid: number; children: Array<{ pid: number; cmdline: string }> }>;
  /** runc's state directory for the ID exists (`<exec-root>/runtime-runc/moby/<id>`). */
  runcState: boolean;
  /** containerd's bundle directory for the task exists (`…/io.containerd.runtime.v2.task/moby/<id>`). */
  bundle: boolean;
}

/** One clearing step and what it printed. */
export interface ClearStep {
  step: string;
  code: number;
  out: string;
}

function ctrArgs(d: PrivateDocker): string[] {
  return ["--address", `${d.dir}/x/containerd/containerd.sock`, "--namespace", "moby"];
}

function runcRoot(d: PrivateDocker): string {
  return `${d.dir}/x/runtime-runc/moby`;
}

/** containerd's bundle directory for the ID's task (its runtime v2 state, namespace `moby`). */
export function bundleDir(d: PrivateDocker, id: string): string {
  return `${d.dir}/x/containerd/daemon/io.containerd.runtime.v2.task/moby/${id}`;
}

/** Mount points at or under `dir`, deepest first (from this process's mount table). */
async function mountsUnder(dir: string): Promise<string[]> {
  const table = await Deno.readTextFile("/proc/self/mountinfo");
  // the fifth field is the mount point, with spaces and the like written as octal escapes
  return table.split("\n").map((l) => l.split(" ")[4] ?? "")
    .map((m) => m.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8))))
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

/** Whether the traces hold nothing: the next start of the ID finds nothing of the old one. */
export function cleared(t: StartTraces): boolean {
  return t.task === null && t.shims.length === 0 && !t.runcState && !t.bundle;
}

/**
 * Read the ID's traces: containerd's task list, the shims in `/proc`, runc's state directory and
 * containerd's bundle directory.
 */
export async function startTraces(d: PrivateDocker, id: string): Promise<StartTraces> {
  const listed = await sh("ctr", [...ctrArgs(d), "task", "ls"]);
  const row = listed.out.split("\n").find((l) => l.split(/\s+/)[0] === id);
  const shims = await Promise.all(
    (await shimsOf(d, id)).map(async (s) => ({
      pid: s.pid,
      children: await Promise.all(s.children.map(async (pid) => ({
        pid,
        cmdline: (await Deno.readTextFile(`/proc/${pid}/cmdline`).catch(() => "(gone)"))
          .replaceAll("\0", " ").trim().slice(0, 200),
      }))),
    })),
  );
  const exists = (path: string) => Deno.stat(path).then(() => true, () => false);
  return {
    task: row ? row.trim().replace(/\s+/g, " ") : null,
    shims,
    runcState: await exists(`${runcRoot(d)}/${id}`),
    bundle: await exists(bundleDir(d, id)),
  };
}

/**
 * Clear the traces of a container Docker reports as never started, as the runbook says: a
 * listed task is killed and force-deleted (`ctr task delete --force`); a shim's children, then
 * the shim, are killed; runc's state left after that is deleted (`runc delete --force`); a
 * bundle directory left with no task listed and no shim is unmounted and removed. The
 * traces are read again after every round, until none is left or `timeoutMs` passes (a slow
 * machine takes a while to reap); returns every step and the last traces read.
 */
export async function clearStartTraces(
  d: PrivateDocker,
  id: string,
  timeoutMs = 60_000,
): Promise<{ steps: ClearStep[]; before: StartTraces; after: StartTraces }> {
  const steps: ClearStep[] = [];
  const run = async (step: string, cmd: string, args: string[]) => {
    const r = await sh(cmd, args);
    // what a step printed is kept in the case's history: its start is enough
    steps.push({ step, code: r.code, out: r.out.slice(0, 400) });
  };
  const before = await startTraces(d, id);
  let t = before;
  const end = Date.now() + timeoutMs;
  while (!cleared(t) && Date.now() < end) {
    if (t.task !== null) {
      await run("ctr task kill", "ctr", [...ctrArgs(d), "task", "kill", "--signal", "SIGKILL", id]);
      await run("ctr task delete", "ctr", [...ctrArgs(d), "task", "delete", "--force", id]);
    }
    for (const shim of t.shims) {
      for (const c of shim.children) await run("kill child", "kill", ["-KILL", String(c.pid)]);
      await run("kill shim", "kill", ["-KILL", String(shim.pid)]);
    }
    if (t.runcState && t.shims.length === 0) {
      await run("runc delete", "runc", ["--root", runcRoot(d), "delete", "--force", id]);
    }
    if (t.bundle && t.task === null && t.shims.length === 0) {
      const dir = bundleDir(d, id);
      for (const m of await mountsUnder(dir)) await run("umount", "umount", [m]);
      await run("remove bundle", "rm", ["-rf", "--one-file-system", dir]);
    }
    await new Promise((r) => setTimeout(r, 500));
    t = await startTraces(d, id);
  }
  return { steps, before, after: t };
}
