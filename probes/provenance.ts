/**
 * Where a probe run's evidence comes from: the commit and whether the tree was dirty (a dirty
 * tree is refused unless `--allow-dirty`, and then marked), the versions of Deno, Java, Kafka,
 * Docker and PostgreSQL read from the running services, the host's CPU count and load, the run's
 * start and end, the command line and the case selection (a selection makes the file partial).
 *
 * @example
 * ```ts
 * import { gitState } from "./provenance.ts";
 * const g = await gitState();
 * console.log(g.commit, g.dirty);
 * ```
 * @module
 */
import pg from "pg";
import { dockerCli } from "../harness/docker.ts";
import type { EnvDescriptor } from "../harness/env.ts";
import { dockerApi } from "../harness/witness.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** The provenance block of an evidence file. */
export interface Provenance {
  /** This probe run; every case of the file carries it. */
  run_id: string;
  /** `HEAD` when the run started. */
  commit: string;
  /** Its committer date (verify re-reads it from Git). */
  commit_time: string;
  /** Whether tracked or untracked files differed from the commit (evidence files aside). */
  dirty: boolean;
  /** The first differing paths (`git status --porcelain`). */
  dirty_paths: string[];
  /** The run was told `--allow-dirty`. */
  allow_dirty: boolean;
  started_at: string;
  /** Null while the run is in progress; a file without an end is not evidence. */
  ended_at: string | null;
  argv: string[];
  /** Case filters (`--only`, `--backend`); empty for a complete run. */
  selection: Record<string, string>;
  versions: Record<string, string>;
  host: { os: string; cpus: number; load_start: number[]; load_end: number[] | null };
}

async function run(
  bin: string,
  args: string[],
  cwd = ROOT,
): Promise<{ code: number; out: string }> {
  try {
    const o = await new Deno.Command(bin, { args, cwd, stdout: "piped", stderr: "piped" }).output();
    const dec = new TextDecoder();
    return { code: o.code, out: dec.decode(o.stdout) + dec.decode(o.stderr) };
  } catch (e) {
    return { code: -1, out: e instanceof Error ? e.message : String(e) };
  }
}

/** Evidence files the probes themselves rewrite: not a change of the code under test. */
const OWN_OUTPUT = /^verification\/(?!schema\.json$)[^/]+\.json$/;

/** The commit, its time, and whether the working tree differs from it. */
export async function gitState(): Promise<
  { commit: string; commit_time: string; dirty: boolean; dirty_paths: string[] }
> {
  const head = await run("git", ["rev-parse", "HEAD"]);
  const commit = head.out.trim();
  if (head.code !== 0 || !/^[0-9a-f]{40}$/.test(commit)) {
    throw new Error(`provenance: cannot read the commit (git rev-parse HEAD): ${commit}`);
  }
  const time = await run("git", ["show", "-s", "--format=%cI", commit]);
  const status = await run("git", ["status", "--porcelain=v1", "--untracked-files=all"]);
  if (status.code !== 0) throw new Error(`provenance: git status failed: ${status.out}`);
  // porcelain v1: two status letters, a space, the path (the first letter may be a space)
  const paths = status.out.split("\n").filter((l) => l.length > 3).map((l) => l.slice(3))
    .filter((p) => !OWN_OUTPUT.test(p));
  return {
    commit,
    commit_time: new Date(time.out.trim()).toISOString(),
    dirty: paths.length > 0,
    dirty_paths: paths.slice(0, 50),
  };
}

/** The 1, 5 and 15 minute load averages. */
export function loadAverage(): number[] {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).map(Number);
  } catch {
    return Deno.loadavg();
  }
}

/** Versions read from the running services (the broker's jars and JVM, the daemon, the server). */
export async function serviceVersions(env: EnvDescriptor): Promise<Record<string, string>> {
  const jars = await run(dockerCli(), [
    "exec",
    env.brokerContainerId,
    "sh",
    "-c",
    "ls /opt/kafka/libs | grep '^kafka_'; java -version 2>&1 | head -n 1",
  ]);
  const kafka = /kafka_([0-9.]+)-([0-9.]+)\.jar/.exec(jars.out);
  const java = /version "([^"]+)"/.exec(jars.out);
  const version = await dockerApi().get("/version") as { Version: string; ApiVersion: string };
  let postgres = "unavailable";
  const c = new pg.Client({ connectionString: env.pgUrl });
  try {
    await c.connect();
    postgres = (await c.query("SHOW server_version")).rows[0].server_version;
  } catch (e) {
    postgres = `unavailable: ${e instanceof Error ? e.message : e}`;
  } finally {
    await c.end().catch(() => {});
  }
  const runner = await run("bash", [`${ROOT}runner/build.sh`, "--check"]);
  return {
    kafka: kafka ? kafka[2] : `unknown (${jars.out.slice(0, 200)})`,
    kafka_scala: kafka ? kafka[1] : "unknown",
    java: java ? java[1] : `unknown (${jars.out.slice(0, 200)})`,
    kafka_cluster_id: env.clusterId,
    docker: version.Version,
    docker_api: version.ApiVersion,
    postgresql: postgres,
    deno: Deno.version.deno,
    typescript: Deno.version.typescript,
    runner_image: runner.out.trim(),
  };
}

/** A refused dirty tree. */
export class DirtyTree extends Error {
  constructor(paths: string[]) {
    super(
      `the working tree differs from HEAD (${paths.slice(0, 5).join(", ")}${
        paths.length > 5 ? ", ..." : ""
      }): evidence must come from a commit; commit first, or pass --allow-dirty (the file is then marked dirty)`,
    );
    this.name = "DirtyTree";
  }
}

/** Start a run's provenance; throws {@link DirtyTree} unless the tree is clean or allowed. */
export async function startProvenance(
  env: EnvDescriptor,
  options: { allowDirty: boolean; selection: Record<string, string> },
): Promise<Provenance> {
  const git = await gitState();
  if (git.dirty && !options.allowDirty) throw new DirtyTree(git.dirty_paths);
  return {
    run_id: crypto.randomUUID(),
    ...git,
    allow_dirty: options.allowDirty,
    started_at: new Date().toISOString(),
    ended_at: null,
    argv: [...Deno.args],
    selection: options.selection,
    versions: await serviceVersions(env),
    host: {
      os: `${Deno.build.os}-${Deno.build.arch}`,
      cpus: navigator.hardwareConcurrency,
      load_start: loadAverage(),
      load_end: null,
    },
  };
}

/** Close a run's provenance (end time, load at the end). */
export function finishProvenance(p: Provenance): Provenance {
  return { ...p, ended_at: new Date().toISOString(), host: { ...p.host, load_end: loadAverage() } };
}
