/**
 * Shared helpers of the benchmarks (`deno task bench`): statistics, tables, the environment
 * description and the atomic write of `bench/results/<name>.json`. Benchmarks never assert on
 * wall-clock time: they measure and report.
 * @module
 */
import { dockerCli } from "../harness/docker.ts";
import { KAFKA_IMAGE, KAFKA_VERSION } from "../harness/images.ts";

/** The repository root (with a trailing slash). */
export const ROOT: string = new URL("..", import.meta.url).pathname;

/** Median of the finite numbers in `xs` (null when there are none). */
export function median(xs: Array<number | null | undefined>): number | null {
  const v = xs.filter((x): x is number => typeof x === "number" && Number.isFinite(x))
    .sort((a, b) => a - b);
  if (v.length === 0) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/** Maximum of the finite numbers in `xs` (null when there are none). */
export function max(xs: Array<number | null | undefined>): number | null {
  const v = xs.filter((x): x is number => typeof x === "number" && Number.isFinite(x));
  return v.length === 0 ? null : Math.max(...v);
}

/** Minimum of the finite numbers in `xs` (null when there are none). */
export function min(xs: Array<number | null | undefined>): number | null {
  const v = xs.filter((x): x is number => typeof x === "number" && Number.isFinite(x));
  return v.length === 0 ? null : Math.min(...v);
}

/** Milliseconds as seconds with 2 decimals ("–" for null). */
export function sec(ms: number | null | undefined): string {
  return typeof ms === "number" && Number.isFinite(ms) ? (ms / 1000).toFixed(2) : "–";
}

/** A number with `d` decimals ("–" for null). */
export function num(x: number | null | undefined, d = 2): string {
  return typeof x === "number" && Number.isFinite(x) ? x.toFixed(d) : "–";
}

/** A plain-text (and Markdown-compatible) table. */
export function table(head: string[], rows: string[][]): string {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    "| " + r.map((c, i) => i === 0 ? c.padEnd(w[i]) : c.padStart(w[i])).join(" | ") + " |";
  return [
    line(head),
    "|" + w.map((n, i) => (i === 0 ? "-".repeat(n + 2) : "-".repeat(n + 1) + ":")).join("|") +
    "|",
    ...rows.map(line),
  ].join("\n");
}

async function cmd(bin: string, args: string[]): Promise<string> {
  try {
    const out = await new Deno.Command(bin, { args, stdout: "piped", stderr: "null" }).output();
    return new TextDecoder().decode(out.stdout).trim();
  } catch {
    return "";
  }
}

/** What the figures were measured on. */
export async function environment(): Promise<Record<string, unknown>> {
  const cpu = (await Deno.readTextFile("/proc/cpuinfo").catch(() => ""))
    .split("\n").find((l) => l.startsWith("model name"))?.split(":")[1]?.trim() ?? null;
  const load = (await Deno.readTextFile("/proc/loadavg").catch(() => "")).trim();
  return {
    measured_at: new Date().toISOString(),
    host: Deno.hostname(),
    os: `${Deno.build.os} ${Deno.osRelease()}`,
    cpu,
    cpus: navigator.hardwareConcurrency,
    memory_bytes: Deno.systemMemoryInfo().total,
    loadavg_at_start: load,
    deno: Deno.version.deno,
    docker_server: await cmd(dockerCli(), ["version", "-f", "{{.Server.Version}}"]),
    kafka_image: KAFKA_IMAGE,
    kafka_version: KAFKA_VERSION,
    git_commit: await cmd("git", ["-C", ROOT, "rev-parse", "HEAD"]),
    // the benchmarks' own outputs are not a change to what is measured: an earlier benchmark's
    // results file must not mark a later one's run as dirty
    git_dirty:
      (await cmd("git", ["-C", ROOT, "status", "--porcelain", "--", ".", ":!bench/results"]))
        .length > 0,
  };
}

/** Write `bench/results/<name>.json` atomically (temp file in the same directory, rename). */
export async function writeResult(name: string, value: unknown): Promise<string> {
  const dir = `${ROOT}bench/results`;
  await Deno.mkdir(dir, { recursive: true });
  const path = `${dir}/${name}.json`;
  const tmp = `${path}.${Deno.pid}.tmp`;
  const text = JSON.stringify(
    value,
    (_k, v) => typeof v === "bigint" ? v.toString() : v,
    2,
  ) + "\n";
  const f = await Deno.open(tmp, { write: true, create: true, truncate: true });
  try {
    await f.write(new TextEncoder().encode(text));
    await f.sync();
  } finally {
    f.close();
  }
  await Deno.rename(tmp, path);
  return path;
}

/** The 1-minute load average (other work on the machine shows up here). */
export function loadavg1(): number | null {
  try {
    return Number(Deno.readTextFileSync("/proc/loadavg").split(" ")[0]);
  } catch {
    return null;
  }
}

/** Sleep `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Parse Docker's RFC 3339 time with nanoseconds to epoch milliseconds (fractional). */
export function dockerTimeMs(rfc3339: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-].*)$/.exec(rfc3339);
  if (!m) return Date.parse(rfc3339);
  const frac = m[2] ? Number(`0${m[2]}`) * 1000 : 0;
  return Date.parse(m[1] + m[3]) + frac;
}

/** Poll `fn` until it returns a value other than undefined; throws after `timeoutMs`. */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 120_000,
  intervalMs = 50,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last}` : ""}`);
}

/** Command-line flags of the form `--name=value` (or `--name value`) and positionals. */
export function flags(args: string[]): { get(name: string, dflt: string): string } {
  const m = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith("--")) continue;
    const eq = a.indexOf("=");
    if (eq > 0) m.set(a.slice(2, eq), a.slice(eq + 1));
    else if (i + 1 < args.length && !args[i + 1].startsWith("--")) m.set(a.slice(2), args[++i]);
    else m.set(a.slice(2), "true");
  }
  return { get: (name, dflt) => m.get(name) ?? dflt };
}
