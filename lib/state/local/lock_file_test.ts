// A dead holder's lock is stale, and a live one's is not, under exactly the permissions the
// installed command has (harness/install.ts, docs/cli.md "Install": no --allow-all) as well as
// under bin/sluice's: the diagnosis runs in a child process with those flags.
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { INSTALL_PERMISSIONS } from "../../../harness/install.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;

async function diagnose(lock: string, flags: string[]): Promise<{ stale: boolean }> {
  const script = `import { inspectLockFile } from "${ROOT}lib/state/local/lock_file.ts";\n` +
    `console.log(JSON.stringify(await inspectLockFile(${JSON.stringify(lock)})));`;
  // `deno run` of a file: `deno eval` would grant every permission whatever the flags
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(file, script);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--config", `${ROOT}deno.json`, ...flags, file],
    stdout: "piped",
    stderr: "piped",
  }).output().finally(() => Deno.remove(file));
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

Deno.test("a dead holder's lock is stale under the installed command's permissions", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // a process that has ended (reaped): its pid is free
    const child = new Deno.Command("true").spawn();
    const dead = child.pid;
    await child.status;
    const lock = `${dir}/lock.json`;
    const owner = (pid: number) =>
      JSON.stringify({
        acquired_at: new Date().toISOString(),
        actor: "a",
        environment: null,
        host: hostname(),
        lock_id: crypto.randomUUID(),
        pid,
        project: "orders",
      });
    for (const flags of [INSTALL_PERMISSIONS, ["--allow-all"]]) {
      await Deno.writeTextFile(lock, owner(dead));
      assert.equal((await diagnose(lock, flags)).stale, true, `dead holder, ${flags.join(" ")}`);
      await Deno.writeTextFile(lock, owner(Deno.pid));
      assert.equal((await diagnose(lock, flags)).stale, false, `live holder, ${flags.join(" ")}`);
      // a pid no process has (a process group, when signalled) is never judged dead
      await Deno.writeTextFile(lock, owner(-1));
      assert.equal((await diagnose(lock, flags)).stale, false, `pid -1, ${flags.join(" ")}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
