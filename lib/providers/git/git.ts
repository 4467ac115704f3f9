/**
 * Reading a project's files as they are at a Git revision, from Git's object database only: no
 * checkout, no change to the working tree or the index, no fetch. Git runs with an argument
 * array (never a shell), bounded in time and bytes, with hooks, fsmonitor, external diff,
 * textconv and filters out of play (only plumbing that applies none of them is used:
 * `rev-parse`, `ls-tree`, `cat-file blob`), and without lazy fetching of missing objects.
 *
 * A symlink or a submodule among the files read is rejected (`PROJECT_SYMLINK_INPUT`, the
 * working tree's code for the same input, and `GIT_SUBMODULE_INPUT`), a blob over the bound is
 * `PROJECT_INPUT_TOO_LARGE` (the working tree's code too); a missing ref is `GIT_REF_NOT_FOUND`,
 * never an empty project.
 *
 * @example
 * ```ts
 * import { openRevision } from "./git.ts";
 * const rev = await openRevision("./orders", "HEAD~1");
 * console.log(rev.commit, await rev.read("sluice.yaml"));
 * ```
 * @module
 */
import { SluiceError } from "../../errors.ts";

/** Bounds of every Git call. */
export interface GitLimits {
  /** Per call (default 10 s). */
  timeoutMs: number;
  /** Per call's output (default 16 MiB). */
  maxBytes: number;
}

const DEFAULT_LIMITS: GitLimits = { timeoutMs: 10_000, maxBytes: 16 * 1024 * 1024 };

/** The project directory's files at one commit. */
export interface Revision {
  /** The ref as given. */
  ref: string;
  /** The full commit ID it resolves to. */
  commit: string;
  /** The project directory relative to the repository root (`""` or ending in `/`). */
  prefix: string;
  /**
   * The text of `path` (relative to the project directory, `/`-separated) at that commit, or
   * null when there is no such file. Throws for a symlink or submodule on the way, a
   * non-UTF-8 file or one over the byte bound.
   */
  read(path: string): Promise<string | null>;
}

interface TreeEntry {
  mode: string;
  type: string;
  object: string;
  size: number | null;
}

/** Fixed options of every call: nothing configurable can run a program or fetch. */
const SAFE_CONFIG = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "diff.external=",
  "-c",
  "core.pager=cat",
  "--no-pager",
  "--no-replace-objects",
  "--literal-pathspecs",
];

/** Run git with an argument array in `cwd`; stdout bytes, bounded. Exported for tests. */
export async function runGit(
  cwd: string,
  args: string[],
  limits: GitLimits = DEFAULT_LIMITS,
): Promise<{ code: number; stdout: Uint8Array; stderr: string }> {
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    LANG: "C",
    LC_ALL: "C",
    GIT_TERMINAL_PROMPT: "0",
    GIT_OPTIONAL_LOCKS: "0", // a read never refreshes or writes the index
    GIT_NO_LAZY_FETCH: "1", // a partial clone never fetches a missing object (git >= 2.45)
    GIT_NO_REPLACE_OBJECTS: "1",
    GIT_ATTR_NOSYSTEM: "1",
  };
  const home = Deno.env.get("HOME");
  if (home) env.HOME = home; // safe.directory lives in the user's config
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("git", {
      args: [...SAFE_CONFIG, ...args],
      cwd,
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new SluiceError("ENV_GIT_MISSING", "git is not installed (needed for --base/--head)");
    }
    throw error;
  }
  const stop: { reason: "time" | "bytes" | null } = { reason: null };
  const timer = setTimeout(() => {
    stop.reason = "time";
    try {
      child.kill("SIGKILL");
    } catch { /* already exited */ }
  }, limits.timeoutMs);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const stderr = new Response(child.stderr).text();
  try {
    for await (const chunk of child.stdout) {
      size += chunk.length;
      if (size > limits.maxBytes) {
        stop.reason ??= "bytes";
        try {
          child.kill("SIGKILL");
        } catch { /* already exited */ }
        break;
      }
      chunks.push(chunk);
    }
  } catch {
    // the stream ends abruptly when the process is killed; `stop.reason` says why
  }
  const status = await child.status;
  clearTimeout(timer);
  if (stop.reason === "time") {
    throw new SluiceError(
      "GIT_TIMEOUT",
      `git ${args.join(" ")} did not finish within ${limits.timeoutMs} ms`,
    );
  }
  if (stop.reason === "bytes") {
    throw new SluiceError(
      "GIT_OUTPUT_TOO_LARGE",
      `git ${args.join(" ")} printed more than ${limits.maxBytes} bytes`,
    );
  }
  const stdout = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    stdout.set(c, at);
    at += c.length;
  }
  return { code: status.code, stdout, stderr: await stderr };
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);

/**
 * Open the project directory `dir` as it is at `ref` (a commit, branch, tag or any revision
 * expression Git resolves to a commit).
 * @example
 * ```ts
 * const base = await openRevision(".", "main");
 * ```
 */
export async function openRevision(
  dir: string,
  ref: string,
  limits: GitLimits = DEFAULT_LIMITS,
): Promise<Revision> {
  if (ref.length === 0 || ref.startsWith("-") || /[\0\n]/.test(ref)) {
    throw new SluiceError("GIT_REF_NOT_FOUND", `'${ref}' is not a Git revision`);
  }
  const top = await runGit(dir, ["rev-parse", "--show-prefix"], limits);
  if (top.code !== 0) {
    throw new SluiceError(
      "GIT_NOT_A_REPOSITORY",
      `${dir} is not inside a Git working tree (${top.stderr.trim().split("\n")[0]})`,
    );
  }
  const prefix = text(top.stdout).trim();
  const partial = await runGit(dir, ["config", "--get", "extensions.partialClone"], limits);
  if (partial.code === 0 && text(partial.stdout).trim() !== "" && !(await noLazyFetch(dir))) {
    throw new SluiceError(
      "GIT_PARTIAL_CLONE",
      "this repository is a partial clone and this git (< 2.45) would fetch a missing object on read; sluice never fetches: use a full clone or git >= 2.45",
    );
  }
  const resolved = await runGit(
    dir,
    ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`],
    limits,
  );
  const commit = text(resolved.stdout).trim();
  if (resolved.code !== 0 || !/^[0-9a-f]{40,64}$/.test(commit)) {
    const shallow = await runGit(dir, ["rev-parse", "--is-shallow-repository"], limits);
    const isShallow = shallow.code === 0 && text(shallow.stdout).trim() === "true";
    throw new SluiceError(
      "GIT_REF_NOT_FOUND",
      isShallow
        ? `Git revision '${ref}' does not name a commit in this clone, which is shallow: the ` +
          `revision may be beyond its depth or on a branch it did not fetch (nothing is fetched); ` +
          `fetch it first, e.g. 'git fetch --deepen=50', 'git fetch --unshallow' or ` +
          `'git fetch origin <branch>' (in CI: a checkout with fetch-depth 0)`
        : `Git revision '${ref}' does not name a commit in this repository (nothing is fetched)`,
      { evidence: { ref, shallow: isShallow } },
    );
  }
  const listing = await runGit(
    dir,
    ["ls-tree", "-r", "-z", "-l", "--full-tree", commit, "--", prefix === "" ? "." : prefix],
    limits,
  );
  if (listing.code !== 0) {
    throw new SluiceError(
      "GIT_OBJECT_MISSING",
      `cannot list the tree of ${commit.slice(0, 12)} (${ref}): ${listing.stderr.trim()}`,
    );
  }
  const tree = parseTree(text(listing.stdout));
  return {
    ref,
    commit,
    prefix,
    async read(path: string): Promise<string | null> {
      const full = normalizePath(prefix + path);
      const where = `${ref}:${full}`;
      for (const ancestor of ancestors(full)) {
        const entry = tree.get(ancestor);
        if (!entry) continue;
        rejectSpecial(entry, `${ref}:${ancestor}`, where);
      }
      const entry = tree.get(full);
      if (!entry) return null;
      rejectSpecial(entry, where, where);
      if (entry.type !== "blob") return null; // a directory named like the file
      if (entry.size !== null && entry.size > limits.maxBytes) {
        throw new SluiceError(
          "PROJECT_INPUT_TOO_LARGE",
          `${where} is ${entry.size} bytes, over the ${limits.maxBytes}-byte bound`,
        );
      }
      const blob = await runGit(dir, ["cat-file", "blob", entry.object], limits);
      if (blob.code !== 0) {
        throw new SluiceError(
          "GIT_OBJECT_MISSING",
          `${where}: object ${entry.object} is missing (${blob.stderr.trim()}); nothing is fetched`,
        );
      }
      try {
        return new TextDecoder("utf-8", { fatal: true }).decode(blob.stdout);
      } catch {
        throw new SluiceError("PROJECT_INVALID", `${where} is not UTF-8 text`);
      }
    },
  };
}

function rejectSpecial(entry: TreeEntry, at: string, reading: string): void {
  if (entry.mode === "120000") {
    throw new SluiceError(
      "PROJECT_SYMLINK_INPUT",
      `${at} is a symbolic link; a project input read from Git must be a regular file (reading ${reading})`,
    );
  }
  if (entry.mode === "160000" || entry.type === "commit") {
    throw new SluiceError(
      "GIT_SUBMODULE_INPUT",
      `${at} is a submodule; project inputs inside submodules are not read (reading ${reading})`,
    );
  }
}

/** `ls-tree -r -z -l` output: `<mode> <type> <object> <size>\t<path>\0`. */
function parseTree(out: string): Map<string, TreeEntry> {
  const tree = new Map<string, TreeEntry>();
  for (const record of out.split("\0")) {
    if (record === "") continue;
    const tab = record.indexOf("\t");
    const [mode, type, object, size] = record.slice(0, tab).trim().split(/\s+/);
    tree.set(record.slice(tab + 1), {
      mode,
      type,
      object,
      size: size === "-" ? null : Number(size),
    });
  }
  return tree;
}

function normalizePath(path: string): string {
  const parts: string[] = [];
  for (const p of path.split("/")) {
    if (p === "" || p === ".") continue;
    if (p === "..") parts.pop();
    else parts.push(p);
  }
  return parts.join("/");
}

function ancestors(path: string): string[] {
  const parts = path.split("/");
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join("/"));
}

/** git >= 2.45 honours GIT_NO_LAZY_FETCH. */
async function noLazyFetch(dir: string): Promise<boolean> {
  const v = await runGit(dir, ["--version"]);
  const m = /(\d+)\.(\d+)/.exec(text(v.stdout));
  return m !== null && (Number(m[1]) > 2 || (Number(m[1]) === 2 && Number(m[2]) >= 45));
}
