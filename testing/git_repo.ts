/**
 * Temporary Git repositories for the Git base/head tests: init, write files, commit, with a
 * fixed identity and no global configuration, so the tests never depend on (or touch) the
 * machine's Git setup.
 *
 * @example
 * ```ts
 * import { gitRepo } from "./git_repo.ts";
 * const repo = await gitRepo();
 * await repo.write("a.txt", "x");
 * const c1 = await repo.commit("first");
 * await repo.remove();
 * ```
 * @module
 */

/** A temporary repository. */
export interface GitRepo {
  dir: string;
  /** Run git in the repository; throws with its stderr on a non-zero exit. */
  git(...args: string[]): Promise<string>;
  write(path: string, text: string): Promise<void>;
  /** `git add -A` and commit; returns the commit ID. */
  commit(message: string): Promise<string>;
  remove(): Promise<void>;
}

/** A fresh repository in a temporary directory (or `dir`, which must exist). */
export async function gitRepo(dir?: string): Promise<GitRepo> {
  const root = dir ?? await Deno.makeTempDir({ prefix: "sluice-git-" });
  // a clean environment: a test run from a Git hook or `git bisect run` inherits GIT_DIR (and
  // GIT_INDEX_FILE, GIT_WORK_TREE), with which `git init` here re-initialized the enclosing
  // repository as bare and the commits went to its HEAD
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_AUTHOR_NAME: "sluice test",
    GIT_AUTHOR_EMAIL: "test@sluice.invalid",
    GIT_COMMITTER_NAME: "sluice test",
    GIT_COMMITTER_EMAIL: "test@sluice.invalid",
  };
  const git = async (...args: string[]) => {
    const out = await new Deno.Command("git", {
      args,
      cwd: root,
      env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    if (out.code !== 0) throw new Error(`git ${args.join(" ")}: ${dec.decode(out.stderr)}`);
    return dec.decode(out.stdout);
  };
  await git("init", "-q", "-b", "main");
  return {
    dir: root,
    git,
    async write(path, text) {
      const full = `${root}/${path}`;
      await Deno.mkdir(full.slice(0, full.lastIndexOf("/")), { recursive: true });
      await Deno.writeTextFile(full, text);
    },
    async commit(message) {
      await git("add", "-A");
      await git("commit", "-q", "--no-verify", "-m", message);
      return (await git("rev-parse", "HEAD")).trim();
    },
    remove: () => Deno.remove(root, { recursive: true }),
  };
}
