// The Git reader on temporary repositories: files as they are at a revision, read from objects
// only (working tree and index untouched, nothing run from the repository's configuration),
// symlinks and submodules rejected, a missing ref an error, bounds enforced.
import assert from "node:assert/strict";
import { SluiceError } from "../../errors.ts";
import { gitRepo } from "../../../testing/git_repo.ts";
import { openRevision } from "./git.ts";

const code = (c: string) => (e: unknown) => e instanceof SluiceError && e.code === c;

async function sha256(path: string): Promise<string> {
  const bytes = await Deno.readFile(path);
  const d = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("git: a revision's files come from its objects; working tree and index are untouched", async () => {
  const repo = await gitRepo();
  try {
    await repo.write("proj/sluice.yaml", "v1\n");
    await repo.write("proj/models/m.sql", "SELECT a FROM s WHERE a >= 1\n");
    const c1 = await repo.commit("one");
    await repo.write("proj/sluice.yaml", "v2\n");
    await repo.commit("two");
    await repo.write("proj/sluice.yaml", "v3 uncommitted\n"); // a dirty working tree
    await repo.write("proj/untracked.txt", "u");
    const status = await repo.git("status", "--porcelain");
    const index = await sha256(`${repo.dir}/.git/index`);

    const one = await openRevision(`${repo.dir}/proj`, "HEAD~1");
    assert.equal(one.commit, c1);
    assert.equal(one.prefix, "proj/");
    assert.equal(await one.read("sluice.yaml"), "v1\n");
    assert.equal(await one.read("models/m.sql"), "SELECT a FROM s WHERE a >= 1\n");
    assert.equal(await one.read("models/absent.sql"), null);
    assert.equal(
      await (await openRevision(`${repo.dir}/proj`, "main")).read("sluice.yaml"),
      "v2\n",
    );

    assert.equal(await repo.git("status", "--porcelain"), status);
    assert.equal(await sha256(`${repo.dir}/.git/index`), index);
    assert.equal(await Deno.readTextFile(`${repo.dir}/proj/sluice.yaml`), "v3 uncommitted\n");
  } finally {
    await repo.remove();
  }
});

Deno.test("git: a missing ref, an option-like ref and a non-repository are errors, never an empty project", async () => {
  const repo = await gitRepo();
  try {
    await repo.write("sluice.yaml", "x\n");
    await repo.commit("one");
    await assert.rejects(() => openRevision(repo.dir, "HEAD~5"), code("GIT_REF_NOT_FOUND"));
    await assert.rejects(() => openRevision(repo.dir, "no-such-branch"), code("GIT_REF_NOT_FOUND"));
    await assert.rejects(
      () => openRevision(repo.dir, `--output=${repo.dir}/pwned`),
      code("GIT_REF_NOT_FOUND"),
    );
    await assert.rejects(() => Deno.stat(`${repo.dir}/pwned`), Deno.errors.NotFound);
    const plain = await Deno.makeTempDir({ prefix: "sluice-nogit-" });
    try {
      await assert.rejects(() => openRevision(plain, "HEAD"), code("GIT_NOT_A_REPOSITORY"));
    } finally {
      await Deno.remove(plain, { recursive: true });
    }
  } finally {
    await repo.remove();
  }
});

Deno.test("git: a revision beyond a shallow clone's depth says so and how to fetch it", async () => {
  const origin = await gitRepo();
  const clone = await Deno.makeTempDir({ prefix: "sluice-shallow-" });
  try {
    await origin.write("sluice.yaml", "x\n");
    await origin.commit("one");
    await origin.write("sluice.yaml", "y\n");
    await origin.commit("two");
    const cloned = await new Deno.Command("git", {
      args: ["clone", "-q", "--depth", "1", `file://${origin.dir}`, clone],
      env: { GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
      stderr: "piped",
    }).output();
    assert.equal(cloned.code, 0, new TextDecoder().decode(cloned.stderr));
    // HEAD is there; HEAD~1 is beyond the depth
    assert.equal((await openRevision(clone, "HEAD")).commit.length >= 40, true);
    await assert.rejects(
      () => openRevision(clone, "HEAD~1"),
      (e) =>
        e instanceof SluiceError && e.code === "GIT_REF_NOT_FOUND" &&
        /clone, which is shallow/.test(e.message) && /git fetch --deepen/.test(e.message) &&
        /--unshallow/.test(e.message),
    );
    // a full repository's missing revision says nothing of depth (the case above is not vacuous)
    await assert.rejects(
      () => openRevision(origin.dir, "HEAD~5"),
      (e) => e instanceof SluiceError && !/shallow/.test(e.message),
    );
  } finally {
    await origin.remove();
    await Deno.remove(clone, { recursive: true });
  }
});

Deno.test("git: symlinks (file or directory) and submodules among the inputs are rejected", async () => {
  const repo = await gitRepo();
  try {
    await repo.write("real/m.sql", "SELECT a FROM s\n");
    await repo.write("sluice.yaml", "x\n");
    await Deno.symlink("../real/m.sql", `${repo.dir}/linked.sql`);
    await Deno.symlink("real", `${repo.dir}/models`);
    const sub = await repo.commit("links");
    // a gitlink (submodule entry) named `vendor`
    await repo.git("update-index", "--add", "--cacheinfo", `160000,${sub},vendor`);
    await repo.git("commit", "-q", "-m", "submodule");
    const rev = await openRevision(repo.dir, "HEAD");
    assert.equal(await rev.read("real/m.sql"), "SELECT a FROM s\n");
    await assert.rejects(() => rev.read("linked.sql"), code("PROJECT_SYMLINK_INPUT"));
    await assert.rejects(() => rev.read("models/m.sql"), code("PROJECT_SYMLINK_INPUT"));
    await assert.rejects(() => rev.read("vendor/m.sql"), code("GIT_SUBMODULE_INPUT"));
    await assert.rejects(() => rev.read("vendor"), code("GIT_SUBMODULE_INPUT"));
  } finally {
    await repo.remove();
  }
});

Deno.test("git: nothing configured in the repository runs (fsmonitor, filters, textconv, hooks)", async () => {
  const repo = await gitRepo();
  const marker = `${repo.dir}/../${crypto.randomUUID()}.ran`;
  try {
    const script = `${repo.dir}/.git/evil.sh`;
    await Deno.writeTextFile(script, `#!/bin/sh\ntouch '${marker}'\ncat\n`);
    await Deno.chmod(script, 0o755);
    await repo.write(".gitattributes", "*.sql filter=evil diff=evil\n");
    await repo.write("m.sql", "SELECT a FROM s\n");
    await repo.commit("one");
    for (
      const [k, v] of [
        ["core.fsmonitor", script],
        ["filter.evil.smudge", script],
        ["filter.evil.clean", script],
        ["diff.evil.textconv", script],
        ["diff.external", script],
        ["core.hooksPath", `${repo.dir}/.git`],
      ]
    ) await repo.git("config", k, v);
    for (const hook of ["post-checkout", "pre-commit", "reference-transaction"]) {
      await Deno.copyFile(script, `${repo.dir}/.git/${hook}`);
    }
    const rev = await openRevision(repo.dir, "HEAD");
    assert.equal(await rev.read("m.sql"), "SELECT a FROM s\n");
    await assert.rejects(() => Deno.stat(marker), Deno.errors.NotFound);
  } finally {
    await repo.remove();
    await Deno.remove(marker).catch(() => {});
  }
});

Deno.test("git: a file over the byte bound is refused, not truncated", async () => {
  const repo = await gitRepo();
  try {
    await repo.write("big.sql", "x".repeat(5000));
    await repo.commit("big");
    const rev = await openRevision(repo.dir, "HEAD", { timeoutMs: 10_000, maxBytes: 4096 });
    await assert.rejects(() => rev.read("big.sql"), code("PROJECT_INPUT_TOO_LARGE"));
  } finally {
    await repo.remove();
  }
});

Deno.test("git: Git's own output over the byte bound (a tree too big to list) is refused", async () => {
  const repo = await gitRepo();
  try {
    for (let i = 0; i < 40; i++) await repo.write(`models/m${i}.sql`, `SELECT ${i}`);
    await repo.commit("many");
    await assert.rejects(
      () => openRevision(repo.dir, "HEAD", { timeoutMs: 10_000, maxBytes: 1024 }),
      code("GIT_OUTPUT_TOO_LARGE"),
    );
  } finally {
    await repo.remove();
  }
});
